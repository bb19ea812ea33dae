import type { NormalizedUsage } from '../../providers/usage';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/** OpenAI's `usage` object (chat completions) in normalised form. */
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
