import type { NormalizedUsage } from './usage';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * OpenAI's `usage` object of chat completions and embeddings in normalised form
 * (embeddings report only `prompt_tokens` and `total_tokens`: no completion tokens).
 */
export function usageFromOpenAI(usage: Record<string, any> | null | undefined): NormalizedUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const promptTokens = count(usage.prompt_tokens);
  const completionTokens = count(usage.completion_tokens);
  return {
    promptTokens,
    completionTokens,
    totalTokens: count(usage.total_tokens) || promptTokens + completionTokens,
    cachedTokens: count(usage.prompt_tokens_details?.cached_tokens),
    cacheWriteTokens: 0,
    reasoningTokens: count(usage.completion_tokens_details?.reasoning_tokens),
  };
}

/**
 * The `usage` of an image generation: GPT Image models count `input_tokens` (the
 * prompt) and `output_tokens` (the images); DALL·E answers carry none, and a usage
 * without token counts (xAI's cost ticks) is no token usage either.
 */
export function usageFromOpenAIImages(usage: Record<string, any> | null | undefined): NormalizedUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  if (typeof usage.input_tokens !== 'number' && typeof usage.output_tokens !== 'number') return null;
  const promptTokens = count(usage.input_tokens);
  const completionTokens = count(usage.output_tokens);
  return {
    promptTokens,
    completionTokens,
    totalTokens: count(usage.total_tokens) || promptTokens + completionTokens,
    cachedTokens: count(usage.input_tokens_details?.cached_tokens),
    cacheWriteTokens: 0,
    reasoningTokens: 0,
  };
}
