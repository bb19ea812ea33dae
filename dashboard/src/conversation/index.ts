import type { LogRow } from '../api';
import { readAnthropic } from './anthropic';
import { readChat } from './chat';
import { readGemini } from './gemini';
import { Conversation, isObject, Message, Part } from './model';
import { readResponses } from './responses';
import { readToolCall } from './tool-call';

export type { Conversation, Message, Part } from './model';

const BY_OPERATION: Record<string, (request: unknown, response: unknown) => Conversation | null> = {
  'chat.completions': readChat,
  // A prompt's row holds the call's variables and the chat request rendered from the template (`request`).
  'prompts.completions': (request, response) => readChat(isObject(request) && isObject(request.request) ? request.request : request, response),
  messages: readAnthropic,
  responses: readResponses,
  'mcp.tools.call': readToolCall,
  'gemini.generate_content': readGemini,
};

/**
 * A log row's bodies as a conversation, or null when they are of no shape the chat view
 * knows (embeddings, images, a body not stored): the raw JSON is then the only view. A
 * reader that throws on a strange body counts as not knowing it.
 */
export function readConversation(log: Pick<LogRow, 'operation' | 'request_body' | 'response_body'>): Conversation | null {
  const read = BY_OPERATION[log.operation];
  if (!read) return null;
  try {
    const conversation = read(log.request_body, log.response_body);
    if (!conversation || (conversation.messages.length === 0 && conversation.answers.length === 0)) return null;
    nameToolResults([...conversation.messages, ...conversation.answers]);
    return conversation;
  } catch {
    return null;
  }
}

/** A result names the tool whose call it answers (chat and Responses results carry only the call's id). */
function nameToolResults(messages: Message[]): void {
  const names = new Map<string, string>();
  const visit = (part: Part) => {
    if (part.type === 'tool_call' && part.id) names.set(part.id, part.name);
    if (part.type === 'tool_result') {
      if (!part.name && part.id) part.name = names.get(part.id) ?? null;
      part.parts.forEach(visit);
    }
  };
  for (const message of messages) message.parts.forEach(visit);
}
