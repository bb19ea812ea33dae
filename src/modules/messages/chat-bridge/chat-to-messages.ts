import { randomBytes } from 'node:crypto';
import { anthropicErrorType } from '../../../common/errors/anthropic-error';
import { type ChatAssistantMessage, type ChatChoice, type ChatCompletion, type ChatUsage, reasoningText } from '../../../providers/chat-format';
import { isObject } from '../../../providers/translation-checks';

/** An id in Anthropic's style for what the provider left unnamed. */
export const generatedId = (prefix: 'msg_' | 'toolu_') => `${prefix}${randomBytes(12).toString('hex')}`;

/** A message id that stays recognisable as the chat completion it came from. */
export function messageId(completionId: unknown): string {
  return typeof completionId === 'string' && completionId ? `msg_${completionId.replace(/^chatcmpl-/, '')}` : generatedId('msg_');
}

/**
 * OpenAI's finish reason as Anthropic's stop reason. Some OpenAI-compatible servers end
 * a turn of tool calls with `stop` (or with none): the calls are what the client must act
 * on, so that is `tool_use` too. A refusal (OpenAI's `refusal` text) is `refusal`.
 * OpenAI does not say which stop sequence ended the text, so `stop` is always `end_turn`.
 */
export function stopReasonFromOpenAI(finishReason: unknown, hasToolCalls = false, refused = false): string {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return hasToolCalls ? 'tool_use' : refused ? 'refusal' : 'end_turn';
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * OpenAI's usage as Anthropic's. OpenAI's `prompt_tokens` include the tokens read from
 * the prompt cache (and, for a translated Anthropic answer, those written to it:
 * `cache_write_tokens`, the gateway's own field); Anthropic counts those apart from
 * `input_tokens`.
 */
export function anthropicUsageFromOpenAI(usage: ChatUsage | null | undefined): Record<string, number> {
  const cacheRead = count(usage?.prompt_tokens_details?.cached_tokens);
  const cacheWrite = count(usage?.prompt_tokens_details?.cache_write_tokens);
  return {
    input_tokens: Math.max(0, count(usage?.prompt_tokens) - cacheRead - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    output_tokens: count(usage?.completion_tokens),
  };
}

/**
 * Tool call arguments as a tool_use `input`, which Anthropic's clients take to be an
 * object. Arguments that are not a JSON object (a model writing broken JSON) are kept,
 * as text, in `{_raw_arguments}`: the client sees what the model wrote without its
 * object handling breaking. No arguments at all are `{}`.
 */
export function toolInput(args: unknown): Record<string, unknown> {
  if (typeof args !== 'string' || !args.trim()) return {};
  try {
    const input = JSON.parse(args);
    if (typeof input === 'object' && input !== null && !Array.isArray(input)) return input;
  } catch {
    // kept as text below
  }
  return { _raw_arguments: args };
}

/**
 * A thinking block for reasoning text of a provider other than Anthropic. Its signature
 * is empty: no one can sign it, and a client that sends it back reaches Anthropic only to
 * have it refused, while the bridge drops it on the way to any other provider.
 */
export const thinkingBlock = (thinking: string) => ({ type: 'thinking', thinking, signature: '' });

/** An Anthropic message (the Messages API's answer), as the bridge writes it. */
export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Record<string, unknown>[];
  stop_reason: string;
  stop_sequence: null;
  usage: Record<string, number>;
}

/**
 * A `chat.completion` as an Anthropic message: with `thinking` (the client asked for
 * it) the provider's reasoning text as a thinking block, then the first choice's text
 * as one text block (its `refusal` text when it refused), then its tool calls as
 * tool_use blocks.
 */
export function chatCompletionToMessage(completion: ChatCompletion, model: string, thinking = false): AnthropicMessage {
  // The provider's answer came unchecked: each field is read with care.
  const choice: Partial<ChatChoice> = completion.choices?.[0] ?? {};
  const answer: Partial<ChatAssistantMessage> = choice.message ?? {};
  const content: Record<string, unknown>[] = [];
  const reasoning = thinking ? reasoningText(answer) : '';
  if (reasoning) content.push(thinkingBlock(reasoning));
  const refused = !answer.content && typeof answer.refusal === 'string' && answer.refusal !== '';
  const text = refused ? answer.refusal : answer.content;
  if (typeof text === 'string' && text) content.push({ type: 'text', text });
  const calls = Array.isArray(answer.tool_calls) ? answer.tool_calls : [];
  for (const call of calls) {
    content.push({ type: 'tool_use', id: call.id || generatedId('toolu_'), name: call.function?.name ?? '', input: toolInput(call.function?.arguments) });
  }
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: typeof completion.model === 'string' && completion.model ? completion.model : model,
    content,
    stop_reason: stopReasonFromOpenAI(choice.finish_reason, calls.length > 0, refused),
    stop_sequence: null,
    usage: anthropicUsageFromOpenAI(completion.usage),
  };
}

/**
 * A provider's error answer (OpenAI's shape, or any body) as Anthropic's error body. The
 * status is kept and names the type: OpenAI's types mean other things (its 401 is an
 * `invalid_request_error`), and Anthropic's SDKs pick the exception by status anyway.
 */
export function openAIErrorToAnthropic(body: unknown, status: number): { type: 'error'; error: { type: string; message: string } } {
  const error = isObject(body) ? body.error : undefined;
  let message = `The provider answered ${status}`;
  if (isObject(error) && typeof error.message === 'string' && error.message) message = error.message;
  else if (typeof error === 'string' && error) message = error;
  else if (typeof body === 'string' && body.trim()) message = body;
  return { type: 'error', error: { type: anthropicErrorType('', status), message } };
}
