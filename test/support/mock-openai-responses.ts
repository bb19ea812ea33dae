/**
 * OpenAI's Responses API in the mock upstream (`mock-upstream.ts` hands every request here
 * first; `serveOpenAIResponses` answers true when it served it). The bodies and events are
 * built by mock-openai-responses-body.ts, requests checked by mock-openai-responses-validate.ts.
 *
 * Routes (under /v1/responses, /responses, Azure's /openai/responses?api-version=… (404 without
 * api-version) and Azure's /openai/v1/responses)
 *   POST   /v1/responses                      create: a Response object, or its SSE events with stream
 *   GET    /v1/responses/{id}                 the stored response (?stream=true replays its events,
 *                                             ?starting_after=<n> only those after sequence number n)
 *   DELETE /v1/responses/{id}                 {id, object: "response.deleted", deleted: true}
 *   GET    /v1/responses/{id}/input_items     {object: "list", data, first_id, last_id, has_more}: the
 *                                             input as message items (order desc by default, limit, after)
 *   POST   /v1/responses/{id}/cancel          background ones: the response, status "cancelled" (a
 *                                             finished one unchanged); others 400 "Cannot cancel a
 *                                             synchronous response."
 *   unknown id: 404 OpenAI error. Created responses are kept in memory per mock server unless
 *   `store: false`. Auth: `Authorization: Bearer …` required (401 OpenAI error); on the Azure paths
 *   `api-key` (or Bearer) instead (401 Azure error). Invalid bodies: 400 OpenAI error with `param`.
 *
 * Replies: {id: "resp_…", object: "response", created_at, status: "completed", background,
 * completed_at, error: null, incomplete_details: null, instructions, max_output_tokens, model,
 * output, parallel_tool_calls, previous_response_id, reasoning {effort, summary}, store,
 * temperature, text, tool_choice, tools (mcp: no headers, server_url reduced to its origin),
 * top_p, truncation, usage, user, metadata} (no output_text: the SDK computes it). Output items:
 *   - per mcp tool an `mcp_list_tools` item (tool "echo"), first
 *   - with `reasoning`: a `reasoning` item {id: "rs_…", summary: []}, 5 reasoning tokens
 *   - web_search* tool: a `web_search_call` item (action search, query = last user text) and a
 *     `url_citation` annotation on the text; file_search tool: a `file_search_call` item and a
 *     `file_citation` annotation
 *   - per mcp tool an `mcp_call` item (echo, output "echo from <label>"); a server given neither
 *     `headers` nor `authorization`: error "Unauthorized", output null, status "failed"
 *   - a `function` tool and a last user text mentioning "weather" (not right after a
 *     function_call_output, tool_choice not "none"): a `function_call` item to the first function
 *     (or the forced one), arguments {"location":"Paris"}, instead of the message
 *   - a tool script (the last user message starts with "tools:"; syntax in mock-tool-script.ts):
 *     round r (the runs of consecutive function_call input items after it; with previous_response_id
 *     the chain's stored inputs and outputs come first, as OpenAI keeps them) answers step r's calls
 *     as `function_call` items {id: "fc_…", call_id: "call_…", name, arguments}, one item per call;
 *     a function not among the `function` tools (or tool_choice "none"): a message "no tool
 *     <name>". After the last step: a message "results: " + the function_call_output outputs
 *     after that user message, joined by " / "
 *   - else a `message` item: output_text "Hello from mock", or the rest of the last user text when
 *     it starts with "echo:"
 *   - usage: input_tokens = ceil(chars of instructions + input texts / 4) (min 1); output_tokens =
 *     words of the text (function calls: their argument fragments, 5 for {"location":"Paris"}, also
 *     the response.function_call_arguments.delta events) + reasoning tokens; model
 *     "mock-cached": cached_tokens = floor(input_tokens / 2)
 *   - `background: true`: answered at once with status "queued" (output [], usage null); the stored
 *     response completes after the model's delay (mock-slow-<ms>; never with mock-hang)
 *   - `stream: true`: text/event-stream, `event: <type>\ndata: <json>\n\n`, sequence_number from 0:
 *     response.created, response.in_progress, per item output_item.added, its events (see
 *     responseEvents()), output_item.done, then response.completed. No [DONE].
 *
 * Behaviour switches by model name, as for chat (see mock-upstream.ts): mock-error-<status>,
 * mock-slow-<ms>, mock-hang, mock-drop, mock-flaky-<n>-<status> (counted per model and last user
 * text), mock-retry-after-<ms>, mock-invalid-json, mock-stream-empty, and
 *   mock-stream-cut        stream: created, in_progress, output_item.added, content_part.added and
 *                          two output_text deltas, then the socket is dropped (non-stream: as usual)
 *   mock-malformed-chunk   stream: response.created, then one event whose data is not JSON, then the
 *                          end without response.completed (non-stream: as usual)
 *   mock-stream-failed     stream: created, in_progress, then `response.failed` whose response has
 *                          status "failed", output [] and error {code: "server_error", message};
 *                          non-stream: that failed response with 200
 */
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { AZURE_MISSING_API_VERSION_BODY, errorBody } from './mock-openai-chunks';
import { inputItems, lastUserText, newId, planResponse, responseEvents, responseObject, sseEvent } from './mock-openai-responses-body';
import { invalidCreateBody } from './mock-openai-responses-validate';
// A cycle (mock-upstream.ts imports this file), harmless: both only call each other per request.
import { answerFailureSwitch, behaviourOf, dropConnection, sendError, sendJson } from './mock-upstream';
import { streamEvents } from './mock-sse';

