import { Injectable } from '@nestjs/common';
import type { NormalizedUsage } from '../../providers/usage';
import localTable from './local-prices.json';
import { rateAt, type ModelPrice } from './model-price';
import { routedProvider } from './catalog-providers';
import { catalogModel, type CatalogModel } from './price-catalog';
import { priceFromFields, type PriceFields } from './price-fields';
import { batchPriceFactor } from './batch-prices';

export type { ModelPrice } from './model-price';
export type PriceSource = 'override' | 'local' | 'catalog';

/** Shape of local-prices.json: what the catalog lacks. */
interface LocalTable {
  providers: Record<string, Record<string, PriceFields>>;
  /** USD per image: provider → model → quality → size. */
  images: Record<string, Record<string, Record<string, Record<string, number>>>>;
  /** USD per million trained tokens: provider → base model. */
  training: Record<string, Record<string, number>>;
  aliases: Record<string, string>;
}

// Dated snapshot names: -2024-08-06 (OpenAI), -20241022 (Anthropic), for the local tables.
const SNAPSHOT_SUFFIX = /-(?:\d{4}-\d{2}-\d{2}|\d{8})$/;
/** Distinct (provider, model) names remembered; a client inventing model names cannot grow memory past this. */
const CATALOG_CACHE_LIMIT = 10_000;

const key = (provider: string, model: string) => `${provider.toLowerCase()}\u0000${model.toLowerCase()}`;

/**
 * Prices a request. Where a price comes from, first hit wins: an operator's override
 * (`/v1/prices`, exact provider and model), `local-prices.json` (what the catalog lacks),
 * the catalog (`@pydantic/genai-prices`, matched as the catalog matches). Each catalog
 * look-up is done once per provider and model and kept in a Map, so the request path
 * never scans the catalog; overrides are held in memory by PriceOverridesService.
 */
@Injectable()
export class PricingService {
  private readonly table = localTable as unknown as LocalTable;
  private readonly local = new Map<string, ModelPrice>();
  private readonly catalog = new Map<string, CatalogModel | null>();
  private overrides = new Map<string, ModelPrice>();

  constructor() {
    for (const [provider, models] of Object.entries(this.table.providers)) {
      for (const [model, fields] of Object.entries(models)) this.local.set(key(provider, model), priceFromFields(fields));
    }
  }

  /** Replaces the overrides (PriceOverridesService calls this after each load). */
  setOverrides(entries: readonly { provider: string; model: string; fields: PriceFields }[]): void {
    this.overrides = new Map(entries.map((e) => [key(e.provider, e.model), priceFromFields(e.fields)]));
  }

  priceFor(provider: string, model: string, at: Date = new Date()): ModelPrice | null {
    return this.pricedBy(provider, model, at)?.price ?? null;
  }

  /** The price and where it comes from; null when nothing prices the model. */
  pricedBy(provider: string, model: string, at: Date = new Date()): { price: ModelPrice; source: PriceSource; catalogModel?: string } | null {
    const override = this.overrides.get(key(provider, model));
    return override ? { price: override, source: 'override' } : this.pricedBelowOverrides(provider, model, at);
  }

  /** The price an override hides (the local table's or the catalog's). */
  pricedBelowOverrides(provider: string, model: string, at: Date = new Date()): { price: ModelPrice; source: PriceSource; catalogModel?: string } | null {
    const k = key(provider, model);
    const local = this.localPrice(provider, model);
    if (local) return { price: local, source: 'local' };
    const found = this.catalogModel(k, provider, model);
    if (found) return { price: found.priceAt(at), source: 'catalog', catalogModel: found.catalogModel };
    // A router's model name that picks a provider (`…:sambanova`) costs that provider's list price.
    const routed = routedProvider(provider, model);
    return routed ? this.pricedBelowOverrides(routed.provider, routed.model, at) : null;
  }

