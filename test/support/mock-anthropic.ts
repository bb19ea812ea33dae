/**
 * Anthropic's Messages API in the mock upstream (mock-upstream.ts hands every request here
 * first; `serveAnthropic` answers true when it served it). Bodies, checks and stream events are
 * built by mock-anthropic-body.ts.
 *
 * Routes (also without /v1); anything else is left to the other routes:
 *   POST /v1/messages                 below
 *   POST /v1/messages/count_tokens    {input_tokens}: the create's input count (chars / 4) plus the
 *        JSON of `tools` / 4; the body checked as a create's, but max_tokens, stream, sampling
 *        settings and other create-only fields are "<field>: Extra inputs are not permitted";
 *        model switches mock-error-<status>, mock-slow-<ms>, mock-flaky-… as for messages
 *   /v1/messages/batches/…            the Message Batches API: see mock-anthropic-batches.ts
 *   GET  /v1/models, /v1/models/{id}  Anthropic's Models API, when the request carries x-api-key or
 *        anthropic-version (else it is OpenAI's, mock-openai-fine-tuning.ts): ANTHROPIC_MODELS of
 *        mock-anthropic-body.ts, newest first, {data, has_more, first_id, last_id} paged by `limit`
 *        (default 20, 1…1000), `after_id`, `before_id`; an unknown id is a 404 not_found_error
 * Every route:
 *   - `x-api-key` required: 401 authentication_error "x-api-key header is required";
 *     `anthropic-version` required: 400 "anthropic-version: header is required"
 *   - errors in Anthropic's shape {type: "error", error: {type, message}, request_id}; every
 *     answer carries a `request-id` header
 *   - body checks (400 invalid_request_error "<field>: …"): JSON, no unknown top-level field
 *     ("<field>: Extra inputs are not permitted"), model, max_tokens (positive integer), messages
 *     (non-empty, roles user | assistant (and system, not first, under anthropic-beta
 *     per-turn-control-2026-07-01 or mid-conversation-tool-changes-2026-07-01, as Claude Code
 *     sends it), the first a user turn, consecutive same roles accepted as
 *     Anthropic merges them, content a string or typed blocks, non-empty but for a final assistant
 *     turn), system (string or text blocks), temperature and top_p 0…1 (not both for Opus 4.1,
 *     Sonnet 4.5 and later: "`temperature` and `top_p` cannot both be specified for this model"),
 *     at most 4 blocks with cache_control, top_k, stop_sequences,
 *     tools (name, custom ones an input_schema), tool_choice (auto | any | tool | none; a forced
 *     tool must exist; only with tools), thinking (budget_tokens ≥ 1024 and < max_tokens; with
 *     enabled thinking: temperature 1 or unset, top_p ≥ 0.95, no top_k, no forced
 *     tool_choice, and a last assistant turn with tool_use must start with a thinking block)
 *   - `mcp_servers` needs `anthropic-beta` containing mcp-client-2025-04-04 (400 otherwise)
 *
 * Replies: {id: "msg_01…", type: "message", role: "assistant", model, content, stop_reason,
 * stop_sequence, usage {input_tokens, output_tokens, cache_creation_input_tokens,
 * cache_read_input_tokens}}. Content blocks, in order:
 *   - `thinking: {type: "enabled"}`: a `thinking` block ("Let me think about that.", a signature)
 *   - per MCP server, in order: `mcp_tool_use` {id: "mcptoolu_01…", name: "echo", server_name,
 *     input {text: last user text}} and `mcp_tool_result` {tool_use_id, is_error: false,
 *     content [{type: "text", text: "echo from <server name>"}]}
 *   - custom `tools` and a last user text mentioning "weather" (the last turn not a tool_result
 *     turn, tool_choice not none): a `tool_use` block {id: "toolu_01…", name: the first custom tool
 *     or the forced one, input {location: "Paris"}}, no text, stop_reason "tool_use"
 *   - a tool script (the last user turn without tool_result blocks starts with "tools:"; syntax in
 *     mock-tool-script.ts): round r (the assistant turns with tool_use blocks after it) answers step
 *     r's calls as `tool_use` blocks {id: "toolu_01…", name, input: the arguments}, several in one
 *     message for a step of several calls, stop_reason "tool_use"; a tool not among the custom
 *     tools (or tool_choice none): text "no tool <name>". After the last step: text "results: " +
 *     the tool_result contents (string or text blocks; "error: " first when is_error) after that
 *     user turn, joined by " / "
 *   - else a `text` block: "Hello from mock", or the rest of the last user text (its text blocks;
 *     tool results are not user text) trimmed, when it starts with "echo:"; stop_reason "end_turn",
 *     "stop_sequence" (cut before the earliest of `stop_sequences` in it, stop_sequence set) or
 *     "max_tokens" (cut after max_tokens words)
 *   - usage: input_tokens = ceil(chars of system + message texts, tool inputs and results / 4)
 *     (min 1); output_tokens = words of the text (tool_use: its input's JSON fragments, 5 for
 *     {"location":"Paris"}) + thinking words; any
 *     `cache_control` (top level, system or message blocks) or model mock-cache-tokens:
 *     cache_creation_input_tokens 50 and cache_read_input_tokens 200, else 0 both
 *   - `stream: true`: text/event-stream of `event: <type>\ndata: <json>\n\n`: message_start (the
 *     message with content [], stop_reason null, usage with the input and cache counts and
 *     output_tokens 1), ping, per block content_block_start / deltas / content_block_stop (a
 *     text_delta per word, spaces kept; thinking_delta per word and a signature_delta; tool_use
 *     input {} then its input JSON in token-like input_json_delta fragments (5 for Paris); mcp_tool_use input {} then its input JSON in one
 *     input_json_delta, as the SDK's stream accumulator expects; mcp_tool_result whole in its start),
 *     message_delta {delta {stop_reason, stop_sequence}, usage {output_tokens}}, message_stop. No [DONE].
 *
 * Behaviour switches by model name, as for chat (see mock-upstream.ts), errors in Anthropic's shape
 * with the type of the status (400 invalid_request_error, 401 authentication_error, 402
 * billing_error, 403 permission_error, 404 not_found_error, 413 request_too_large, 429
 * rate_limit_error with `retry-after: 1`, 500 api_error, 504 timeout_error, 529 overloaded_error,
 * others api_error): mock-error-<status>, mock-slow-<ms>, mock-hang, mock-drop,
 * mock-flaky-<n>-<status> (counted per model and last user text), mock-retry-after-<ms> (429 with
 * retry-after-ms and retry-after), mock-invalid-json, mock-stream-empty, and
 *   mock-stream-cut       stream: its first five events (message_start, ping, block start, two
 *                         deltas), then the socket goes (non-stream: as usual)
 *   mock-malformed-chunk  stream: message_start, then an event whose data is not JSON, then the end
 *                         without message_stop (non-stream: as usual)
 *   mock-stream-error     stream: message_start, ping, then Anthropic's `error` event
 *                         {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}
 *                         and the end (non-stream: as usual)
 */
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import {
  ANTHROPIC_MODELS,
  anthropicId,
  countInputTokens,
  invalidBody,
  invalidCountTokensBody,
  lastUserText,
  mcpBetaMissing,
  messageEvents,
  modelsPage,
  plan,
  sseEvent,
} from './mock-anthropic-body';
import { AnthropicBatchesMock } from './mock-anthropic-batches';
import { dropAfterHeaders, streamEvents } from './mock-sse';
// A cycle (mock-upstream.ts imports this file), harmless: both only call each other per request.
import { answerFailureSwitch, behaviourOf, sendJson } from './mock-upstream';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};
const MOCK_ERROR_MESSAGES: Record<string, string> = {
  rate_limit_error: 'This request would exceed the rate limit for your organization. Please try again later.',
  overloaded_error: 'Overloaded',
  api_error: 'Internal server error',
};
const INVALID_JSON_REPLY = '{"id":"msg_broken","type":"message", this is not JSON';
const MALFORMED_EVENT = 'event: content_block_start\ndata: {"type":"content_block_start", this is not JSON\n\n';
const OVERLOADED_EVENT = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';

