/**
 * Anthropic's Messages API in the mock upstream (mock-upstream.ts hands every request here
 * first; `serveAnthropic` answers true when it served it).
 *
 * Route: POST /v1/messages (and /messages).
 *   - `x-api-key` required (401 authentication_error), `anthropic-version` required (400);
 *     errors in Anthropic's shape {type: "error", error: {type, message}}, with a `request-id`
 *   - body checks: model, max_tokens (positive integer), messages (non-empty, roles user |
 *     assistant, the first a user turn), temperature 0…1 (400 invalid_request_error "<field>: …")
 *
 * Replies: {id: "msg_…", type: "message", role: "assistant", model, content, stop_reason,
 * stop_sequence: null, usage {input_tokens, output_tokens, cache_creation_input_tokens,
 * cache_read_input_tokens}}
 *   - text "Hello from mock", or the rest of the last user text when it starts with "echo:"
 *   - custom `tools` and a last user text mentioning "weather" (not a tool_result turn,
 *     tool_choice not none): a `tool_use` block {name: the first tool or the forced one,
 *     input {location: "Paris"}} instead of the text, stop_reason "tool_use"
 *   - `mcp_servers` (needs `anthropic-beta: mcp-client-2025-04-04`, else 400): per server, in
 *     order, an `mcp_tool_use` block (tool "echo", server_name) and its `mcp_tool_result`
 *     ("echo from <name>"), then the text
 *   - usage: input_tokens = ceil(chars of system + message texts / 4) (min 1), output_tokens =
 *     words of the text (tool_use: 5); any `cache_control` in system or messages, or model
 *     mock-cache-tokens: cache_creation_input_tokens 50, cache_read_input_tokens 200
 *   - `stream: true`: `event: <type>\ndata: <json>\n\n` as Anthropic sends them: message_start
 *     (output_tokens 1), ping, per block content_block_start / deltas (a text_delta per word;
 *     tool input in 5 input_json_delta fragments; MCP blocks whole in their start) /
 *     content_block_stop, message_delta (stop_reason, output_tokens), message_stop
 *
 * Switches by model name, as for chat (see mock-upstream.ts), errors in Anthropic's shape:
 * mock-error-<status>, mock-slow-<ms>, mock-hang, mock-drop, mock-flaky-<n>-<status>,
 * mock-retry-after-<ms>, mock-invalid-json, mock-stream-empty, mock-stream-cut (message_start,
 * ping, block start, two deltas, then the socket goes), and
 *   mock-malformed-chunk  stream: message_start, then an event whose data is not JSON, then the end
 *   mock-stream-error     stream: message_start, ping, then Anthropic's `error` event
 *                         (overloaded_error "Overloaded") and the end
 */
import { randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { splitWords } from './mock-openai-chunks';
import { dropAfterHeaders, streamEvents } from './mock-sse';
// A cycle (mock-upstream.ts imports this file), harmless: both only call each other per request.
import { behaviourOf, dropConnection, sendJson } from './mock-upstream';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error', 404: 'not_found_error',
  413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error', 504: 'timeout_error', 529: 'overloaded_error',
};
const MCP_BETA = 'mcp-client-2025-04-04';
const TOOL_INPUT_FRAGMENTS = ['{"', 'location', '":"', 'Paris', '"}'];

const id = (prefix: string) => prefix + randomBytes(12).toString('hex');
const errorJson = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message } });
const event = (data: Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

function sendAnthropicError(res: http.ServerResponse, status: number, message?: string, extra: Record<string, string> = {}): void {
  const type = ERROR_TYPES[status] ?? 'api_error';
  sendJson(res, status, errorJson(type, message ?? `Mock ${type} (status ${status})`), { 'request-id': id('req_'), ...extra });
}

export function serveAnthropic(res: http.ServerResponse, call: MockCall): boolean {
  if (call.method !== 'POST' || (call.path !== '/v1/messages' && call.path !== '/messages')) return false;
  const apiKey = call.headers['x-api-key'];
  if (typeof apiKey !== 'string' || !apiKey) sendAnthropicError(res, 401, 'x-api-key header is required');
  else if (!call.headers['anthropic-version']) sendAnthropicError(res, 400, 'anthropic-version: header is required');
  else if (call.badJson) sendAnthropicError(res, 400, 'There was an error parsing the body of your request.');
  else {
    const invalid = invalidBody(call.body) ?? mcpBetaMissing(call);
    if (invalid) sendAnthropicError(res, 400, invalid);
    else answer(res, call);
  }
  return true;
}

function invalidBody(body: any): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body: must be an object';
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required and must be a positive integer';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  for (const [i, message] of body.messages.entries()) {
    if (message?.role !== 'user' && message?.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (typeof message.content !== 'string' && !Array.isArray(message.content)) return `messages.${i}.content: Input should be a valid list`;
  }
  if (body.messages[0].role !== 'user') return 'messages: first message must use the "user" role';
  if (body.temperature !== undefined && (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 1)) {
    return 'temperature: Input should be less than or equal to 1';
  }
  return null;
}

function mcpBetaMissing(call: MockCall): string | null {
  if (!Array.isArray(call.body.mcp_servers)) return null;
  return String(call.headers['anthropic-beta'] ?? '').includes(MCP_BETA) ? null : `mcp_servers: Extra inputs are not permitted (the MCP connector needs anthropic-beta: ${MCP_BETA})`;
}

/** Text of a user turn's content, tool results left out. */
function userText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter((block: any) => block?.type === 'text').map((block: any) => block.text).join('');
}

