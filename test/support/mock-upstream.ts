/**
 * A mock upstream model provider speaking OpenAI's wire format, built on bare
 * `node:http` so it is also fast enough to be the "bare" baseline of the benchmark.
 *
 * Routes
 *   POST /v1/chat/completions, POST /chat/completions, POST /openai/v1/chat/completions
 *   POST /openai/deployments/{deployment}/chat/completions?api-version=...   (Azure OpenAI)
 *   POST /v1/embeddings, /v1/images/generations (and Azure's): see mock-openai-operations.ts
 *   GET  /v1/models (and /models, /v1/models/{id}), /v1/fine_tuning/jobs/…: see mock-openai-fine-tuning.ts
 *   /v1/vector_stores/…: see mock-openai-vector-stores.ts
 *   POST /v1/audio/speech (and Azure's): see mock-openai-audio.ts
 *   /v1/files/…, POST /v1/audio/transcriptions|translations (multipart, streamed; and Azure's):
 *                                                      see mock-openai-files.ts
 *   /v1/batches/… (and Azure's /openai/batches?api-version=…)  OpenAI's Batch API: see mock-openai-batches.ts
 *   POST /v1/messages (and /messages)                  Anthropic's Messages API: see mock-anthropic.ts
 *   /v1/messages/batches/…                             Anthropic's Message Batches API: see mock-anthropic-batches.ts
 *   POST /v1beta/models/{model}:generateContent, …:streamGenerateContent (also under /v1),
 *        …:countTokens, …:embedContent, …:batchEmbedContents; GET /v1beta/models[/{model}]
 *                                                      Google's Gemini API: see mock-gemini.ts
 *   POST /v2/chat, /v2/embed, /v2/rerank               Cohere's v2 API: see mock-cohere.ts
 *   POST /token, POST /v1/projects/{p}/locations/{r}/publishers/{google|anthropic}/models/{m}:{method}
 *                                                      Vertex AI and its OAuth2 token endpoint: see mock-vertex.ts
 *   POST /model/{modelId}/converse[-stream]            AWS Bedrock Runtime (SigV4 verified): see mock-bedrock.ts
 *   anything else -> 404 with OpenAI's error envelope
 *
 * Replies (see mock-openai-chunks.ts for the exact bodies and SSE chunks)
 *   - content "Hello from mock", or the rest of the last user message if it starts with "echo:"
 *   - with `tools` and a last user message mentioning "weather": a tool call to the first tool,
 *     arguments {"location":"Paris"}, finish_reason "tool_calls"
 *   - a tool script (every chat mock follows it, in its own shapes; syntax and rules in
 *     mock-tool-script.ts): the last user text message starts with "tools:", then steps separated
 *     by " | ", each step calls separated by " ; ", each call `name {json arguments}`, e.g.
 *       tools: docs__search_docs {"query":"refunds"} ; docs__add {"a":1,"b":2} | docs__add {"a":3,"b":4}
 *     Round r (the assistant messages with tool_calls after that user message) answers step r's
 *     calls: tool_calls ids "call_<id>0", "call_<id>0p1", … (parallel calls in one message; streamed
 *     one after another, each a header delta then its argument fragments), finish_reason
 *     "tool_calls"; a tool not in `tools` (or tool_choice "none"): content "no tool <name>".
 *     After the last step: content "results: " + the `role: tool` contents (string or text parts)
 *     after that user message, joined by " / "
 *   - `n` > 1 gives n identical choices; `stream: true` streams one chunk per word
 *   - usage: prompt_tokens = ceil(chars of all message contents / 4) (min 1),
 *     completion_tokens = words of the reply (x n; tool calls: their argument fragments, 5 for
 *     {"location":"Paris"}),
 *     model "mock-cached": cached_tokens = floor(prompt_tokens / 2),
 *     models starting with "o" (o3-mini...): reasoning_tokens 5, included in completion_tokens
 *
 * Behaviour switches, chosen by the MODEL name (a "provider/" prefix is ignored):
 *   mock-error-<status>  that status with an OpenAI error body (429 adds `retry-after: 1`)
 *   mock-slow-<ms>       wait <ms> before answering, or between stream chunks
 *   mock-stream-cut      stream the role chunk and two content chunks, then destroy the socket
 *   mock-invalid-json    200 application/json whose body is not JSON
 *   mock-hang            never answer (until the client goes away)
 *   mock-flaky-<n>-<status>  the first n requests with this exact model and last user message
 *                        answer <status> (as mock-error-<status>); later ones succeed as usual.
 *                        Counters live per mock server and are cleared by reset()
 *   mock-retry-after-<ms>  429 with `retry-after-ms: <ms>` and `retry-after: <ceil(ms / 1000)>`
 *   mock-drop            destroy the socket before any response (a network error for the client)
 *   mock-stream-empty    stream: 200 text/event-stream headers, then destroy the socket before the
 *                        first event (a stream that fails before its first byte); otherwise as mock-drop
 *
 * A connection the mock drops on purpose (mock-stream-cut, mock-drop, mock-stream-empty) is not
 * recorded as `aborted`: that flag means the client went away.
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import {
  AZURE_MISSING_API_VERSION_BODY,
  BAD_JSON_BODY,
  INVALID_JSON_REPLY,
  MISSING_MESSAGES_BODY,
  MISSING_MODEL_BODY,
  STREAM_OPTIONS_WITHOUT_STREAM_BODY,
  SSE_DONE,
  chatCompletionBody,
  chatCompletionEvents,
  errorBody,
  lastUserMessageText,
  mockErrorBody,
  planChatCompletion,
  type ChatPlan,
} from './mock-openai-chunks';
import { serveAnthropic } from './mock-anthropic';
import { AnthropicBatchesMock } from './mock-anthropic-batches';
import { CapturedResponse, type Dispatch } from './mock-batch-support';
import { OpenAIBatchesMock } from './mock-openai-batches';
import { serveCohere } from './mock-cohere';
import { serveBedrock } from './mock-bedrock';
import { serveGemini } from './mock-gemini';
import { serveResponsesSocket, type ResponsesSocketConnection } from './mock-openai-responses-socket';
import { createVertexMock, type VertexMock } from './mock-vertex';
import { serveOpenAIAudio } from './mock-openai-audio';
import { serveOpenAIFiles, serveOpenAIMultipart, type RecordedUpload } from './mock-openai-files';
import { serveOpenAIFineTuning } from './mock-openai-fine-tuning';
import { serveOpenAIOperation } from './mock-openai-operations';
import { serveOpenAIVectorStores } from './mock-openai-vector-stores';
import { serveOpenAIResponses } from './mock-openai-responses';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or undefined when there was none or it was not JSON. */
  body: any;
  /** The body's bytes as they arrived (not for multipart uploads: see `upload`). */
  rawBody?: Buffer;
  /** '1.1' or '2.0': the protocol the request came in on. */
  httpVersion: string;
  /** Set when the client went away before the reply was complete (e.g. aborted a stream). */
  aborted?: boolean;
  /** When (Date.now()) the client went away. */
  abortedAt?: number;
  /** A multipart upload (files, transcriptions): its fields and files, see mock-openai-files.ts. */
  upload?: RecordedUpload;
}

