import type { EventSourceMessage } from 'eventsource-parser';

/**
 * OpenAI's chat completion format is the gateway's common format for chat: a vendor
 * with a wire format of its own (Anthropic, Gemini) translates requests from it and
 * answers into it, and `/v1/messages` reaches non-Anthropic providers through it.
 * Plain JSON objects, as they travel on the wire.
 */
export type ChatCompletionBody = Record<string, any>;
/** A `chat.completion` object. */
export type ChatCompletion = Record<string, any>;
/** A `chat.completion.chunk` object. */
export type ChatCompletionChunk = Record<string, any>;

/** OpenAI's error body, `{error: {message, type, param, code}}`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/**
 * Turns one vendor stream into OpenAI chat completion chunks, event by event. The last
 * chunks are the one carrying `finish_reason` and a usage-only chunk
 * (`choices: []`, `usage` in OpenAI's shape), as OpenAI sends with
 * `stream_options.include_usage`. A malformed event throws a GatewayError (502
 * `upstream_malformed_response`): the relay ends the client's stream with an error event.
 */
export interface ChatStreamDecoder {
  /** The chunks for one upstream SSE event; none for pings and bookkeeping events. */
  onEvent(event: EventSourceMessage): ChatCompletionChunk[];
  /** Whether the vendor's end of stream was seen; a stream ending before it is an error. */
  isComplete(): boolean;
}

/**
 * The chat completions of a vendor whose wire format is not OpenAI's: its capability's
 * `buildRequest` translates the OpenAI body (a 400 GatewayError naming the field for
 * what the vendor cannot do, never a silent drop), and these translate the answers.
 */
export interface ChatTranslation {
  /** The vendor's JSON answer as a `chat.completion`; `model` is the model the request named. */
  toChatCompletion(answer: Record<string, any>, model: string): ChatCompletion;
  /** A decoder for one streamed answer. */
  streamDecoder(model: string): ChatStreamDecoder;
  /**
   * The vendor's error answer in OpenAI's error shape (the status is kept as it is).
   * `headers` are the answer's headers the gateway keeps (`x-amzn-errortype`: AWS names
   * the error there, not in the body).
   */
  toOpenAIError(status: number, body: unknown, headers?: Record<string, string>): OpenAIErrorBody;
}

/**
 * The reasoning text of a chat message or delta: `reasoning_content` (DeepSeek, vLLM,
 * Gemini through its translation), or `reasoning` (OpenRouter, newer vLLM); '' when none.
 */
export function reasoningText(message: Record<string, any> | null | undefined): string {
  const text = message?.reasoning_content ?? message?.reasoning;
  return typeof text === 'string' ? text : '';
}
