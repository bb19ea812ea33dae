import type { GatewayError } from '../../common/errors/gateway-error';
import { sseFrame } from '../../common/http/sse-frame';

/**
 * Where the text of each operation's request and answer lives, for the guardrails: a
 * list of slots, each readable and (for redaction) writable in place.
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

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A string member of `holder` as a slot. `text` reads the member each time rather than
 * keeping the value found: callers compare it with what it was before the guardrails ran to
 * know whether a redaction changed anything (and so re-encode a JSON answer, forward a
 * realtime event as redacted); a copy would never change, and the text as received would go on.
 */
function slot(holder: Record<string, any>, key: string): TextSlot[] {
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
function contentSlots(holder: Record<string, any>, key: string, types: Set<string>): TextSlot[] {
  const content = holder[key];
  if (typeof content === 'string') return slot(holder, key);
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (isObject(part) && types.has(part.type) ? slot(part, 'text') : []));
}

const CHAT_PARTS = new Set(['text']);
const RESPONSES_INPUT_PARTS = new Set(['input_text', 'text']);
const RESPONSES_OUTPUT_PARTS = new Set(['output_text']);
const ANTHROPIC_PARTS = new Set(['text']);

/** Chat completions: every message's text; the answer's choices. */
export const CHAT_TEXTS: OperationTexts = {
  request: (body) => (Array.isArray(body.messages) ? body.messages.filter(isObject).flatMap((message) => contentSlots(message, 'content', CHAT_PARTS)) : []),
  answer: (answer) =>
    isObject(answer) && Array.isArray(answer.choices)
      ? answer.choices.filter(isObject).flatMap((choice) => (isObject(choice.message) ? contentSlots(choice.message, 'content', CHAT_PARTS) : []))
      : [],
  isFinalFrame: (frame) => frame === sseFrame('[DONE]'),
  streamError: (error) => sseFrame(JSON.stringify({ error: { message: error.message, type: error.type, param: null, code: error.code, ...error.details } })),
};

/** Responses: `instructions` and `input` (a string or items with content); the answer's output text. */
export const RESPONSES_TEXTS: OperationTexts = {
  request: (body) => [
    ...slot(body, 'instructions'),
    ...(typeof body.input === 'string'
      ? slot(body, 'input')
      : Array.isArray(body.input)
        ? body.input.filter(isObject).flatMap((item) => contentSlots(item, 'content', RESPONSES_INPUT_PARTS))
        : []),
  ],
  answer: (answer) =>
    isObject(answer) && Array.isArray(answer.output)
      ? answer.output.filter(isObject).flatMap((item) => contentSlots(item, 'content', RESPONSES_OUTPUT_PARTS))
      : [],
  streamError: (error) => sseFrame(JSON.stringify({ type: 'error', code: error.code, message: error.message, param: null, ...error.details }), 'error'),
};

/** Anthropic Messages: `system` and every message's text blocks; the answer's text blocks. */
export const MESSAGES_TEXTS: OperationTexts = {
  request: (body) => [
    ...contentSlots(body, 'system', ANTHROPIC_PARTS),
    ...(Array.isArray(body.messages) ? body.messages.filter(isObject).flatMap((message) => contentSlots(message, 'content', ANTHROPIC_PARTS)) : []),
  ],
  answer: (answer) => (isObject(answer) ? contentSlots(answer, 'content', ANTHROPIC_PARTS) : []),
  isFinalFrame: (frame) => frame.startsWith('event: message_stop\n'),
  streamError: (error) => sseFrame(JSON.stringify({ type: 'error', error: { type: error.type, message: error.message, ...error.details } }), 'error'),
};

/** Realtime: the text of a client's `conversation.item.create` (input_text parts). */
export function realtimeEventSlots(event: Record<string, unknown>): TextSlot[] {
  const item = event.item;
  if (event.type !== 'conversation.item.create' || !isObject(item)) return [];
  return contentSlots(item, 'content', RESPONSES_INPUT_PARTS);
}