function sendAnthropicError(res: http.ServerResponse, status: number, message?: string, extra: Record<string, string> = {}): void {
  const type = ERROR_TYPES[status] ?? 'api_error';
  const requestId = anthropicId('req_');
  const body = JSON.stringify({
    type: 'error',
    error: { type, message: message ?? MOCK_ERROR_MESSAGES[type] ?? `Mock ${type} (status ${status})` },
    request_id: requestId,
  });
  sendJson(res, status, body, { 'request-id': requestId, ...(status === 429 ? { 'retry-after': '1' } : {}), ...extra });
}

const MODELS_ROUTE = /^(?:\/v1)?\/models(?:\/([^/]+))?$/;
const BAD_JSON_MESSAGE = 'There was an error parsing the body of your request. Please check that it is valid JSON.';

/** Every Anthropic endpoint wants both headers: 401 without a key, 400 without a version. */
function headersRefused(res: http.ServerResponse, call: MockCall): boolean {
  const apiKey = call.headers['x-api-key'];
  if (typeof apiKey !== 'string' || !apiKey) sendAnthropicError(res, 401, 'x-api-key header is required');
  else if (!call.headers['anthropic-version']) sendAnthropicError(res, 400, 'anthropic-version: header is required');
  else return false;
  return true;
}

/** Anthropic's routes; `batches` (the mock server's Message Batches, mock-anthropic-batches.ts) serves /v1/messages/batches/…. */
export function serveAnthropic(res: http.ServerResponse, call: MockCall, batches?: AnthropicBatchesMock): boolean {
  const path = call.path.replace(/^\/v1/, '');
  if (batches && AnthropicBatchesMock.routes(call.method, call.path)) {
    if (headersRefused(res, call)) return true;
    return batches.serve(res, call, (reply, status, message) => sendAnthropicError(reply, status, message));
  }
  if (call.method === 'POST' && path === '/messages/count_tokens') return countTokens(res, call);
  // GET /v1/models is OpenAI's too: it is Anthropic's when the caller speaks Anthropic's headers.
  const models =
    call.method === 'GET' && (call.headers['x-api-key'] !== undefined || call.headers['anthropic-version'] !== undefined) ? MODELS_ROUTE.exec(call.path) : null;
  if (models) return listModels(res, call, models[1]);
  if (call.method !== 'POST' || path !== '/messages') return false;
  if (headersRefused(res, call)) return true;
  if (call.badJson) sendAnthropicError(res, 400, BAD_JSON_MESSAGE);
  else {
    const invalid = invalidBody(call.body, call.headers['anthropic-beta']) ?? mcpBetaMissing(call.body, call.headers['anthropic-beta']);
    if (invalid) sendAnthropicError(res, 400, invalid);
    else answer(res, call);
  }
  return true;
}