  /** USD for one call, or null when the model has no known price (never a made-up 0). */
  cost(provider: string, model: string, usage: NormalizedUsage): number | null {
    const price = this.priceFor(provider, model);
    if (!price) return null;
    const { promptTokens, cachedTokens, cacheWriteTokens, completionTokens } = usage;
    // Long-context tiers are chosen by the whole prompt, cached tokens included, as the vendors bill.
    const rate = (r: ModelPrice['input']) => rateAt(r, promptTokens);
    // Audio tokens (part of the prompt and completion counts) at their own rates, where the model has them.
    const audio =
      price.audioInput === null
        ? null
        : { input: usage.audioPromptTokens ?? 0, cached: usage.cachedAudioTokens ?? 0, output: usage.audioCompletionTokens ?? 0 };
    const cachedText = cachedTokens - (audio?.cached ?? 0);
    const uncached = Math.max(0, promptTokens - (audio?.input ?? 0) - cachedText - cacheWriteTokens);
    // completionTokens already includes reasoning tokens: apart only where the model has a reasoning rate.
    const reasoning = price.reasoning === null ? 0 : Math.min(usage.reasoningTokens, completionTokens);
    let perMillion =
      uncached * rate(price.input) +
      cachedText * rate(price.cachedInput ?? price.input) +
      cacheWriteTokens * rate(price.cacheWrite ?? price.input) +
      (completionTokens - (audio?.output ?? 0) - reasoning) * rate(price.output) +
      (price.reasoning === null ? 0 : reasoning * rate(price.reasoning));
    if (audio) {
      perMillion +=
        Math.max(0, audio.input - audio.cached) * rate(price.audioInput!) +
        audio.cached * rate(price.cachedAudioInput ?? price.audioInput!) +
        audio.output * rate(price.audioOutput ?? price.output);
    }
    const searches = (usage.webSearches ?? 0) + (usage.searchUnits ?? 0);
    // A rerank billed only by search units is unpriced without a per-search price (never a made-up 0).
    if (usage.searchUnits && price.perSearch === null) return null;
    const perUnit =
      (usage.audioSeconds ?? 0) * (price.perSecond ?? 0) + (usage.characters ?? 0) * (price.perCharacter ?? 0) + searches * (price.perSearch ?? 0);
    // USD rounded to 1e-10 to drop float noise.
    return Math.round((perMillion / 1e6 + perUnit) * 1e10) / 1e10;
  }

  /** USD for one request a provider's Batch API ran: the call's price at the provider's batch discount (batch-prices.ts); null when unpriced. */
  batchCost(provider: string, model: string, usage: NormalizedUsage): number | null {
    const cost = this.cost(provider, model, usage);
    return cost === null ? null : Math.round(cost * batchPriceFactor(provider) * 1e10) / 1e10;
  }

  /**
   * USD for images priced per image: an override's `per_image`, else the local table by quality
   * and size, defaults as OpenAI's (standard, 1024x1024); null when nothing prices them.
   */
  imageCost(provider: string, model: string, images: { count: number; size?: unknown; quality?: unknown }): number | null {
    const perImage = this.overrides.get(key(provider, model))?.perImage;
    if (typeof perImage === 'number') return Math.round(perImage * images.count * 1e10) / 1e10;
    const byQuality = this.localSection(this.table.images, provider)?.[model.toLowerCase()];
    const quality = typeof images.quality === 'string' && images.quality !== 'auto' ? images.quality : 'standard';
    const size = typeof images.size === 'string' && images.size !== 'auto' ? images.size : '1024x1024';
    const each = byQuality?.[quality]?.[size];
    return typeof each === 'number' ? Math.round(each * images.count * 1e10) / 1e10 : null;
  }

  /** USD for a fine-tuning job's training; the base model may carry a snapshot date (gpt-4o-mini-2024-07-18). */
  trainingCost(provider: string, model: string, trainedTokens: number): number | null {
    const byModel = this.localSection(this.table.training, provider);
    if (!byModel) return null;
    const m = model.toLowerCase();
    const perMillion = byModel[m] ?? byModel[m.replace(SNAPSHOT_SUFFIX, '')];
    return typeof perMillion === 'number' ? Math.round(perMillion * trainedTokens * 1e4) / 1e10 : null;
  }

  /**
   * The local table's prices a provider uses (its own or, for an alias, its owner's): the
   * `providers` section, and DALL·E's per-image prices (`per_image` at OpenAI's defaults,
   * standard 1024x1024, the whole table by quality and size alongside).
   */
  localEntries(provider: string): { model: string; price: ModelPrice; imagePrices?: Record<string, Record<string, number>> }[] {
    const models = this.localSection(this.table.providers, provider) ?? {};
    const entries: { model: string; price: ModelPrice; imagePrices?: Record<string, Record<string, number>> }[] = Object.entries(models).map(
      ([model, fields]) => ({
        model,
        price: priceFromFields(fields),
      }),
    );
    for (const [model, byQuality] of Object.entries(this.localSection(this.table.images, provider) ?? {})) {
      entries.push({ model, price: priceFromFields({ per_image: byQuality.standard?.['1024x1024'] ?? null }), imagePrices: byQuality });
    }
    return entries;
  }

  private localPrice(provider: string, model: string): ModelPrice | undefined {
    const p = provider.toLowerCase();
    const owner = this.table.aliases[p] ?? p;
    return this.local.get(key(owner, model)) ?? this.local.get(key(owner, model.replace(SNAPSHOT_SUFFIX, '')));
  }

  private localSection<T>(section: Record<string, T>, provider: string): T | undefined {
    const p = provider.toLowerCase();
    return section[this.table.aliases[p] ?? p];
  }

  private catalogModel(k: string, provider: string, model: string): CatalogModel | null {
    const cached = this.catalog.get(k);
    if (cached !== undefined) return cached;
    const found = catalogModel(provider.toLowerCase(), model);
    if (this.catalog.size >= CATALOG_CACHE_LIMIT) this.catalog.delete(this.catalog.keys().next().value!);
    this.catalog.set(k, found);
    return found;
  }
}