const ROUTE = /^(\/v1|\/openai\/v1|\/openai|)\/responses(?:\/([^/]+)(\/input_items|\/cancel)?)?$/;

const NO_API_KEY_BODY = errorBody(
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username. You can obtain an API key from https://platform.openai.com/account/api-keys.",
  'invalid_request_error',
);
const AZURE_UNAUTHORIZED_BODY = JSON.stringify({
  error: {
    code: '401',
    message:
      'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
  },
});
const SYNCHRONOUS_CANCEL_BODY = errorBody('Cannot cancel a synchronous response.', 'invalid_request_error');
const INVALID_JSON_REPLY = '{"id":"resp_broken","object":"response", this is not JSON';
const MALFORMED_EVENT = 'event: response.in_progress\ndata: {"type":"response.in_progress", this is not JSON\n\n';
const FAILURE = { code: 'server_error', message: 'The model failed to generate a response. (mock-stream-failed)' };

const notFoundBody = (id: string) => errorBody(`Response with id '${id}' not found.`, 'invalid_request_error');

interface Stored {
  response: Record<string, any>;
  input: any[];
  /** Background responses: completes the response. */
  timer?: NodeJS.Timeout;
}

/** Stored responses per mock server (keyed by its flaky counters, one Map per server). */
const stores = new WeakMap<object, Map<string, Stored>>();
function storeOf(call: MockCall): Map<string, Stored> {
  let store = stores.get(call.flakyFailures);
  if (!store) stores.set(call.flakyFailures, (store = new Map()));
  return store;
}

export function serveOpenAIResponses(res: http.ServerResponse, call: MockCall): boolean {
  const route = ROUTE.exec(call.path);
  if (!route) return false;
  const [, prefix, rawId, sub] = route;
  const { method } = call;
  const id = rawId === undefined ? undefined : decodeURIComponent(rawId);
  const action =
    id === undefined
      ? method === 'POST' && 'create'
      : sub === undefined
        ? (method === 'GET' && 'retrieve') || (method === 'DELETE' && 'delete')
        : sub === '/input_items'
          ? method === 'GET' && 'input_items'
          : method === 'POST' && 'cancel';
  if (!action) return false; // mock-upstream answers 404 Invalid URL

  const query = new URLSearchParams(call.rawQuery);
  if (prefix === '/openai' && !query.has('api-version')) return answered(res, 404, AZURE_MISSING_API_VERSION_BODY);
  if (prefix.startsWith('/openai')) {
    const apiKey = call.headers['api-key'];
    if (!(typeof apiKey === 'string' && apiKey) && !hasBearer(call)) return answered(res, 401, AZURE_UNAUTHORIZED_BODY);
  } else if (!hasBearer(call)) {
    return answered(res, 401, NO_API_KEY_BODY);
  }

  const store = storeOf(call);
  if (action === 'create') {
    create(res, call, store);
    return true;
  }
  const stored = store.get(id!);
  if (!stored) return answered(res, 404, notFoundBody(id!));
  if (action === 'retrieve') {
    if (query.get('stream') === 'true') {
      const after = Number(query.get('starting_after') ?? -1);
      const events = responseEvents(stored.response).filter((event) => event.sequence_number > after);
      streamEvents(res, events.map(sseEvent), { delayMs: 0 });
    } else {
      sendJson(res, 200, JSON.stringify(stored.response));
    }
  } else if (action === 'delete') {
    clearTimeout(stored.timer);
    store.delete(id!);
    sendJson(res, 200, JSON.stringify({ id, object: 'response.deleted', deleted: true }));
  } else if (action === 'input_items') {
    sendJson(res, 200, JSON.stringify(listPage(stored.input, query)));
  } else {
    cancel(res, stored);
  }
  return true;
}

function answered(res: http.ServerResponse, status: number, body: string): true {
  sendJson(res, status, body);
  return true;
}

function hasBearer(call: MockCall): boolean {
  const authorization = call.headers.authorization;
  return typeof authorization === 'string' && /^Bearer\s+\S/i.test(authorization);
}

