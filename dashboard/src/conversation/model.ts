/**
 * A request and its answer as a conversation, whatever API carried it: the shapes the chat
 * view draws. Each API's reader (chat.ts, anthropic.ts, responses.ts, gemini.ts, tool-call.ts) turns its
 * bodies into these; what a reader does not know becomes an `other` part, never an error.
 */
export type Part =
  | { type: 'text'; text: string; refusal?: boolean }
  | { type: 'thinking'; text: string }
  /** `src`: a data: URL shown as a thumbnail; null for a remote image, which the page does not load (`label` holds its URL). */
  | { type: 'image'; src: string | null; label: string }
  | { type: 'tool_call'; id: string | null; name: string; args: string }
  | { type: 'tool_result'; id: string | null; name: string | null; parts: Part[]; isError: boolean }
  /** Audio, files, documents, hosted tool items: named, their JSON one click away. */
  | { type: 'other'; label: string; value: unknown };

export interface Message {
  role: string;
  parts: Part[];
  /** A participant's `name`, when the API carries one. */
  name?: string | null;
}

export interface Conversation {
  /** The API's shape, named for the reader. */
  format: 'chat completions' | 'Anthropic messages' | 'Responses' | 'Gemini' | 'MCP tool call';
  /** The request: instructions, the turns before the answer. */
  messages: Message[];
  /** Tools the request offered the model, by name. */
  tools: string[];
  /** The answer: one message per choice (chat's `n`), empty when there is none. */
  answers: Message[];
  /** Why the model stopped (`stop`, `tool_calls`, `end_turn`, `completed` …). */
  finish: string | null;
}

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
export const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Tool arguments as text: strings as sent (chat sends JSON text), anything else as JSON. */
export const argsText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value ?? {}));

export function imagePart(url: unknown): Part {
  const text = str(url) ?? '';
  // Only inline images are drawn: a remote URL would make the browser fetch it (and the dashboard's CSP forbids it).
  if (/^data:image\/[a-z0-9.+-]+;base64,/i.test(text)) return { type: 'image', src: text, label: 'image' };
  return { type: 'image', src: null, label: text || 'image' };
}

/** Consecutive messages of one role merged (a Responses input lists each tool call as an item of its own). */
export function pushMerged(messages: Message[], message: Message): void {
  const last = messages[messages.length - 1];
  if (last && last.role === message.role && message.role !== 'user' && !last.name && !message.name) last.parts.push(...message.parts);
  else messages.push(message);
}

/** Names of the tools a request offered: function tools by name, hosted ones by type. */
export function toolNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .map((tool) => {
      if (!isObject(tool)) return null;
      const fn = isObject(tool.function) ? tool.function : null;
      return str(fn?.name) ?? str(tool.name) ?? str(tool.server_label) ?? str(tool.type);
    })
    .filter((name): name is string => name !== null);
}
