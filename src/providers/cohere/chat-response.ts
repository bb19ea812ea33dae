import { randomUUID } from 'node:crypto';
import type { ChatAssistantMessage, ChatCompletion, ChatToolCall, OpenAIErrorBody } from '../chat-format';
import { type Fields, isObject } from '../translation-checks';
import { finishReasonFromCohere, usageFromCohere } from './cohere-usage';

/** The text, and the reasoning text, of a Cohere message's content parts. */
function contentTexts(content: unknown): { text: string; thinking: string } {
  const parts = Array.isArray(content) ? content : [];
  let text = '';
  let thinking = '';
  for (const part of parts.filter(isObject)) {
    if (part.type === 'text' && typeof part.text === 'string') text += part.text;
    else if (part.type === 'thinking' && typeof part.thinking === 'string') thinking += part.thinking;
  }
  return { text, thinking };
}

/** Cohere's tool calls are OpenAI's, arguments a JSON string; an id is made where one is missing. */
function toolCalls(calls: unknown): ChatToolCall[] {
  if (!Array.isArray(calls)) return [];
  return calls.filter(isObject).flatMap((call): ChatToolCall[] => {
    const fn = call.function;
    if (!isObject(fn) || typeof fn.name !== 'string') return [];
    return [
      {
        id: typeof call.id === 'string' ? call.id : `call_${randomUUID().replace(/-/g, '')}`,
        type: 'function',
        function: { name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}) },
      },
    ];
  });
}

/**
 * A v2 chat answer (`{id, finish_reason, message: {role, content, tool_plan, tool_calls}, usage}`)
 * as a `chat.completion`. The tool plan is what the model said before calling tools:
 * it is the message's content when there is no other text (and goes back as the tool
 * plan when the client sends the turn again, see chat-messages.ts).
 */
export function toChatCompletion(answer: unknown, model: string): ChatCompletion {
  const fields: Fields = isObject(answer) ? answer : {};
  const message = isObject(fields.message) ? fields.message : {};
  const { text, thinking } = contentTexts(message.content);
  const calls = toolCalls(message.tool_calls);
  const said = text || (typeof message.tool_plan === 'string' ? message.tool_plan : '');
  const out: ChatAssistantMessage = { role: 'assistant', content: said || (calls.length ? null : ''), refusal: null };
  if (thinking) out.reasoning_content = thinking;
  if (calls.length) out.tool_calls = calls;
  const completion: ChatCompletion = {
    id: typeof fields.id === 'string' ? fields.id : `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: out, logprobs: null, finish_reason: calls.length ? 'tool_calls' : finishReasonFromCohere(fields.finish_reason) }],
  };
  const usage = usageFromCohere(fields.usage);
  if (usage) completion.usage = usage;
  return completion;
}

/** OpenAI error types of the statuses Cohere answers with. */
function errorType(status: number): string {
  if (status === 401 || status === 403) return 'authentication_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/**
 * Cohere's error body (`{id?, message}`) in OpenAI's error shape. A body that is not
 * Cohere's (a proxy's page) gives its text as the message.
 */
export function toOpenAIError(status: number, body: unknown): OpenAIErrorBody {
  const record = typeof body === 'object' && body !== null ? (body as Fields) : null;
  const text = typeof record?.message === 'string' ? record.message : typeof body === 'string' ? body.trim().slice(0, 1000) : '';
  return { error: { message: text || `Provider cohere answered ${status}`, type: errorType(status), param: null, code: null } };
}