export interface MockUpstream {
  /** e.g. http://127.0.0.1:PORT (no trailing slash, no /v1) */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Vertex AI's routes and token endpoint: register service accounts, count token requests (mock-vertex.ts). */
  vertex: VertexMock;
  /** Connections to the Responses API's WebSocket mode (plain HTTP servers only; see mock-openai-responses-socket.ts). */
  responsesSockets: ResponsesSocketConnection[];
  /** OpenAI's Batch API: its pace (stepMs, lineMs, expiresInMs, hold, release, expire), its batches and executions per custom_id (mock-openai-batches.ts). */
  batches: OpenAIBatchesMock;
  /** Anthropic's Message Batches API: the same controls and records (mock-anthropic-batches.ts). */
  anthropicBatches: AnthropicBatchesMock;
  /**
   * Forget the recorded requests (the array is emptied in place), the mock-flaky-* counters, Vertex's counts, and the
   * batches' executions counters and pace (batches and files are kept).
   */
  reset(): void;
  close(): Promise<void>;
}

export interface MockUpstreamOptions {
  /** Port to listen on (127.0.0.1); default: a free ephemeral port. */
  port?: number;
  /** Record every request in `requests` (default true; the benchmark passes false). */
  record?: boolean;
  /**
   * Serve over TLS with this key and certificate (see test-certificates.ts): `url` is then
   * https://localhost:PORT. The server offers HTTP/2 and HTTP/1.1 (ALPN), as providers do.
   */
  tls?: { key: string; cert: string };
  /** With `tls`: what ALPN offers: 'h2' (default: HTTP/2, HTTP/1.1 for clients without it) or 'http/1.1' only. */
  alpn?: 'h2' | 'http/1.1';
  /** With HTTP/2: the server's SETTINGS_MAX_CONCURRENT_STREAMS (default: Node's, no limit). */
  maxConcurrentStreams?: number;
}

