import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { calcPrice, findProvider, type ConditionalPrice, type ModelInfo, type ModelPrice as CatalogPrice } from '@pydantic/genai-prices';
import { CATALOG_PROVIDER_IDS } from './catalog-providers';
import { NO_UNIT_PRICES, type ModelPrice, type Rate } from './model-price';

/**
 * The maintained price catalog, `@pydantic/genai-prices`: its data snapshot ships inside the
 * package and is all we read. The package can also fetch newer data at run time, but only
 * when `updatePrices()` is called, which the gateway never does (it must work offline;
 * prices move with the package version, and operators patch between releases with overrides).
 */
export const CATALOG_PACKAGE: { readonly name: string; readonly version: string } = readPackage();

function readPackage(): { name: string; version: string } {
  // The package's exports map hides package.json, so it is read next to the resolved entry point.
  const file = join(dirname(require.resolve('@pydantic/genai-prices')), '..', 'package.json');
  const { name, version } = JSON.parse(readFileSync(file, 'utf8')) as { name: string; version: string };
  return { name, version };
}

/** A catalog model: its id there, and its price at a moment (some change by date or time of day). */
export interface CatalogModel {
  readonly catalogProvider: string;
  readonly catalogModel: string;
  priceAt(at: Date): ModelPrice;
}

/** The catalog's model for a gateway provider and model name, matched as the catalog matches (dated snapshots, Bedrock and Vertex ids, fallbacks); null when unknown. */
export function catalogModel(provider: string, model: string): CatalogModel | null {
  const catalogProvider = CATALOG_PROVIDER_IDS[provider];
  if (!catalogProvider) return null;
  let found: ReturnType<typeof calcPrice>;
  try {
    // Priced with no usage only to run the catalog's own matching; the result's model carries the prices.
    found = calcPrice({}, model, { providerId: catalogProvider });
  } catch {
    return null;
  }
  return found ? toCatalogModel(found.provider.id, found.model) : null;
}

/** Every model the catalog prices for a gateway provider (its own list, not its fallbacks'). */
export function catalogModels(provider: string): CatalogModel[] {
  const catalogProvider = CATALOG_PROVIDER_IDS[provider];
  const found = catalogProvider ? findProvider({ providerId: catalogProvider }) : undefined;
  return found ? found.models.map((model) => toCatalogModel(found.id, model)) : [];
}

function toCatalogModel(catalogProvider: string, info: ModelInfo): CatalogModel {
  const catalogModel = info.id;
  if (!Array.isArray(info.prices)) {
    const price = fromCatalog(info.prices);
    return { catalogProvider, catalogModel, priceAt: () => price };
  }
  const variants = info.prices.map((variant) => ({ constraint: variant.constraint, price: fromCatalog(variant.prices) }));
  return { catalogProvider, catalogModel, priceAt: (at) => variants[variantAt(variants, at)].price };
}

/** As the catalog chooses: the last variant whose constraint holds (a start date passed, inside a daily UTC window), else the first. */
function variantAt(variants: readonly { constraint?: ConditionalPrice['constraint'] }[], at: Date): number {
  for (let i = variants.length - 1; i >= 0; i--) {
    const constraint = variants[i].constraint;
    if (!constraint) return i;
    if (constraint.type === 'start_date' && at >= new Date(constraint.start_date)) return i;
    if (constraint.type === 'time_of_date') {
      const now = at.getUTCHours() * 3600 + at.getUTCMinutes() * 60 + at.getUTCSeconds();
      const start = secondsOfDay(constraint.start_time);
      const end = secondsOfDay(constraint.end_time);
      if (end < start ? now >= start || now < end : now >= start && now < end) return i;
    }
  }
  return 0;
}

/** "16:30:00Z" or "00:30:00+08:00" → seconds after midnight UTC. */
function secondsOfDay(time: string): number {
  const m = /^(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|([+-])(\d{2}):(\d{2}))$/.exec(time);
  if (!m) return 0;
  const offset = m[4] === 'Z' ? 0 : (m[5] === '+' ? 1 : -1) * (Number(m[6]) * 3600 + Number(m[7]) * 60);
  return (Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) - offset + 86_400) % 86_400;
}

function fromCatalog(p: CatalogPrice): ModelPrice {
  const rate = (key: string): Rate | null => {
    const value = p[key];
    return typeof value === 'number' || (value && typeof value === 'object') ? value : null;
  };
  const number = (key: string): number | null => (typeof p[key] === 'number' ? p[key] : null);
  const perHour = number('audio_hours') ?? number('input_audio_hours');
  const perThousandSearches = number('web_searches_kcount');
  // Frozen because one object is shared by every caller.
  return Object.freeze({
    ...NO_UNIT_PRICES,
    // A model priced only per unit (whisper by the hour) has no token rate: its tokens cost nothing.
    input: rate('input_mtok') ?? 0,
    output: rate('output_mtok') ?? 0,
    cachedInput: rate('cache_read_mtok'),
    cacheWrite: rate('cache_write_mtok'),
    reasoning: rate('output_reasoning_mtok'),
    audioInput: rate('input_audio_mtok'),
    cachedAudioInput: rate('cache_audio_read_mtok'),
    audioOutput: rate('output_audio_mtok'),
    perSecond: perHour === null ? null : perHour / 3600,
    perSearch: perThousandSearches === null ? null : perThousandSearches / 1000,
  });
}
