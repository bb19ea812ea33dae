import type { EventSourceMessage } from 'eventsource-parser';

/*
 * OpenAI's chat completion format is the gateway's common format for chat: a vendor
 * with a wire format of its own (Anthropic, Gemini) translates requests from it and
 * answers into it, and `/v1/messages` reaches non-Anthropic providers through it.
 * Plain JSON objects, as they travel on the wire. Each object keeps an index signature:
 * fields the gateway does not read pass through untouched (the pass-through rule). A
 * request body has passed only the gateway's own rules, so a translation still checks
 * each field it reads (translation-checks.ts); the declared types say what it expects.
 */

/** The fields of a JSON object the gateway does not name. */
interface Open {
  [key: string]: unknown;
}

export interface ChatTextPart extends Open {
  type: 'text';
  text: string;
}
export interface ChatImagePart extends Open {
  type: 'image_url';
  image_url: Open & { url: string; detail?: string };
}
export interface ChatAudioPart extends Open {
  type: 'input_audio';
  input_audio: Open & { data: string; format: string };
}
export interface ChatFilePart extends Open {
  type: 'file';
  file: Open & { file_data?: string; file_id?: string; filename?: string };
}
/** A refusal an assistant turn echoed back may hold. */
export interface ChatRefusalPart extends Open {
  type: 'refusal';
  refusal: string;
}
export type ChatContentPart = ChatTextPart | ChatImagePart | ChatAudioPart | ChatFilePart | ChatRefusalPart;
export type ChatContent = string | ChatContentPart[];

export interface ChatToolCall extends Open {
  id: string;
  type: 'function';
  function: Open & { name: string; arguments: string };
}

interface ChatMessageBase extends Open {
  content?: ChatContent | null;
}
export interface ChatSystemMessage extends ChatMessageBase {
  role: 'system';
}
/** OpenAI's newer name for a system message; every translation reads it as one. */
export interface ChatDeveloperMessage extends ChatMessageBase {
  role: 'developer';
}
export interface ChatUserMessage extends ChatMessageBase {
  role: 'user';
}
export interface ChatAssistantMessage extends ChatMessageBase {
  role: 'assistant';
  tool_calls?: ChatToolCall[] | null;
  refusal?: string | null;
  /** DeepSeek, vLLM and the gateway's own translations; see reasoningText. */
  reasoning_content?: string;
  reasoning?: string;
}
export interface ChatToolMessage extends ChatMessageBase {
  role: 'tool';
  tool_call_id: string;
}
export type ChatMessage = ChatSystemMessage | ChatDeveloperMessage | ChatUserMessage | ChatAssistantMessage | ChatToolMessage;
export type ChatRole = ChatMessage['role'];

export interface ChatTool extends Open {
  type: 'function';
  function: Open & { name: string; description?: string; parameters?: Record<string, unknown> | null; strict?: boolean | null };
}
export type ChatToolChoice = 'none' | 'auto' | 'required' | (Open & { type: 'function'; function: Open & { name: string } });

/** A chat completions request body. */
export interface ChatCompletionBody extends Open {
  model?: string;
  messages: ChatMessage[];
  tools?: ChatTool[] | null;
  tool_choice?: ChatToolChoice | null;
  parallel_tool_calls?: boolean | null;
  stream?: boolean | null;
  stream_options?: (Open & { include_usage?: boolean | null }) | null;
  response_format?: (Open & { type: string }) | null;
}

/** OpenAI's `usage` object. */
export interface ChatUsage extends Open {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** `cache_write_tokens` is the gateway's own, for vendors that bill prompt-cache writes apart (Anthropic). */
  prompt_tokens_details?: Open & { cached_tokens?: number; audio_tokens?: number; cache_write_tokens?: number };
  completion_tokens_details?: Open & { reasoning_tokens?: number; audio_tokens?: number };
}

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call' | (string & {});

export interface ChatChoice extends Open {
  index: number;
  message: ChatAssistantMessage;
  finish_reason: ChatFinishReason | null;
  logprobs?: unknown;
}

/** A `chat.completion` object. */
export interface ChatCompletion extends Open {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: ChatUsage | null;
}

/** One tool call's piece in a stream: `index` says which call the piece belongs to. */
export interface ChatToolCallDelta extends Open {
  index: number;
  id?: string;
  type?: 'function';
  function?: Open & { name?: string; arguments?: string };
}

export interface ChatDelta extends Open {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ChatToolCallDelta[];
  reasoning_content?: string;
  reasoning?: string;
}

export interface ChatChunkChoice extends Open {
  index: number;
  delta: ChatDelta;
  finish_reason: ChatFinishReason | null;
  logprobs?: unknown;
}

/** A `chat.completion.chunk` object; `error` is how some OpenAI-compatible vendors end a failed stream. */
export interface ChatCompletionChunk extends Open {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: ChatUsage | null;
  error?: Open & { message?: unknown; code?: string | null };
}

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
  toChatCompletion(answer: unknown, model: string): ChatCompletion;
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
export function reasoningText(message: { reasoning_content?: unknown; reasoning?: unknown } | null | undefined): string {
  const text = message?.reasoning_content ?? message?.reasoning;
  return typeof text === 'string' ? text : '';
}