const CHAT_PATHS = new Set(['/v1/chat/completions', '/chat/completions', '/openai/v1/chat/completions']);
const AZURE_CHAT_PATH = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;

export interface Behaviour {
  errorStatus?: number;
  delayMs: number;
  streamCut?: boolean;
  invalidJson?: boolean;
  hang?: boolean;
  /** mock-flaky-<n>-<status>: fail the first `failures` requests (per model + last user message). */
  flaky?: { failures: number; status: number };
  retryAfterMs?: number;
  drop?: boolean;
  streamEmpty?: boolean;
  /** mock-stream-no-done: a stream that ends cleanly after a few chunks, without finish_reason or [DONE]. */
  streamNoDone?: boolean;
  /** mock-cut-body: a 200 JSON answer whose connection is reset halfway through the body. */
  cutBody?: boolean;
  /** mock-error-in-200: a 200 whose body is only an error envelope, as some servers send. */
  errorIn200?: boolean;
  /** mock-huge-<bytes>: a 200 JSON answer of about that many bytes. */
  hugeBytes?: number;
}
const NORMAL: Behaviour = { delayMs: 0 };

export function behaviourOf(model: string): Behaviour {
  if (!model.startsWith('mock-')) return NORMAL;
  let match = /^mock-error-(\d{3})$/.exec(model);
  if (match) return { errorStatus: Number(match[1]), delayMs: 0 };
  match = /^mock-slow-(\d+)$/.exec(model);
  if (match) return { delayMs: Number(match[1]) };
  match = /^mock-flaky-(\d+)-(\d{3})$/.exec(model);
  if (match) return { delayMs: 0, flaky: { failures: Number(match[1]), status: Number(match[2]) } };
  match = /^mock-retry-after-(\d+)$/.exec(model);
  if (match) return { delayMs: 0, retryAfterMs: Number(match[1]) };
  if (model === 'mock-stream-cut') return { delayMs: 0, streamCut: true };
  if (model === 'mock-invalid-json') return { delayMs: 0, invalidJson: true };
  if (model === 'mock-hang') return { delayMs: 0, hang: true };
  if (model === 'mock-drop') return { delayMs: 0, drop: true };
  if (model === 'mock-stream-empty') return { delayMs: 0, streamEmpty: true };
  if (model === 'mock-error-in-200') return { delayMs: 0, errorIn200: true };
  if (model === 'mock-stream-no-done') return { delayMs: 0, streamNoDone: true };
  if (model === 'mock-cut-body') return { delayMs: 0, cutBody: true };
  match = /^mock-huge-(\d+)$/.exec(model);
  if (match) return { delayMs: 0, hugeBytes: Number(match[1]) };
  return NORMAL;
}

/** Responses the mock cut on purpose (mock-stream-cut, mock-drop, mock-stream-empty): not a client abort. */
const cutOnPurpose = new WeakSet<http.ServerResponse>();

/** Drops the connection without an answer (or after the headers already sent). */
export function dropConnection(res: http.ServerResponse): void {
  cutOnPurpose.add(res);
  // Over HTTP/2 an answer breaks off as its stream reset (the connection carries others).
  const stream = (res as unknown as { stream?: http2.ServerHttp2Stream }).stream;
  if (stream) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  else res.destroy();
}

const ID_PREFIX = 'chatcmpl-' + Math.random().toString(36).slice(2, 10);
let sequence = 0;

export function sendJson(res: http.ServerResponse, status: number, body: string, extra?: Record<string, string>): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...extra,
  });
  res.end(body);
}

/** The error `mock-error-<status>` answers (429 adds `retry-after: 1`, as OpenAI does). */
export function sendError(res: http.ServerResponse, status: number, headers?: Record<string, string>): void {
  sendJson(res, status, mockErrorBody(status), headers ?? (status === 429 ? { 'retry-after': '1' } : undefined));
}

