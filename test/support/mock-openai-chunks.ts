/**
 * OpenAI wire-format builders used by the mock upstream (`mock-upstream.ts`).
 *
 * Everything the mock sends is built here, so this file doubles as a readable
 * reference of what OpenAI's Chat Completions API puts on the wire:
 *
 *  - `planChatCompletion()` decides WHAT to answer (text or tool call, usage),
 *  - `chatCompletionBody()` renders the non-streaming JSON reply,
 *  - `chatCompletionEvents()` yields the SSE events of a streaming reply,
 *  - `errorBody()` / `MODELS_LIST_BODY` render the other bodies.
 *
 * The reply is deterministic so tests can assert exact contents and token counts.
 */
import { answerToolScript, argumentFragments, type ScriptTurn } from './mock-tool-script';

export const SYSTEM_FINGERPRINT = 'fp_mock5e1f0c7a';
export const SERVICE_TIER = 'default';
export const DEFAULT_REPLY = 'Hello from mock';
/** Arguments of the tool call the mock makes when asked about the `weather`. */
export const TOOL_CALL_ARGUMENTS = '{"location":"Paris"}';
/** ...streamed in token-like fragments, the way OpenAI streams them. */
export const TOOL_CALL_ARGUMENT_FRAGMENTS = ['{"', 'location', '":"', 'Paris', '"}'];
export const REASONING_TOKENS = 5;

// ---------------------------------------------------------------------------
// Planning: what will the "model" answer?
// ---------------------------------------------------------------------------

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
}

export interface PlannedToolCall {
  name: string;
  /** The arguments JSON, and the fragments it is streamed in. */
  arguments: string;
  fragments: string[];
}

export interface ChatPlan {
  /** Echoed in every reply (the request's `model`, or the Azure deployment). */
  model: string;
  /** Number of choices (`n`). */
  n: number;
  /** Text reply (no `toolCalls`), or the tool calls made instead (each choice makes them all). */
  content: string;
  toolCalls?: PlannedToolCall[];
  /** Streaming deltas of a text reply: words of `content` (with their separating whitespace). */
  pieces: string[];
  finishReason: 'stop' | 'tool_calls';
  usage: Usage;
}

/** Text of a message's `content`: a string, or the `text` parts of a content-part array. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (part && typeof part.text === 'string') text += part.text;
  return text;
}

/** Text of the last `user` message ('' when there is none). */
export function lastUserMessageText(messages: any[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') return messageText(messages[i].content);
  }
  return '';
}

/** "Hello from mock" -> ["Hello", " from", " mock"]: concatenating the pieces gives back the text. */
export function splitWords(text: string): string[] {
  const pieces = text.match(/\s*\S+(?:\s+$)?/g);
  if (pieces) return pieces;
  return text ? [text] : [];
}

function countWords(text: string): number {
  const words = text.match(/\S+/g);
  return words ? words.length : 0;
}

export function buildUsage(prompt: number, completion: number, cached: number, reasoning: number): Usage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/**
 * Decide the reply for a (validated) chat completion request body.
 * `behaviourModel` is the model name without any `provider/` prefix.
 */
export function planChatCompletion(body: any, model: string, behaviourModel: string): ChatPlan {
  const messages: any[] = body.messages;
  const n = Number.isInteger(body.n) && body.n > 1 ? Math.min(body.n, 128) : 1;

  let promptChars = 0;
  for (const message of messages) if (message) promptChars += messageText(message.content).length;
  const lastUserText = lastUserMessageText(messages);
  const last = messages[messages.length - 1];
  // After a tool result the model answers in text (otherwise agent loops never end).
  const answeringToolResult = last && (last.role === 'tool' || last.role === 'function');

  const tools: any[] | undefined = Array.isArray(body.tools) && body.tools.length > 0 ? body.tools : undefined;
  const forced = body.tool_choice?.function?.name;
  const script = answerToolScript(scriptTurns(messages), tools && body.tool_choice !== 'none' ? tools.map((tool) => tool?.function?.name ?? tool?.name) : []);
  let toolCalls: PlannedToolCall[] | undefined;
  let content: string;
  if (script) {
    toolCalls =
      'calls' in script ? script.calls.map((call) => ({ name: call.name, arguments: call.json, fragments: argumentFragments(call.json) })) : undefined;
    content = 'text' in script ? script.text : '';
  } else if (tools && body.tool_choice !== 'none' && !answeringToolResult && /\bweather\b/i.test(lastUserText)) {
    const name = forced ?? tools[0]?.function?.name ?? tools[0]?.name ?? 'tool';
    toolCalls = [{ name, arguments: TOOL_CALL_ARGUMENTS, fragments: TOOL_CALL_ARGUMENT_FRAGMENTS }];
    content = '';
  } else {
    content = lastUserText.startsWith('echo:') ? lastUserText.slice(5).trimStart() : DEFAULT_REPLY;
  }
  const pieces = toolCalls ? [] : splitWords(content);

  // Deterministic token accounting (see README of the mock in mock-upstream.ts).
  const promptTokens = Math.max(1, Math.ceil(promptChars / 4));
  const perChoice = toolCalls ? toolCalls.reduce((sum, call) => sum + call.fragments.length, 0) : countWords(content);
  const reasoning = behaviourModel.startsWith('o') ? REASONING_TOKENS : 0;
  const cached = behaviourModel === 'mock-cached' ? Math.floor(promptTokens / 2) : 0;
  const usage = buildUsage(promptTokens, perChoice * n + reasoning, cached, reasoning);

  return { model, n, content, toolCalls, pieces, finishReason: toolCalls ? 'tool_calls' : 'stop', usage };
}

