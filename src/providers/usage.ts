/**
 * Token usage normalised across providers. Every adapter maps its vendor's
 * usage object into this shape; pricing and logging only ever see this.
 *
 * - promptTokens: all input tokens, cached ones included.
 * - cachedTokens: the part of promptTokens read from the provider's prompt cache.
 * - cacheWriteTokens: input tokens written to the cache (Anthropic bills these apart).
 * - completionTokens: all output tokens, reasoning tokens included.
 * - reasoningTokens: the part of completionTokens spent on hidden reasoning.
 */
export interface NormalizedUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

export function emptyUsage(): NormalizedUsage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}
