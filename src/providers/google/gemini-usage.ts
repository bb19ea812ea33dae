import type { ChatUsage } from '../chat-format';
import type { GeminiUsageMetadata } from './gemini-types';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * Gemini's `usageMetadata` as OpenAI's `usage`, which the gateway prices
 * (`usageFromOpenAI`). Gemini counts thinking apart from the answer
 * (`thoughtsTokenCount` is not part of `candidatesTokenCount`) but bills it as output,
 * so completion tokens are their sum, as OpenAI counts reasoning tokens.
 * `cachedContentTokenCount` is already part of `promptTokenCount`, as OpenAI's
 * `cached_tokens` is of `prompt_tokens`.
 */
export function usageFromGemini(metadata: GeminiUsageMetadata): ChatUsage {
  const promptTokens = count(metadata.promptTokenCount);
  const reasoningTokens = count(metadata.thoughtsTokenCount);
  const completionTokens = count(metadata.candidatesTokenCount) + reasoningTokens;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: count(metadata.totalTokenCount) || promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: count(metadata.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: reasoningTokens },
  };
}
