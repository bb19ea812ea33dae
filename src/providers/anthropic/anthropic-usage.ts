import type { ChatUsage } from '../chat-format';
import { isObject } from '../translation-checks';
import type { NormalizedUsage } from '../usage';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * Anthropic's `usage` in normalised form. Anthropic's `input_tokens` are only the
 * uncached part of the prompt: cache reads and cache writes are counted apart
 * (`cache_read_input_tokens`, `cache_creation_input_tokens`), so the prompt is their sum.
 * Extended thinking is part of `output_tokens` and not reported apart. Searches the
 * web search server tool ran (`server_tool_use.web_search_requests`) are billed per search.
 */
export function usageFromAnthropic(usage: Record<string, unknown> | null | undefined): NormalizedUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const cachedTokens = count(usage.cache_read_input_tokens);
  const cacheWriteTokens = count(usage.cache_creation_input_tokens);
  const promptTokens = count(usage.input_tokens) + cachedTokens + cacheWriteTokens;
  const completionTokens = count(usage.output_tokens);
  const normalised: NormalizedUsage = {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    cachedTokens,
    cacheWriteTokens,
    reasoningTokens: 0,
  };
  const webSearches = count((usage.server_tool_use as Record<string, unknown> | undefined)?.web_search_requests);
  return webSearches ? { ...normalised, webSearches } : normalised;
}

/**
 * Anthropic's `usage` as OpenAI's, for a chat completion translated from a message:
 * `prompt_tokens` counts the cached and cache-written tokens too, and
 * `prompt_tokens_details.cache_write_tokens` (the gateway's own addition) keeps the
 * writes apart, as Anthropic bills them at another price. Web searches go along as
 * Anthropic names them (`server_tool_use.web_search_requests`, another gateway addition,
 * only when there were some), so the log prices them.
 */
export function anthropicUsageAsOpenAI(usage: unknown): ChatUsage {
  const normalised: Partial<NormalizedUsage> & Pick<NormalizedUsage, 'promptTokens' | 'completionTokens' | 'totalTokens'> = (isObject(usage)
    ? usageFromAnthropic(usage)
    : null) ?? {
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  };
  const openai: ChatUsage = {
    prompt_tokens: normalised.promptTokens,
    completion_tokens: normalised.completionTokens,
    total_tokens: normalised.totalTokens,
    prompt_tokens_details: { cached_tokens: normalised.cachedTokens, cache_write_tokens: normalised.cacheWriteTokens },
  };
  if (normalised.webSearches) openai.server_tool_use = { web_search_requests: normalised.webSearches };
  return openai;
}
