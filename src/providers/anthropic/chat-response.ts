import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatAssistantMessage, ChatCompletion, ChatToolCall, OpenAIErrorBody } from '../chat-format';
import { isObject } from '../translation-checks';
import { anthropicUsageAsOpenAI } from './anthropic-usage';
import { finishReasonFromAnthropic } from './finish-reason';

/**
 * An Anthropic message as a `chat.completion`. Text blocks join into the content,
 * `tool_use` blocks become tool calls, and the text of thinking blocks becomes
 * `reasoning_content` (the field OpenAI-compatible reasoning providers use; the signature
 * stays behind, and redacted thinking has no text to give).
 */
export function toChatCompletion(answer: unknown, model: string): ChatCompletion {
  if (!isObject(answer) || !Array.isArray(answer.content)) {
    throw GatewayError.upstreamMalformed('Provider anthropic answered without a content array');
  }
  const blocks = answer.content.filter(isObject);
  const text = blocks.filter((block) => block.type === 'text' && typeof block.text === 'string').map((block) => block.text as string);
  // Anthropic names each tool_use block's id and name; they pass on as sent.
  const toolCalls = blocks
    .filter((block) => block.type === 'tool_use')
    .map((block): ChatToolCall => ({
      id: block.id as string,
      type: 'function',
      function: { name: block.name as string, arguments: JSON.stringify(block.input ?? {}) },
    }));
  const message: ChatAssistantMessage = { role: 'assistant', content: text.length ? text.join('') : null, refusal: null };
  const reasoning = blocks.filter((block) => block?.type === 'thinking' && typeof block.thinking === 'string').map((block) => block.thinking as string);
  if (reasoning.length) message.reasoning_content = reasoning.join('\n\n');
  if (toolCalls.length) message.tool_calls = toolCalls;
  return {
    id: typeof answer.id === 'string' ? answer.id : `msg_${Date.now().toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof answer.model === 'string' ? answer.model : model,
    choices: [{ index: 0, message, finish_reason: finishReasonFromAnthropic(answer.stop_reason) ?? 'stop', logprobs: null }],
    usage: anthropicUsageAsOpenAI(answer.usage),
  };
}

/**
 * Anthropic's error body (`{type: "error", error: {type, message}}`) in OpenAI's shape,
 * its type kept (`overloaded_error`, `rate_limit_error`...: OpenAI clients read the
 * status, the type tells people what happened). A body that is not Anthropic's (a
 * proxy's page) gives its text as the message.
 */
export function toOpenAIError(status: number, body: unknown): OpenAIErrorBody {
  const record = isObject(body) ? body : null;
  const error = record?.error;
  if (isObject(error) && typeof error.message === 'string') {
    return { error: { message: error.message, type: typeof error.type === 'string' ? error.type : 'upstream_error', param: null, code: null } };
  }
  const text = typeof body === 'string' ? body.trim() : typeof record?.message === 'string' ? record.message : '';
  return { error: { message: text ? text.slice(0, 1000) : `Provider anthropic answered ${status}`, type: 'upstream_error', param: null, code: null } };
}
