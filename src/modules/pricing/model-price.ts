/** A price that rises with the prompt's size (Gemini and Claude long-context rates): all tokens at the tier reached. */
export interface TieredRate {
  readonly base: number;
  readonly tiers: readonly { readonly start: number; readonly price: number }[];
}
export type Rate = number | TieredRate;

/**
 * What one model costs. Token rates in USD per million tokens (null where the model has no
 * separate rate, so the base input or output rate applies); per-unit prices in USD per unit.
 */
export interface ModelPrice {
  readonly input: Rate;
  readonly output: Rate;
  readonly cachedInput: Rate | null;
  readonly cacheWrite: Rate | null;
  /** Reasoning tokens (part of the completion), where a model bills them apart. */
  readonly reasoning: Rate | null;
  /** Audio tokens (realtime, gpt-4o-transcribe), where they have their own rates. */
  readonly audioInput: Rate | null;
  readonly cachedAudioInput: Rate | null;
  readonly audioOutput: Rate | null;
  /** USD per generated image (DALL·E style; overrides only, the local table prices by size). */
  readonly perImage: number | null;
  /** USD per second of audio transcribed (whisper). */
  readonly perSecond: number | null;
  /** USD per character of speech input (tts-1). */
  readonly perCharacter: number | null;
  /** USD per web search the model ran. */
  readonly perSearch: number | null;
}

export const NO_UNIT_PRICES = { perImage: null, perSecond: null, perCharacter: null, perSearch: null } as const;

/** The rate for a prompt of `promptTokens` tokens: the highest tier whose start it passed, as the catalog does. */
export function rateAt(rate: Rate, promptTokens: number): number {
  if (typeof rate === 'number') return rate;
  let price = rate.base;
  for (const tier of rate.tiers) if (promptTokens > tier.start) price = tier.price;
  return price;
}