function create(res: http.ServerResponse, call: MockCall, store: Map<string, Stored>): void {
  const body = call.body;
  const invalid = invalidCreateBody(body, call.badJson);
  if (invalid) return sendJson(res, 400, invalid);
  if (body.previous_response_id != null && !store.has(body.previous_response_id)) {
    const message = `Previous response with id '${body.previous_response_id}' not found.`;
    return sendJson(res, 400, errorBody(message, 'invalid_request_error', 'previous_response_not_found', 'previous_response_id'));
  }

  const model: string = body.model;
  const behaviourModel = model.slice(model.lastIndexOf('/') + 1);
  const behaviour = behaviourOf(behaviourModel);
  const stream = body.stream === true;
  const background = body.background === true;
  // A background response answers at once (queued) even with mock-hang: it is the stored copy that never completes.
  const request = {
    stream,
    flakyCounters: call.flakyFailures,
    flakyKey: () => 'responses\u0000' + model + '\u0000' + lastUserText(body.input),
    hang: behaviour.hang && !background,
  };
  const replies = { error: (status: number, headers?: Record<string, string>) => sendError(res, status, headers), invalidJson: INVALID_JSON_REPLY };
  if (answerFailureSwitch(res, behaviour, request, replies)) return;
  const plan = planResponse(body, behaviourModel, chainItems(store, body.previous_response_id));

  const id = newId('resp_');
  const createdAt = Math.floor(Date.now() / 1000);
  const failed = behaviourModel === 'mock-stream-failed';
  const final = failed
    ? responseObject(body, id, createdAt, 'failed', [], null, FAILURE)
    : responseObject(body, id, createdAt, 'completed', plan.output, plan.usage);
  const headers = { 'x-request-id': 'req_' + id.slice(5, 37) };
  const malformed = behaviourModel === 'mock-malformed-chunk';
  const kept = body.store !== false && !(stream && (behaviour.streamCut || malformed || behaviour.streamEmpty));

  if (background && !stream) {
    // Answered at once, queued; the stored copy completes after the model's delay (never: mock-hang).
    const queued = responseObject(body, id, createdAt, 'queued', [], null);
    const stored: Stored = { response: queued, input: inputItems(body.input) };
    store.set(id, stored);
    if (!behaviour.hang) {
      stored.timer = setTimeout(() => {
        stored.response = failed ? final : responseObject(body, id, createdAt, 'completed', plan.output, plan.usage);
      }, behaviour.delayMs);
      stored.timer.unref();
    }
    return sendJson(res, 200, JSON.stringify(queued), headers);
  }
  if (kept) store.set(id, { response: final, input: inputItems(body.input) });

  if (stream) {
    const events = responseEvents(final);
    let chunks = events.map(sseEvent);
    let cutAfter: number | undefined;
    if (malformed) chunks = [chunks[0], MALFORMED_EVENT];
    else if (behaviour.streamCut) {
      // created, in_progress, …, the second delta: then the connection goes.
      const deltas = events.filter((event) => event.type.endsWith('.delta'));
      cutAfter = deltas.length >= 2 ? deltas[1].sequence_number : 1;
      chunks = chunks.slice(0, cutAfter + 1);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
    if (behaviour.streamEmpty) {
      res.flushHeaders();
      const timer = setTimeout(() => dropConnection(res), 10);
      res.once('close', () => clearTimeout(timer));
      return;
    }
    return streamEvents(res, chunks, behaviour, cutAfter !== undefined);
  }

  const reply = () => sendJson(res, 200, JSON.stringify(final), headers);
  if (behaviour.delayMs === 0) return reply();
  const timer = setTimeout(reply, behaviour.delayMs);
  res.once('close', () => clearTimeout(timer));
}

/** The conversation so far of a previous_response_id chain: every response's input and output items, oldest first. */
function chainItems(store: Map<string, Stored>, id: string | null | undefined): any[] {
  const items: any[] = [];
  for (let stored = id ? store.get(id) : undefined; stored; stored = store.get(stored.response.previous_response_id)) {
    items.unshift(...stored.input, ...stored.response.output);
  }
  return items;
}

/** A page of `GET …/input_items`: order (default desc), limit (default 20, 1…100), after (an item id). */
function listPage(items: any[], query: URLSearchParams): Record<string, unknown> {
  const ordered = query.get('order') === 'asc' ? items : [...items].reverse();
  const limit = Math.min(100, Math.max(1, Number(query.get('limit') ?? 20) || 20));
  const after = query.get('after');
  const start = after ? ordered.findIndex((item) => item.id === after) + 1 : 0;
  const data = ordered.slice(start, start + limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: start + limit < ordered.length,
  };
}

function cancel(res: http.ServerResponse, stored: Stored): void {
  const response = stored.response;
  if (!response.background) return sendJson(res, 400, SYNCHRONOUS_CANCEL_BODY);
  if (response.status === 'queued' || response.status === 'in_progress') {
    clearTimeout(stored.timer);
    stored.response = { ...response, status: 'cancelled', output: [], usage: null };
  }
  sendJson(res, 200, JSON.stringify(stored.response));
}
