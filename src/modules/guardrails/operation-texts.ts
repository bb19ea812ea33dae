import type { GatewayError } from '../../common/errors/gateway-error';

/**
 * Where the text of each operation's request and answer lives, for the guardrails: a
 * list of slots, each readable and (for redaction) writable in place. Each dialect has its
 * OperationTexts in its own folder (`CHAT_TEXTS` in chat/chat-dialect.ts, …).
 */
export interface TextSlot {
  /** The text as it is now: after a `set`, the new one. */
  readonly text: string;
  set(text: string): void;
}

/** How one operation exposes its texts: the request body's and the answer's (a JSON object, or a stream's assembled one). */
export interface OperationTexts {
  request(body: Record<string, unknown>): TextSlot[];
  answer(answer: unknown): TextSlot[];
  /** A stream's closing frame (chat's `[DONE]`), held back until the output guardrails have run. */
  isFinalFrame?(frame: string): boolean;
  /** The operation's error event for a stream whose answer a guardrail denied. */
  streamError(error: GatewayError): string;
}

export const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A string member of `holder` as a slot. `text` reads the member each time rather than
 * keeping the value found: callers compare it with what it was before the guardrails ran to
 * know whether a redaction changed anything (and so re-encode a JSON answer, forward a
 * realtime event as redacted); a copy would never change, and the text as received would go on.
 */
export function slot(holder: Record<string, any>, key: string): TextSlot[] {
  if (typeof holder[key] !== 'string') return [];
  return [
    {
      get text(): string {
        return holder[key];
      },
      set: (text) => {
        holder[key] = text;
      },
    },
  ];
}

/** A content that is a string or a list of parts whose text parts have `type` in `types`. */
export function contentSlots(holder: Record<string, any>, key: string, types: Set<string>): TextSlot[] {
  const content = holder[key];
  if (typeof content === 'string') return slot(holder, key);
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (isObject(part) && types.has(part.type) ? slot(part, 'text') : []));
}

export const RESPONSES_INPUT_PARTS = new Set(['input_text', 'text']);

/** Realtime: the text of a client's `conversation.item.create` (input_text parts). */
export function realtimeEventSlots(event: Record<string, unknown>): TextSlot[] {
  const item = event.item;
  if (event.type !== 'conversation.item.create' || !isObject(item)) return [];
  return contentSlots(item, 'content', RESPONSES_INPUT_PARTS);
}
