import { randomBytes } from 'node:crypto';
import { anthropicErrorType } from '../../../common/errors/anthropic-error';
import type { ChatCompletion } from '../../../providers/chat-format';

/** OpenAI's finish reasons as Anthropic's stop reasons. */
export function stopReasonFromOpenAI(finishReason: unknown): string | null {
  switch (finishReason) {
    case null:
    case undefined:
      return null;
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** A message id in Anthropic's style, kept recognisable from the chat completion it came from. */
export function messageId(completionId: unknown): string {
  const suffix = typeof completionId === 'string' && completionId ? completionId.replace(/^chatcmpl-/, '') : randomBytes(12).toString('hex');
  return `msg_${suffix}`;
}

/**
 * OpenAI's usage as Anthropic's: Anthropic's `input_tokens` leave out the tokens read
 * from and written to the prompt cache, which it counts apart.
 */
export function anthropicUsageFromOpenAI(usage: Record<string, any> | null | undefined): Record<string, number> {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached - written),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
  };
}

/** Tool call arguments as a tool_use input; arguments that are not a JSON object are kept as their text. */
export function toolInput(argumentsText: unknown): Record<string, unknown> {
  try {
    const input = JSON.parse(typeof argumentsText === 'string' && argumentsText ? argumentsText : '{}');
    if (typeof input === 'object' && input !== null && !Array.isArray(input)) return input;
  } catch {
    // fall through: the model wrote something that is not JSON
  }
  return { _raw_arguments: String(argumentsText) };
}

/** A `chat.completion` (first choice) as an Anthropic message. */
export function chatCompletionToMessage(completion: ChatCompletion, model: string): Record<string, any> {
  const choice = completion.choices?.[0] ?? {};
  const content: Record<string, unknown>[] = [];
  const text = choice.message?.content ?? choice.message?.refusal;
  if (typeof text === 'string' && text) content.push({ type: 'text', text });
  for (const call of choice.message?.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.function?.name, input: toolInput(call.function?.arguments) });
  }
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: typeof completion.model === 'string' ? completion.model : model,
    content,
    stop_reason: stopReasonFromOpenAI(choice.finish_reason),
    stop_sequence: null,
    usage: anthropicUsageFromOpenAI(completion.usage),
  };
}

/**
 * A provider's error in OpenAI's shape (or any body) as Anthropic's error body; the status
 * stays, and names the type (OpenAI's types mean other things: a 401 is
 * `invalid_request_error` there, Anthropic SDKs expect `authentication_error`).
 */
export function openAIErrorToAnthropic(body: unknown, status: number): { type: 'error'; error: { type: string; message: string } } {
  const error = (body as Record<string, any> | null)?.error;
  const message =
    typeof error?.message === 'string' ? error.message : typeof error === 'string' ? error : typeof body === 'string' && body ? body : `The provider answered ${status}`;
  return { type: 'error', error: { type: anthropicErrorType('', status), message } };
}
