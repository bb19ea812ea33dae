import { Inject, Injectable, Optional } from '@nestjs/common';
import type { NormalizedUsage } from '../../providers/usage';
import defaultTable from './prices.json';

/** Prices in USD per million tokens; null where the vendor has no separate rate. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  readonly cachedInput: number | null;
  readonly cacheWrite: number | null;
  /** Audio tokens of realtime models, where they have their own rates. */
  readonly audioInput: number | null;
  readonly cachedAudioInput: number | null;
  readonly audioOutput: number | null;
}

/** Shape of prices.json. */
export interface PriceTable {
  _meta?: Record<string, unknown>;
  providers: Record<string, Record<string, PriceEntry>>;
  /** USD per million trained tokens: provider → base model. */
  training?: Record<string, Record<string, number> | string>;
  /** USD per image: provider → model → quality → size. */
  images?: Record<string, Record<string, Record<string, Record<string, number>>> | string>;
  aliases?: Record<string, string>;
}

export interface PriceEntry {
  input: number;
  output: number;
  cached_input?: number | null;
  cache_write?: number | null;
  audio_input?: number | null;
  cached_audio_input?: number | null;
  audio_output?: number | null;
}

/** Inject a different table (tests, or a deployment with negotiated prices). */
export const PRICE_TABLE = Symbol('PRICE_TABLE');

const REQUIRED_FIELDS = ['input', 'output'] as const;
const OPTIONAL_FIELDS = ['cached_input', 'cache_write', 'audio_input', 'cached_audio_input', 'audio_output'] as const;
const KNOWN_FIELDS = new Set<string>([...REQUIRED_FIELDS, ...OPTIONAL_FIELDS]);

// Dated or moving snapshot names: -2024-08-06 (OpenAI), -20241022 (Anthropic),
// -0125 / -2411 (older OpenAI, Mistral, Groq), -latest.
const SNAPSHOT_SUFFIX = /-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$/;
// OpenRouter spells versions with dots (claude-sonnet-4.5); the table uses dashes.
const DASHED_VERSION = /(\d)-(\d)(?!\d)/g;
// Gateways whose model ids carry the upstream vendor: "openai/gpt-4o".
const VENDOR_PREFIXED = new Set(['openrouter']);

@Injectable()
export class PricingService {
  private readonly tables = new Map<string, Map<string, ModelPrice>>();
  private readonly aliases = new Map<string, string>();
  private readonly imageTable: NonNullable<PriceTable['images']>;
  private readonly trainingTable: NonNullable<PriceTable['training']>;

  constructor(@Optional() @Inject(PRICE_TABLE) table: PriceTable = defaultTable as PriceTable) {
    validate(table);
    this.imageTable = table.images ?? {};
    this.trainingTable = table.training ?? {};
    for (const [provider, models] of Object.entries(table.providers)) {
      this.tables.set(provider.toLowerCase(), buildIndex(provider, models));
    }
    for (const [alias, target] of Object.entries(table.aliases ?? {})) {
      this.aliases.set(alias.toLowerCase(), target.toLowerCase());
    }
  }

  /**
   * Matching, case-insensitive, first hit wins:
   *  1. the model exactly (table keys also answer to their -latest-less and dotted spellings);
   *  2. the model without its snapshot suffix (gpt-4o-2024-08-06 -> gpt-4o);
   *  3. the longest table key that is a prefix of the model followed by "-"
   *     (gpt-4o-mini-search-preview -> gpt-4o-mini, never gpt-4o; gpt-4.1 never matches gpt-4).
   * On OpenRouter, "vendor/model" is looked up under that vendor's table.
   */
  priceFor(provider: string, model: string): ModelPrice | null {
    const p = provider.toLowerCase();
    const m = model.toLowerCase();
    const direct = this.lookup(p, m);
    if (direct || !VENDOR_PREFIXED.has(p)) return direct;
    const slash = m.indexOf('/');
    return slash > 0 ? this.lookup(m.slice(0, slash), m.slice(slash + 1)) : null;
  }

  /** USD for one call, or null when the model has no known price (never a made-up 0). */
  cost(provider: string, model: string, usage: NormalizedUsage): number | null {
    const price = this.priceFor(provider, model);
    if (!price) return null;
    const { promptTokens, cachedTokens, cacheWriteTokens, completionTokens } = usage;
    // Audio tokens (part of the prompt and completion counts) at their own rates, where the model has them.
    const audio = price.audioInput === null ? null : { input: usage.audioPromptTokens ?? 0, cached: usage.cachedAudioTokens ?? 0, output: usage.audioCompletionTokens ?? 0 };
    const cachedText = cachedTokens - (audio?.cached ?? 0);
    const uncached = Math.max(0, promptTokens - (audio?.input ?? 0) - cachedText - cacheWriteTokens);
    // completionTokens already includes reasoning tokens, so those are not added again.
    let perMillion =
      uncached * price.input +
      cachedText * (price.cachedInput ?? price.input) +
      cacheWriteTokens * (price.cacheWrite ?? price.input) +
      (completionTokens - (audio?.output ?? 0)) * price.output;
    if (audio) {
      perMillion +=
        Math.max(0, audio.input - audio.cached) * price.audioInput! +
        audio.cached * (price.cachedAudioInput ?? price.audioInput!) +
        audio.output * (price.audioOutput ?? price.output);
    }
    // USD = perMillion / 1e6, rounded to 1e-10 to drop float noise.
    return Math.round(perMillion * 1e4) / 1e10;
  }

