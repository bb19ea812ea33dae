import { readToolCall } from '../openai-tool-calls';
import type { ChatAssistantMessage } from '../chat-format';
import { chatMessage, type Fields, fieldOf, invalid, isObject, unsupportedBy } from '../translation-checks';

type CohereMessage = Record<string, unknown>;

/** "Provider cohere does not support <what>", naming the field. */
const unsupported = unsupportedBy('cohere');

/** One part of a content array; Cohere's v2 parts are OpenAI's text and image_url parts. */
function contentPart(value: unknown, param: string, role: string): Record<string, unknown> {
  const part: Fields = isObject(value) ? value : {};
  const type = part.type;
  if (type === 'text') {
    if (typeof part.text !== 'string') throw invalid(`${param}.text must be a string`, `${param}.text`);
    return { type: 'text', text: part.text };
  }
  if (type === 'refusal' && role === 'assistant' && typeof part.refusal === 'string') return { type: 'text', text: part.refusal };
  if (type === 'image_url' && role === 'user') {
    const url = fieldOf(part.image_url, 'url');
    if (typeof url !== 'string') throw invalid(`${param}.image_url.url must be a string`, `${param}.image_url.url`);
    const detail = fieldOf(part.image_url, 'detail');
    return { type: 'image_url', image_url: typeof detail === 'string' ? { url, detail } : { url } };
  }
  throw unsupported(`${param}.type`, `content parts of type ${JSON.stringify(type)} in ${role} messages (${param}.type)`);
}

/** A message's content as Cohere takes it: a string, or parts (text only outside user turns). */
function content(value: unknown, param: string, role: string): string | Record<string, unknown>[] {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw invalid(`${param} must be a string or an array of content parts`, param);
  return value.map((part, j) => contentPart(part, `${param}[${j}]`, role));
}

/** The text of text-only content (tool plans and tool results are text to Cohere). */
function text(value: string | Record<string, unknown>[]): string {
  return typeof value === 'string' ? value : value.map((part) => String(part.text ?? '')).join('');
}

/**
 * OpenAI messages as Cohere v2 chat messages. The roles are the same (developer is
 * Cohere's system); an assistant turn that called tools carries what it said before the
 * calls as Cohere's `tool_plan`, which is where Cohere's answers put it (and so where
 * the gateway's answers took it from); tool results keep their `tool_call_id`.
 */
export function toCohereMessages(messages: unknown): CohereMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  return messages.map((value: unknown, i) => {
    const message = chatMessage(value, i, unsupported);
    const { role } = message;
    const param = `messages[${i}].content`;
    if (role === 'system' || role === 'developer') return { role: 'system', content: content(message.content, param, role) };
    if (role === 'user') return { role: 'user', content: content(message.content, param, role) };
    if (role === 'tool') {
      if (typeof message.tool_call_id !== 'string' || !message.tool_call_id)
        throw invalid(`messages[${i}].tool_call_id must be a string`, `messages[${i}].tool_call_id`);
      return { role: 'tool', tool_call_id: message.tool_call_id, content: text(content(message.content, param, role)) };
    }
    return assistant(message, i);
  });
}

function assistant(message: ChatAssistantMessage, i: number): CohereMessage {
  const said = text(content(message.content, `messages[${i}].content`, 'assistant')) || (typeof message.refusal === 'string' ? message.refusal : '');
  const calls = message.tool_calls;
  if (calls === null || calls === undefined || (Array.isArray(calls) && calls.length === 0)) return { role: 'assistant', content: said };
  if (!Array.isArray(calls)) throw invalid(`messages[${i}].tool_calls must be an array`, `messages[${i}].tool_calls`);
  const toolCalls = calls.map((call: unknown, j) => {
    const param = `messages[${i}].tool_calls[${j}]`;
    const { id, name, args } = readToolCall(call, param, 'cohere');
    if (!id) throw invalid(`${param}.id must be a string`, `${param}.id`);
    return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
  });
  return said ? { role: 'assistant', tool_plan: said, tool_calls: toolCalls } : { role: 'assistant', tool_calls: toolCalls };
}