/** `POST /v1/messages/count_tokens`: {input_tokens}, model switches for errors as for messages. */
function countTokens(res: http.ServerResponse, call: MockCall): boolean {
  if (headersRefused(res, call)) return true;
  if (call.badJson) return (sendAnthropicError(res, 400, BAD_JSON_MESSAGE), true);
  const invalid = invalidCountTokensBody(call.body) ?? mcpBetaMissing(call.body, call.headers['anthropic-beta']);
  if (invalid) return (sendAnthropicError(res, 400, invalid), true);
  const model: string = call.body.model;
  const behaviour = behaviourOf(model.slice(model.lastIndexOf('/') + 1));
  const flakyKey = () => 'count_tokens\u0000' + model;
  const replies = {
    error: (status: number, headers?: Record<string, string>) => sendAnthropicError(res, status, undefined, headers),
    invalidJson: INVALID_JSON_REPLY,
  };
  if (answerFailureSwitch(res, behaviour, { stream: false, flakyCounters: call.flakyFailures, flakyKey }, replies)) return true;
  sendJson(res, 200, JSON.stringify({ input_tokens: countInputTokens(call.body) }), { 'request-id': anthropicId('req_') });
  return true;
}

/** `GET /v1/models` (paged by limit, after_id, before_id) and `GET /v1/models/{id}`. */
function listModels(res: http.ServerResponse, call: MockCall, id: string | undefined): boolean {
  if (headersRefused(res, call)) return true;
  const headers = { 'request-id': anthropicId('req_') };
  if (id !== undefined) {
    const model = ANTHROPIC_MODELS.find((candidate) => candidate.id === decodeURIComponent(id));
    if (!model) sendAnthropicError(res, 404, `model: ${decodeURIComponent(id)}`);
    else sendJson(res, 200, JSON.stringify(model), headers);
    return true;
  }
  const result = modelsPage(new URLSearchParams(call.rawQuery));
  if ('problem' in result) sendAnthropicError(res, 400, result.problem);
  else sendJson(res, 200, JSON.stringify(result.page), headers);
  return true;
}

function answer(res: http.ServerResponse, call: MockCall): void {
  const body = call.body;
  const model: string = body.model;
  const behaviourModel = model.slice(model.lastIndexOf('/') + 1);
  const behaviour = behaviourOf(behaviourModel);
  const stream = body.stream === true;
  const flakyKey = () => 'messages\u0000' + model + '\u0000' + lastUserText(body.messages);
  const replies = {
    error: (status: number, headers?: Record<string, string>) => sendAnthropicError(res, status, undefined, headers),
    invalidJson: INVALID_JSON_REPLY,
  };
  if (answerFailureSwitch(res, behaviour, { stream, flakyCounters: call.flakyFailures, flakyKey }, replies)) return;

  const reply = plan(body, behaviourModel);
  const message = {
    id: anthropicId('msg_'),
    type: 'message',
    role: 'assistant',
    model,
    content: reply.blocks,
    stop_reason: reply.stopReason,
    stop_sequence: reply.stopSequence,
    usage: reply.usage,
  };
  const headers = { 'request-id': anthropicId('req_') };
  if (!stream) {
    const send = () => sendJson(res, 200, JSON.stringify(message), headers);
    if (behaviour.delayMs === 0) return send();
    const timer = setTimeout(send, behaviour.delayMs);
    res.once('close', () => clearTimeout(timer));
    return;
  }
  if (behaviour.streamEmpty) return dropAfterHeaders(res);
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
  const events = messageEvents(message, reply);
  if (behaviourModel === 'mock-malformed-chunk') return streamEvents(res, [events[0], MALFORMED_EVENT], behaviour);
  if (behaviourModel === 'mock-stream-error') return streamEvents(res, [events[0], sseEvent({ type: 'ping' }), OVERLOADED_EVENT], behaviour);
  if (behaviour.streamCut) return streamEvents(res, events.slice(0, 5), behaviour, true);
  streamEvents(res, events, behaviour);
}