/** The conversation as the tool script reads it: user texts, assistant turns with tool_calls, `tool` results. */
function scriptTurns(messages: any[]): ScriptTurn[] {
  const turns: ScriptTurn[] = [];
  for (const message of messages) {
    if (message?.role === 'user') turns.push({ kind: 'user', text: messageText(message.content) });
    else if (message?.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) turns.push({ kind: 'calls' });
    else if (message?.role === 'tool' || message?.role === 'function') turns.push({ kind: 'result', text: messageText(message.content) });
  }
  return turns;
}

// ---------------------------------------------------------------------------
// Non-streaming reply: one `chat.completion` object
// ---------------------------------------------------------------------------

/** "chatcmpl-XYZ" -> "call_XYZ0" (choice 0's first call), "call_XYZ0p1" (its second), "call_XYZ1" (choice 1's first). */
export function toolCallId(completionId: string, index: number, call = 0): string {
  return 'call_' + completionId.slice(9) + index + (call === 0 ? '' : 'p' + call);
}

export function chatCompletionBody(plan: ChatPlan, id: string, created: number): string {
  const choices = [];
  for (let index = 0; index < plan.n; index++) {
    const message = plan.toolCalls
      ? {
          role: 'assistant',
          content: null,
          tool_calls: plan.toolCalls.map((call, i) => ({
            id: toolCallId(id, index, i),
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
          refusal: null,
          annotations: [],
        }
      : { role: 'assistant', content: plan.content, refusal: null, annotations: [] };
    choices.push({ index, message, logprobs: null, finish_reason: plan.finishReason });
  }
  return JSON.stringify({
    id, // "chatcmpl-..."
    object: 'chat.completion',
    created, // unix seconds
    model: plan.model,
    choices,
    usage: plan.usage,
    service_tier: SERVICE_TIER,
    system_fingerprint: SYSTEM_FINGERPRINT,
  });
}

// ---------------------------------------------------------------------------
// Streaming reply: `chat.completion.chunk` objects as server-sent events
// ---------------------------------------------------------------------------

export const SSE_DONE = 'data: [DONE]\n\n';

/**
 * Yields each SSE event (`data: <json>\n\n`) of a streamed reply, in order:
 *
 *   1. per choice, the role chunk:   delta {"role":"assistant","content":"","refusal":null}
 *      (for a tool call OpenAI merges the role with the tool call header:
 *       delta {"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_…","type":"function",
 *              "function":{"name":"get_weather","arguments":""}}],"refusal":null})
 *   2. per word, per choice:         delta {"content":" word"}
 *      or per tool call: (after the first) its header delta {"tool_calls":[{"index":i,"id","type",
 *      "function":{"name","arguments":""}}]}, then per argument fragment
 *                                    delta {"tool_calls":[{"index":i,"function":{"arguments":"…"}}]}
 *   3. per choice, the final chunk:  delta {} with finish_reason "stop" | "tool_calls"
 *   4. only with stream_options.include_usage: a chunk with "choices":[] and "usage":{…}
 *      (all other chunks then carry "usage":null)
 *   5. data: [DONE]
 */
export function* chatCompletionEvents(plan: ChatPlan, id: string, created: number, includeUsage: boolean): Generator<string, void, undefined> {
  const event = (choices: unknown[], usage: Usage | null = null): string => {
    const chunk: Record<string, unknown> = {
      id,
      object: 'chat.completion.chunk',
      created,
      model: plan.model,
      service_tier: SERVICE_TIER,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices,
    };
    if (includeUsage) chunk.usage = usage;
    return 'data: ' + JSON.stringify(chunk) + '\n\n';
  };
  const choice = (index: number, delta: unknown, finishReason: string | null = null) => ({
    index,
    delta,
    logprobs: null,
    finish_reason: finishReason,
  });

  const header = (index: number, call: number) => {
    const toolCall = plan.toolCalls![call];
    return { index: call, id: toolCallId(id, index, call), type: 'function', function: { name: toolCall.name, arguments: '' } };
  };
  for (let index = 0; index < plan.n; index++) {
    const delta = plan.toolCalls
      ? { role: 'assistant', content: null, tool_calls: [header(index, 0)], refusal: null }
      : { role: 'assistant', content: '', refusal: null };
    yield event([choice(index, delta)]);
  }
  // Tool calls one after another: a call's header (the first merged with the role chunk), then its fragments.
  for (const [call, toolCall] of (plan.toolCalls ?? []).entries()) {
    if (call > 0) for (let index = 0; index < plan.n; index++) yield event([choice(index, { tool_calls: [header(index, call)] })]);
    for (const fragment of toolCall.fragments) {
      for (let index = 0; index < plan.n; index++) yield event([choice(index, { tool_calls: [{ index: call, function: { arguments: fragment } }] })]);
    }
  }
  for (const piece of plan.pieces) {
    for (let index = 0; index < plan.n; index++) yield event([choice(index, { content: piece })]);
  }
  for (let index = 0; index < plan.n; index++) {
    yield event([choice(index, {}, plan.finishReason)]);
  }
  if (includeUsage) yield event([], plan.usage);
  yield SSE_DONE;
}

// ---------------------------------------------------------------------------
// Errors and the model list
// ---------------------------------------------------------------------------

/** OpenAI's error envelope: {"error":{"message","type","param","code"}}. */
export function errorBody(message: string, type: string, code: string | null = null, param: string | null = null): string {
  return JSON.stringify({ error: { message, type, param, code } });
}

// Static error bodies, built once.
export const BAD_JSON_BODY = errorBody('We could not parse the JSON body of your request. (The OpenAI API expects a JSON payload.)', 'invalid_request_error');
export const MISSING_MODEL_BODY = errorBody('you must provide a model parameter', 'invalid_request_error');
export const MISSING_MESSAGES_BODY = errorBody("Missing required parameter: 'messages'.", 'invalid_request_error', 'missing_required_parameter', 'messages');
export const STREAM_OPTIONS_WITHOUT_STREAM_BODY = errorBody(
  "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
  'invalid_request_error',
  null,
  'stream_options',
);
export const AZURE_MISSING_API_VERSION_BODY = errorBody('Resource not found: missing api-version query parameter', 'invalid_request_error', '404');
/** What `mock-invalid-json` answers (with 200 and Content-Type: application/json). */
export const INVALID_JSON_REPLY = '{"id":"chatcmpl-broken","object":"chat.completion", this is not JSON';

/** Body of the reply forced by the `mock-error-<status>` model. */
export function mockErrorBody(status: number): string {
  const message = `Mock error ${status}`;
  if (status === 429) return errorBody(message, 'requests', 'rate_limit_exceeded');
  if (status === 401) return errorBody(message, 'invalid_request_error', 'invalid_api_key');
  if (status === 404) return errorBody(message, 'invalid_request_error', 'model_not_found');
  if (status >= 500) return errorBody(message, 'server_error', 'server_error');
  return errorBody(message, 'invalid_request_error', 'invalid_value');
}

export const MOCK_MODEL_IDS = [
  'gpt-4o',
  'gpt-4o-mini',
  'o3-mini',
  'mock-cached',
  'mock-error-429',
  'mock-error-500',
  'mock-slow-100',
  'mock-stream-cut',
  'mock-invalid-json',
  'mock-hang',
  'mock-drop',
  'mock-stream-empty',
  'mock-flaky-2-503',
  'mock-retry-after-300',
];

export function modelObject(id: string) {
  return { id, object: 'model', created: 1715367049, owned_by: 'system' };
}

/** GET /v1/models: {"object":"list","data":[{"id","object":"model","created","owned_by"}]} */
export const MODELS_LIST_BODY = JSON.stringify({ object: 'list', data: MOCK_MODEL_IDS.map(modelObject) });
