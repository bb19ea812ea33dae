import type { ChatUsage } from '../chat-format';
import { isObject } from '../translation-checks';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * Cohere's chat `usage` (`{billed_units: {input_tokens, output_tokens}, tokens: {…}}`) as
 * OpenAI's. `billed_units` is what Cohere charges for; `tokens` also counts the prompt
 * template Cohere adds around the messages, which it does not bill. So the billed counts,
 * and the raw ones only when a deployment reports no bill. Null when there is neither:
 * no count is not a zero count.
 */
export function usageFromCohere(usage: unknown): ChatUsage | null {
  if (!isObject(usage)) return null;
  const { billed_units: billed, tokens } = usage;
  const counts = isObject(billed) ? billed : isObject(tokens) ? tokens : null;
  if (!counts) return null;
  const promptTokens = count(counts.input_tokens);
  const completionTokens = count(counts.output_tokens);
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

/**
 * Cohere's `finish_reason` as OpenAI's. COMPLETE and STOP_SEQUENCE are a natural stop;
 * ERROR_TOXIC is a filtered answer; ERROR and TIMEOUT have no OpenAI counterpart and are
 * `stop`, the one value every client handles.
 */
export function finishReasonFromCohere(reason: unknown): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason === 'TOOL_CALL') return 'tool_calls';
  if (reason === 'ERROR_TOXIC') return 'content_filter';
  return 'stop';
}
