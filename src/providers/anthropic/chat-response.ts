import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatCompletion, OpenAIErrorBody } from '../chat-format';
import { anthropicUsageAsOpenAI } from './anthropic-usage';

/** Anthropic's stop reasons as OpenAI's finish reasons. */
export function finishReasonFromAnthropic(stopReason: unknown): string | null {
  switch (stopReason) {
    case null:
    case undefined:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn: the model stopped on its own.
      return 'stop';
  }
}

/**
 * An Anthropic message as a `chat.completion`. Text blocks join into the content,
 * `tool_use` blocks become tool calls; thinking blocks have no place in OpenAI's message
 * and are left out (their tokens are still counted in the usage).
 */
export function toChatCompletion(answer: Record<string, any>, model: string): ChatCompletion {
  if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.content)) {
    throw GatewayError.upstreamMalformed('Provider anthropic answered without a content array');
  }
  const text = answer.content.filter((block: any) => block?.type === 'text').map((block: any) => String(block.text ?? ''));
  const toolCalls = answer.content
    .filter((block: any) => block?.type === 'tool_use')
    .map((block: any) => ({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } }));
  const message: Record<string, unknown> = { role: 'assistant', content: text.length ? text.join('') : null, refusal: null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  return {
    id: typeof answer.id === 'string' ? answer.id : `msg_${Date.now().toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof answer.model === 'string' ? answer.model : model,
    choices: [{ index: 0, message, finish_reason: finishReasonFromAnthropic(answer.stop_reason), logprobs: null }],
    usage: anthropicUsageAsOpenAI(answer.usage),
  };
}

/** Anthropic's error body (`{type: "error", error: {type, message}}`) in OpenAI's shape; the status stays. */
export function toOpenAIError(status: number, body: unknown): OpenAIErrorBody {
  const error = (body as Record<string, any> | null)?.error;
  if (typeof error?.message === 'string') {
    return { error: { message: error.message, type: typeof error.type === 'string' ? error.type : 'upstream_error', param: null, code: null } };
  }
  const message = typeof body === 'string' && body ? body : `Provider anthropic answered ${status}`;
  return { error: { message, type: 'upstream_error', param: null, code: null } };
}