  /**
   * USD for images priced per image (DALL·E) by quality and size, defaults as OpenAI's
   * (standard, 1024x1024); null when the table has no such price.
   */
  imageCost(provider: string, model: string, images: { count: number; size?: unknown; quality?: unknown }): number | null {
    const p = provider.toLowerCase();
    const byModel = this.imageTable[this.aliases.get(p) ?? p];
    const byQuality = typeof byModel === 'object' ? byModel[model.toLowerCase()] : undefined;
    const quality = typeof images.quality === 'string' && images.quality !== 'auto' ? images.quality : 'standard';
    const size = typeof images.size === 'string' && images.size !== 'auto' ? images.size : '1024x1024';
    const each = byQuality?.[quality]?.[size];
    return typeof each === 'number' ? Math.round(each * images.count * 1e10) / 1e10 : null;
  }

  /** USD for a fine-tuning job's training; the base model may carry a snapshot date (gpt-4o-mini-2024-07-18). */
  trainingCost(provider: string, model: string, trainedTokens: number): number | null {
    const p = provider.toLowerCase();
    const byModel = this.trainingTable[this.aliases.get(p) ?? p];
    if (typeof byModel !== 'object') return null;
    const m = model.toLowerCase();
    const perMillion = byModel[m] ?? byModel[m.replace(SNAPSHOT_SUFFIX, '')];
    return typeof perMillion === 'number' ? Math.round(perMillion * trainedTokens * 1e4) / 1e10 : null;
  }

  private lookup(provider: string, model: string): ModelPrice | null {
    const models = this.tables.get(this.aliases.get(provider) ?? provider);
    if (!models) return null;
    const exact = models.get(model);
    if (exact) return exact;
    const base = model.replace(SNAPSHOT_SUFFIX, '');
    const snapshot = base === model ? undefined : models.get(base);
    if (snapshot) return snapshot;
    // Walk dashes right to left so the longest matching key wins without sorting.
    for (let i = model.lastIndexOf('-'); i > 0; i = model.lastIndexOf('-', i - 1)) {
      const hit = models.get(model.slice(0, i));
      if (hit) return hit;
    }
    return null;
  }
}

function buildIndex(provider: string, models: Record<string, PriceEntry>): Map<string, ModelPrice> {
  const index = new Map<string, ModelPrice>();
  const entries = Object.entries(models).map(([key, e]) => [key.toLowerCase(), toPrice(e)] as const);
  for (const [key, price] of entries) {
    if (index.has(key)) throw new Error(`Price table: providers.${provider} lists "${key}" twice (keys are case-insensitive)`);
    index.set(key, price);
  }
  // Derived spellings never override a key the table lists explicitly.
  for (const [key, price] of entries) {
    const base = key.replace(SNAPSHOT_SUFFIX, '');
    for (const name of [base, key.replace(DASHED_VERSION, '$1.$2'), base.replace(DASHED_VERSION, '$1.$2')]) {
      if (!index.has(name)) index.set(name, price);
    }
  }
  return index;
}

function toPrice(e: PriceEntry): ModelPrice {
  // Frozen because one object is shared by every caller.
  return Object.freeze({
    input: e.input,
    output: e.output,
    cachedInput: e.cached_input ?? null,
    cacheWrite: e.cache_write ?? null,
    audioInput: e.audio_input ?? null,
    cachedAudioInput: e.cached_audio_input ?? null,
    audioOutput: e.audio_output ?? null,
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function validate(table: PriceTable): void {
  if (!isObject(table) || !isObject(table.providers)) throw new Error('Price table: "providers" must be an object');
  for (const [provider, models] of Object.entries(table.providers)) {
    if (!isObject(models)) throw new Error(`Price table: providers.${provider} must be an object`);
    for (const [model, entry] of Object.entries(models)) {
      const where = `providers.${provider}["${model}"]`;
      if (!isObject(entry)) throw new Error(`Price table: ${where} must be an object`);
      for (const field of Object.keys(entry)) {
        // A typo such as "cache_input" would otherwise silently bill cached tokens at full price.
        if (!KNOWN_FIELDS.has(field)) throw new Error(`Price table: ${where} has unknown field "${field}"`);
      }
      for (const field of REQUIRED_FIELDS) checkPrice(`${where}.${field}`, entry[field]);
      for (const field of OPTIONAL_FIELDS) if (entry[field] != null) checkPrice(`${where}.${field}`, entry[field]);
    }
  }
  const providers = new Set(Object.keys(table.providers).map((p) => p.toLowerCase()));
  for (const [alias, target] of Object.entries(table.aliases ?? {})) {
    if (typeof target !== 'string' || !providers.has(target.toLowerCase())) {
      throw new Error(`Price table: alias "${alias}" points to unknown provider ${JSON.stringify(target)}`);
    }
    if (providers.has(alias.toLowerCase())) throw new Error(`Price table: "${alias}" is both a provider and an alias`);
  }
}

function checkPrice(where: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new Error(`Price table: ${where} must be a finite non-negative number, got ${typeof value === 'number' ? value : JSON.stringify(value)}`);
  }
}
