import { fieldOf } from './translation-checks';
import type { NormalizedUsage } from './usage';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/** The counts of one usage object; a missing total is the sum of its parts. */
function tokenUsage(prompt: unknown, completion: unknown, total: unknown, cached: unknown, reasoning: unknown, cacheWrite: unknown = 0): NormalizedUsage {
  const promptTokens = count(prompt);
  const completionTokens = count(completion);
  return {
    promptTokens,
    completionTokens,
    totalTokens: count(total) || promptTokens + completionTokens,
    cachedTokens: count(cached),
    cacheWriteTokens: count(cacheWrite),
    reasoningTokens: count(reasoning),
  };
}

/**
 * OpenAI's `usage` object of chat completions and embeddings in normalised form
 * (embeddings report only `prompt_tokens` and `total_tokens`: no completion tokens).
 * `prompt_tokens_details.cache_write_tokens` is the gateway's own addition, set when
 * it translated a vendor that bills prompt-cache writes apart (Anthropic), and so is
 * `server_tool_use.web_search_requests` (the searches Anthropic's web search tool ran).
 */
export function usageFromOpenAI(usage: unknown): NormalizedUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const at = (key: string) => fieldOf(usage, key);
  const webSearches = count(fieldOf(at('server_tool_use'), 'web_search_requests'));
  const tokens = tokenUsage(
    at('prompt_tokens'),
    at('completion_tokens'),
    at('total_tokens'),
    fieldOf(at('prompt_tokens_details'), 'cached_tokens'),
    fieldOf(at('completion_tokens_details'), 'reasoning_tokens'),
    fieldOf(at('prompt_tokens_details'), 'cache_write_tokens'),
  );
  return webSearches ? { ...tokens, webSearches } : tokens;
}

/**
 * The `usage` of the Responses API: `input_tokens` (cached ones included) and
 * `output_tokens` (reasoning ones included), with their details.
 */
export function usageFromOpenAIResponses(usage: unknown): NormalizedUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const at = (key: string) => fieldOf(usage, key);
  return tokenUsage(
    at('input_tokens'),
    at('output_tokens'),
    at('total_tokens'),
    fieldOf(at('input_tokens_details'), 'cached_tokens'),
    fieldOf(at('output_tokens_details'), 'reasoning_tokens'),
  );
}

/**
 * A whole Responses API answer's usage: its `usage`, and the web searches it ran, one per
 * `web_search_call` output item (OpenAI bills web search per tool call; the usage object
 * does not count them).
 */
export function usageFromOpenAIResponse(response: unknown): NormalizedUsage | null {
  const usage = usageFromOpenAIResponses(fieldOf(response, 'usage'));
  const output = fieldOf(response, 'output');
  if (!usage || !Array.isArray(output)) return usage;
  const webSearches = output.filter((item: unknown) => fieldOf(item, 'type') === 'web_search_call').length;
  return webSearches ? { ...usage, webSearches } : usage;
}

/**
 * The `usage` of an image generation: GPT Image models count `input_tokens` (the
 * prompt) and `output_tokens` (the images); DALL·E answers carry none, and a usage
 * without token counts (xAI's cost ticks) is no token usage either.
 */
export function usageFromOpenAIImages(usage: unknown): NormalizedUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const at = (key: string) => fieldOf(usage, key);
  if (typeof at('input_tokens') !== 'number' && typeof at('output_tokens') !== 'number') return null;
  return tokenUsage(at('input_tokens'), at('output_tokens'), at('total_tokens'), fieldOf(at('input_tokens_details'), 'cached_tokens'), 0);
}