function allText(body: any): string {
  const system = typeof body.system === 'string' ? body.system : Array.isArray(body.system) ? body.system.map((b: any) => b?.text ?? '').join('') : '';
  return system + body.messages.map((m: any) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('');
}

interface Plan {
  blocks: Record<string, any>[];
  stopReason: 'end_turn' | 'tool_use';
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
}

function plan(body: any, behaviourModel: string): Plan {
  const last = body.messages[body.messages.length - 1];
  const lastText = last.role === 'user' ? userText(last.content) : '';
  const toolResultTurn = Array.isArray(last.content) && last.content.some((block: any) => block?.type === 'tool_result');
  const tools = (body.tools ?? []).filter((tool: any) => tool?.type === undefined || tool.type === 'custom');
  const blocks: Record<string, any>[] = [];
  for (const server of body.mcp_servers ?? []) {
    const useId = id('mcptoolu_');
    blocks.push({ type: 'mcp_tool_use', id: useId, name: 'echo', server_name: server.name, input: { text: lastText } });
    blocks.push({ type: 'mcp_tool_result', tool_use_id: useId, is_error: false, content: [{ type: 'text', text: `echo from ${server.name}` }] });
  }
  const cached = behaviourModel === 'mock-cache-tokens' || JSON.stringify([body.system, body.messages]).includes('"cache_control"');
  const usage = {
    input_tokens: Math.max(1, Math.ceil(allText(body).length / 4)),
    output_tokens: 0,
    cache_creation_input_tokens: cached ? 50 : 0,
    cache_read_input_tokens: cached ? 200 : 0,
  };
  if (tools.length && /weather/i.test(lastText) && !toolResultTurn && body.tool_choice?.type !== 'none') {
    const name = body.tool_choice?.type === 'tool' ? body.tool_choice.name : tools[0].name;
    blocks.push({ type: 'tool_use', id: id('toolu_'), name, input: { location: 'Paris' } });
    return { blocks, stopReason: 'tool_use', usage: { ...usage, output_tokens: TOOL_INPUT_FRAGMENTS.length } };
  }
  const text = lastText.startsWith('echo:') ? lastText.slice(5).trim() : 'Hello from mock';
  blocks.push({ type: 'text', text });
  return { blocks, stopReason: 'end_turn', usage: { ...usage, output_tokens: splitWords(text).length } };
}

function answer(res: http.ServerResponse, call: MockCall): void {
  const body = call.body;
  const model: string = body.model;
  const behaviourModel = model.slice(model.lastIndexOf('/') + 1);
  const behaviour = behaviourOf(behaviourModel);
  const stream = body.stream === true;
  if (behaviour.hang) return;
  if (behaviour.drop || (behaviour.streamEmpty && !stream)) return dropConnection(res);
  if (behaviour.flaky) {
    const key = 'messages\u0000' + model + '\u0000' + userText(body.messages[body.messages.length - 1].content);
    const failed = call.flakyFailures.get(key) ?? 0;
    if (failed < behaviour.flaky.failures) {
      call.flakyFailures.set(key, failed + 1);
      return sendAnthropicError(res, behaviour.flaky.status);
    }
  }
  if (behaviour.errorStatus) return sendAnthropicError(res, behaviour.errorStatus, undefined, behaviour.errorStatus === 429 ? { 'retry-after': '1' } : {});
  if (behaviour.retryAfterMs !== undefined) {
    const ms = behaviour.retryAfterMs;
    return sendAnthropicError(res, 429, undefined, { 'retry-after-ms': String(ms), 'retry-after': String(Math.ceil(ms / 1000)) });
  }
  if (behaviour.invalidJson) return sendJson(res, 200, '{"id":"msg_broken","type":"message", this is not JSON');

  const { blocks, stopReason, usage } = plan(body, behaviourModel);
  const message = { id: id('msg_'), type: 'message', role: 'assistant', model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage };
  const headers = { 'request-id': id('req_') };
  if (!stream) {
    const reply = () => sendJson(res, 200, JSON.stringify(message), headers);
    if (behaviour.delayMs === 0) return reply();
    const timer = setTimeout(reply, behaviour.delayMs);
    res.once('close', () => clearTimeout(timer));
    return;
  }
  if (behaviour.streamEmpty) return dropAfterHeaders(res);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  const start = event({ type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  const ping = event({ type: 'ping' });
  if (behaviourModel === 'mock-malformed-chunk') return streamEvents(res, [start, 'event: ping\ndata: {"type": "ping", this is not JSON\n\n'], behaviour);
  if (behaviourModel === 'mock-stream-error') {
    return streamEvents(res, [start, ping, `event: error\ndata: ${errorJson('overloaded_error', 'Overloaded')}\n\n`], behaviour);
  }
  const events = [start, ping, ...blocks.flatMap(blockEvents)];
  if (behaviour.streamCut) return streamEvents(res, events.slice(0, 5), behaviour, true);
  events.push(event({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }));
  events.push(event({ type: 'message_stop' }));
  streamEvents(res, events, behaviour);
}

function blockEvents(block: Record<string, any>, index: number): string[] {
  const stop = event({ type: 'content_block_stop', index });
  if (block.type === 'text') {
    const deltas = splitWords(block.text).map((text) => event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }));
    return [event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }), ...deltas, stop];
  }
  if (block.type === 'tool_use') {
    const deltas = TOOL_INPUT_FRAGMENTS.map((partial_json) => event({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }));
    return [event({ type: 'content_block_start', index, content_block: { ...block, input: {} } }), ...deltas, stop];
  }
  return [event({ type: 'content_block_start', index, content_block: block }), stop];
}
