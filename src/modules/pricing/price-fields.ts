import { NO_UNIT_PRICES, type ModelPrice } from './model-price';

/**
 * The fields of a price as an operator writes it (`POST /v1/prices`, `local-prices.json`):
 * token rates in USD per million tokens, per-unit prices in USD per unit.
 */
export const TOKEN_FIELDS = ['input', 'output', 'cached_input', 'cache_write', 'reasoning', 'audio_input', 'cached_audio_input', 'audio_output'] as const;
export const UNIT_FIELDS = ['per_image', 'per_second', 'per_character', 'per_search'] as const;
export const PRICE_FIELDS = [...TOKEN_FIELDS, ...UNIT_FIELDS] as const;
export type PriceField = (typeof PRICE_FIELDS)[number];
export type PriceFields = Partial<Record<PriceField, number | null>>;

/** Missing input/output count as 0 (a model priced per unit only); other missing rates fall back as the formula says. */
export function priceFromFields(f: PriceFields): ModelPrice {
  return Object.freeze({
    ...NO_UNIT_PRICES,
    input: f.input ?? 0,
    output: f.output ?? 0,
    cachedInput: f.cached_input ?? null,
    cacheWrite: f.cache_write ?? null,
    reasoning: f.reasoning ?? null,
    audioInput: f.audio_input ?? null,
    cachedAudioInput: f.cached_audio_input ?? null,
    audioOutput: f.audio_output ?? null,
    perImage: f.per_image ?? null,
    perSecond: f.per_second ?? null,
    perCharacter: f.per_character ?? null,
    perSearch: f.per_search ?? null,
  });
}

/** The first field that is not a finite non-negative number (null and absent allowed), or null when all are fine. */
export function invalidPriceField(f: Record<string, unknown>): PriceField | null {
  for (const field of PRICE_FIELDS) {
    const value = f[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return field;
  }
  return null;
}

/** A ModelPrice written back in the API's field names (tiered rates as `{base, tiers}`). */
export function priceToFields(p: ModelPrice): Record<PriceField, unknown> {
  return {
    input: p.input,
    output: p.output,
    cached_input: p.cachedInput,
    cache_write: p.cacheWrite,
    reasoning: p.reasoning,
    audio_input: p.audioInput,
    cached_audio_input: p.cachedAudioInput,
    audio_output: p.audioOutput,
    per_image: p.perImage,
    per_second: p.perSecond,
    per_character: p.perCharacter,
    per_search: p.perSearch,
  };
}