/** How a vendor route answers the failure switches: in its own error shape. */
export interface FailureReplies {
  /** The vendor's error answer; `headers` carry the retry hints of mock-retry-after-<ms>. */
  error(status: number, headers?: Record<string, string>): void;
  /** A 200 whose body is not JSON (mock-invalid-json). */
  invalidJson: string;
  /** For a vendor whose 429 says when to retry in its body (Gemini); default `error(429, retry headers)`. */
  retryAfter?(ms: number): void;
}

/**
 * The failure switches every route shares: mock-hang, mock-drop, mock-stream-empty (a
 * request that is no stream), mock-flaky-<n>-<status> (counted per `flakyKey`),
 * mock-error-<status>, mock-retry-after-<ms>, mock-invalid-json, mock-error-in-200 and
 * mock-huge-<bytes>, mock-cut-body (non-streamed requests). Answers the one the
 * behaviour names and returns true; false lets the route answer normally.
 */
export function answerFailureSwitch(
  res: http.ServerResponse,
  behaviour: Behaviour,
  request: { stream: boolean; flakyCounters: Map<string, number>; flakyKey: () => string; hang?: boolean },
  replies: FailureReplies,
): boolean {
  if (request.hang ?? behaviour.hang) return true; // never answer; the record's close listener notes the abort
  if (behaviour.drop || (behaviour.streamEmpty && !request.stream)) {
    dropConnection(res);
    return true;
  }
  if (behaviour.flaky) {
    const key = request.flakyKey();
    const failed = request.flakyCounters.get(key) ?? 0;
    if (failed < behaviour.flaky.failures) {
      request.flakyCounters.set(key, failed + 1);
      replies.error(behaviour.flaky.status);
      return true;
    }
  }
  if (behaviour.errorStatus) {
    replies.error(behaviour.errorStatus);
    return true;
  }
  if (behaviour.retryAfterMs !== undefined) {
    const ms = behaviour.retryAfterMs;
    if (replies.retryAfter) replies.retryAfter(ms);
    else replies.error(429, { 'retry-after-ms': String(ms), 'retry-after': String(Math.ceil(ms / 1000)) });
    return true;
  }
  if (behaviour.invalidJson) {
    sendJson(res, 200, replies.invalidJson);
    return true;
  }
  if (behaviour.errorIn200 && !request.stream) {
    sendJson(res, 200, JSON.stringify({ error: { message: 'The server is overloaded', type: 'server_error', code: null } }));
    return true;
  }
  if (behaviour.cutBody && !request.stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('{"id":"chatcmpl-cut","object":"chat.completion","choices":[{"index":0,', () => setTimeout(() => dropConnection(res), 10));
    return true;
  }
  if (behaviour.hugeBytes && !request.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"padding":"${'x'.repeat(behaviour.hugeBytes)}"}`);
    return true;
  }
  return false;
}

function parseQuery(rawQuery: string): Record<string, string> {
  return rawQuery ? Object.fromEntries(new URLSearchParams(rawQuery)) : {};
}

export async function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const record = options.record ?? true;
  const requests: RecordedRequest[] = [];
  /** mock-flaky-*: failures answered so far, per model + last user message. */
  const flakyFailures = new Map<string, number>();
  const vertex = createVertexMock();
  let selfUrl = '';

  /** Runs a request through the routes below without recording it: how a batch's requests are answered. */
  const dispatch: Dispatch = (method, path, headers, body) => {
    const res = new CapturedResponse();
    const req = { method, url: path, headers: { 'content-type': 'application/json', ...headers }, httpVersion: '1.1' } as http.IncomingMessage;
    try {
      handle(req, res as unknown as http.ServerResponse, Buffer.from(body === undefined ? '' : JSON.stringify(body)), false);
    } catch (error) {
      if (!res.headersSent) sendJson(res as unknown as http.ServerResponse, 500, errorBody(`Mock upstream failure: ${String(error)}`, 'server_error'));
      else res.destroy();
    }
    return { reply: res.reply, abort: () => res.abort() };
  };
  const batches = new OpenAIBatchesMock(dispatch, flakyFailures);
  const anthropicBatches = new AnthropicBatchesMock(dispatch, () => selfUrl);

  /** Records a request, noting when the client goes away before the answer is complete. */
  const track = (rec: RecordedRequest, res: http.ServerResponse): void => {
    requests.push(rec);
    res.once('close', () => {
      // Over HTTP/2 a response reads as finished even when the client reset its stream: whether the mock ended it tells.
      const overHttp2 = (res as unknown as { stream?: unknown }).stream !== undefined;
      const cut = overHttp2 ? !res.writableEnded : !res.writableFinished;
      if (cut && !cutOnPurpose.has(res)) Object.assign(rec, { aborted: true, abortedAt: Date.now() });
    });
  };

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Over HTTP/2 the host travels as :authority; servers read it as Host (AWS checks it in signatures).
    if (req.headers.host === undefined && typeof req.headers[':authority'] === 'string') req.headers.host = req.headers[':authority'];
    // Multipart uploads stream through their own parser (a file may be hundreds of MB).
    if (serveOpenAIMultipart(req, res, { record: record ? track : undefined, flakyFailures })) return;
    // Read the whole body (most requests arrive in a single chunk).
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    req.on('data', (chunk: Buffer) => {
      if (first === undefined) first = chunk;
      else (more ??= [first]).push(chunk);
    });
    req.on('end', () => {
      const bytes = more ? Buffer.concat(more) : (first ?? Buffer.alloc(0));
      try {
        handle(req, res, bytes);
      } catch (error) {
        // A bug or odd input (e.g. a malformed %-escape) must not take the test process down.
        if (!res.headersSent) sendJson(res, 500, errorBody(`Mock upstream failure: ${error}`, 'server_error'));
        else res.destroy();
      }
    });
  };
  // Over HTTP/2 the compatibility API hands the same handler a request and a response per stream.
  const server: http.Server | http2.Http2SecureServer | https.Server = !options.tls
    ? http.createServer(onRequest)
    : options.alpn === 'http/1.1'
      ? https.createServer({ ...options.tls }, onRequest)
      : http2.createSecureServer(
          {
            ...options.tls,
            allowHTTP1: true,
            maxSessionMemory: 64,
            settings: options.maxConcurrentStreams ? { maxConcurrentStreams: options.maxConcurrentStreams } : undefined,
          },
          onRequest as never,
        );
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  function handle(req: http.IncomingMessage, res: http.ServerResponse, bytes: Buffer, recorded = record): void {
    const raw = bytes.toString();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const rawQuery = q === -1 ? '' : url.slice(q + 1);

    let body: any;
    let badJson = false;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        badJson = true;
      }
    }

    let rec: RecordedRequest | undefined;
    if (recorded) {
      rec = { method, path, query: parseQuery(rawQuery), headers: req.headers, body, rawBody: bytes, httpVersion: req.httpVersion };
      track(rec, res);
    }

    // The other vendors' wire formats and OpenAI's Responses API, each in a file of its own.
    const call = { method, path, rawQuery, headers: req.headers, body, badJson, flakyFailures, rawBody: raw };
    if (
      vertex.serve(res, call, selfUrl) ||
      serveAnthropic(res, call, anthropicBatches) ||
      batches.serve(res, call) ||
      serveBedrock(res, call) ||
      serveGemini(res, call) ||
      serveCohere(res, call) ||
      serveOpenAIResponses(res, call) ||
      serveOpenAIFineTuning(res, call) ||
      serveOpenAIVectorStores(res, call) ||
      serveOpenAIAudio(res, call) ||
      serveOpenAIFiles(res, call)
    )
      return;

    if (method === 'POST') {
      if (serveOpenAIOperation(res, path, rawQuery, body, badJson, flakyFailures)) return;
      if (CHAT_PATHS.has(path)) return chatCompletion(res, body, badJson);
      const azure = AZURE_CHAT_PATH.exec(path);
      if (azure) {
        const hasApiVersion = new URLSearchParams(rawQuery).has('api-version');
        if (!hasApiVersion) return sendJson(res, 404, AZURE_MISSING_API_VERSION_BODY);
        return chatCompletion(res, body, badJson, decodeURIComponent(azure[1]));
      }
    }
    sendJson(res, 404, errorBody(`Invalid URL (${method} ${path})`, 'invalid_request_error'));
  }

  function chatCompletion(res: http.ServerResponse, body: any, badJson: boolean, deployment?: string): void {
    if (badJson || body === null || typeof body !== 'object' || Array.isArray(body)) {
      return sendJson(res, 400, BAD_JSON_BODY);
    }
    const model: string | undefined = typeof body.model === 'string' && body.model ? body.model : deployment;
    if (!model) return sendJson(res, 400, MISSING_MODEL_BODY);
    if (!Array.isArray(body.messages)) return sendJson(res, 400, MISSING_MESSAGES_BODY);
    const stream = body.stream === true;
    if (body.stream_options != null && !stream) return sendJson(res, 400, STREAM_OPTIONS_WITHOUT_STREAM_BODY);

    const behaviourModel = model.slice(model.lastIndexOf('/') + 1);
    const behaviour = behaviourOf(behaviourModel);
    const flakyKey = () => model + '\u0000' + lastUserMessageText(body.messages);
    const replies = { error: (status: number, headers?: Record<string, string>) => sendError(res, status, headers), invalidJson: INVALID_JSON_REPLY };
    if (answerFailureSwitch(res, behaviour, { stream, flakyCounters: flakyFailures, flakyKey }, replies)) return;

    const plan = planChatCompletion(body, model, behaviourModel);
    const id = ID_PREFIX + (++sequence).toString(36);
    const created = Math.floor(Date.now() / 1000);
    if (stream) {
      const includeUsage = body.stream_options?.include_usage === true;
      return streamChatCompletion(res, plan, id, created, includeUsage, behaviour);
    }

    const headers = { 'x-request-id': 'req_' + id.slice(9) };
    if (behaviour.delayMs === 0) return sendJson(res, 200, chatCompletionBody(plan, id, created), headers);
    const reply = () => sendJson(res, 200, chatCompletionBody(plan, id, created), headers);
    const timer = setTimeout(reply, behaviour.delayMs);
    res.once('close', () => clearTimeout(timer));
  }

  function streamChatCompletion(res: http.ServerResponse, plan: ChatPlan, id: string, created: number, includeUsage: boolean, behaviour: Behaviour): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-request-id': 'req_' + id.slice(9),
    });
    if (behaviour.streamEmpty) {
      // The headers reach the client, then the connection goes before the first event.
      res.flushHeaders();
      const timer = setTimeout(() => dropConnection(res), 10);
      res.once('close', () => clearTimeout(timer));
      return;
    }
    const events = chatCompletionEvents(plan, id, created, includeUsage);

    // Fast path: no delay, every chunk is ready at once; still one write per SSE event.
    if (behaviour.delayMs === 0 && !behaviour.streamCut && !behaviour.streamNoDone) {
      for (const event of events) res.write(event);
      res.end();
      return;
    }

    // Paced path: one event per tick/timer, stops as soon as the client goes away.
    let timer: NodeJS.Timeout | undefined;
    let written = 0;
    res.once('close', () => clearTimeout(timer));
    const pump = (): void => {
      if (res.destroyed) return;
      const next = events.next();
      if (next.done || next.value === SSE_DONE) return void res.end(next.value);
      written++;
      if (behaviour.streamNoDone && written === 3) return void res.end(next.value);
      if (behaviour.streamCut && written === 3) {
        // role chunk + two content chunks, then drop the connection without [DONE]
        res.write(next.value, () => setTimeout(() => dropConnection(res), 10));
        return;
      }
      res.write(next.value);
      timer = setTimeout(pump, behaviour.delayMs);
    };
    pump();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const responsesSockets: ResponsesSocketConnection[] = [];
  if (!options.tls) serveResponsesSocket(server as http.Server, responsesSockets);
  const port = (server.address() as AddressInfo).port;
  // The test certificate names localhost (and 127.0.0.1).
  selfUrl = options.tls ? `https://localhost:${port}` : `http://127.0.0.1:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url: selfUrl,
    port,
    requests,
    vertex,
    responsesSockets,
    batches,
    anthropicBatches,
    reset: () => {
      requests.length = 0;
      responsesSockets.length = 0;
      flakyFailures.clear();
      vertex.reset();
      batches.reset();
      anthropicBatches.reset();
    },
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        batches.close();
        anthropicBatches.close();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      })),
  };
}
