/**
 * Anthropic's Message Batches API in the mock upstream (mock-anthropic.ts hands it the routes below,
 * after its header checks: `x-api-key` required (401), `anthropic-version` required (400)), with the
 * batches kept in memory per mock server (`mock.anthropicBatches`, an AnthropicBatchesMock; reset()
 * keeps the batches). Errors in Anthropic's shape {type: "error", error: {type, message}, request_id}.
 *
 * Routes (also without /v1)
 *   POST   /v1/messages/batches                 {requests: [{custom_id, params}]} -> the MessageBatch, in_progress
 *   GET    /v1/messages/batches                 {data (newest first), has_more, first_id, last_id}: limit
 *                                               (default 20, 1…1000), after_id, before_id
 *   GET    /v1/messages/batches/{id}            the MessageBatch; an unknown (or deleted) id: 404 not_found_error
 *   POST   /v1/messages/batches/{id}/cancel     in_progress: processing_status "canceling" (cancel_initiated_at),
 *                                               then ended; canceling: unchanged; ended: 400
 *   DELETE /v1/messages/batches/{id}            an ended batch: {id, type: "message_batch_deleted"}; else 400
 *   GET    /v1/messages/batches/{id}/results    once ended: application/x-jsonl, one line per request (in
 *                                               request order) {"custom_id":…,"result":{…}}; before: 400
 *
 * Create checks (400 invalid_request_error, pydantic-style "<field>: …" as Anthropic words them):
 * the body a JSON object with `requests` only; requests a list of 1…100,000 items, each {custom_id,
 * params} and nothing else; custom_id a string of 1…64 characters matching ^[a-zA-Z0-9_-]{1,64}$
 * ("requests.<i>.custom_id: String should have at most 64 characters", …), unique ("requests.<i>.custom_id:
 * Duplicate custom_id '<id>' …"); params an object. As Anthropic documents, params themselves are
 * validated while the batch is processed: an invalid one is that request's `errored` result.
 *
 * The MessageBatch: {id: "msgbatch_01…", type: "message_batch", processing_status ("in_progress" |
 * "canceling" | "ended"), request_counts {processing, succeeded, errored, canceled, expired}, ended_at,
 * created_at, expires_at, archived_at: null, cancel_initiated_at, results_url}; times RFC 3339;
 * results_url the mock's own absolute URL …/v1/messages/batches/{id}/results, null until ended. As
 * Anthropic documents, every request counts as `processing` until the batch has ended.
 *
 * Processing, paced by the mock's clock (see BatchPace in mock-batch-support.ts): after stepMs, each
 * request in turn (lineMs before each) runs through the mock's own POST /v1/messages (mock-anthropic.ts)
 * with the create's x-api-key, anthropic-version and anthropic-beta: the same checks, message, usage
 * and model switches as a synchronous call. Results:
 *   {"type":"succeeded","message":{…}}                     a 200
 *   {"type":"errored","error":{"type":"error","error":{"type":…,"message":…},"request_id":…}}
 *                                                           any other answer (the route's error body; a
 *                                                           dropped or unreadable answer: api_error); a
 *                                                           params with stream: true is invalid_request_error
 *   {"type":"canceled"}                                     not run when a cancel ended the batch
 *   {"type":"expired"}                                      not run when the batch expired
 * expires_at = created_at + expiresInMs (default 24 h): then (or on expire(id)) the request running
 * is abandoned and the batch ends with the rest expired.
 *
 * For tests (mock.anthropicBatches): stepMs, lineMs, expiresInMs, hold('in_progress' | 'canceling',
 * {afterLines}), release(), expire(id), executions (Map custom_id -> times a batch ran a request with
 * that custom_id, across this server's batches; cleared by reset()), all (Map id -> record), settled(id).
 */
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { anthropicId, anthropicPage } from './mock-anthropic-body';
import { BatchPace, countExecution, type Dispatch } from './mock-batch-support';
// A cycle (mock-upstream.ts imports this file), harmless: calls happen per request.
import { sendJson } from './mock-upstream';

const ROUTE = /^(?:\/v1)?\/messages\/batches(?:\/([^/]+)(\/cancel|\/results)?)?$/;
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_REQUESTS = 100_000;
const BAD_JSON_MESSAGE = 'There was an error parsing the body of your request. Please check that it is valid JSON.';

/** How mock-anthropic.ts answers an error (its shape, its request-id header). */
export type AnthropicErrorReply = (res: http.ServerResponse, status: number, message?: string) => void;

/** One request of a Message Batch and its result. */
export interface AnthropicBatchRequest {
  custom_id: string;
  params: any;
  state: 'pending' | 'running' | 'succeeded' | 'errored' | 'canceled' | 'expired';
  /** Its `result` in the results file, once the batch has ended. */
  result?: Record<string, unknown>;
}

export interface AnthropicBatchRecord {
  /** The MessageBatch, as GET /v1/messages/batches/{id} answers it (live). */
  batch: Record<string, any>;
  requests: AnthropicBatchRequest[];
  /** Resolves with the MessageBatch once it has ended. */
  settled: Promise<Record<string, any>>;
  stop?: 'cancel' | 'expire';
  deleted?: boolean;
  /** Headers the requests are sent with: the create's key, version and betas. */
  headers: http.IncomingHttpHeaders;
  abortRunning?: () => void;
  clearExpiry?: () => void;
}

/** RFC 3339 with microseconds, as Anthropic writes its times. */
const rfc3339 = (ms = Date.now()) => new Date(ms).toISOString().replace(/Z$/, '000Z');

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, any> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Anthropic's Message Batches API of one mock server: the routes, and the pace and records tests use. */
export class AnthropicBatchesMock extends BatchPace {
  /** Every batch of this mock server, by id, oldest first (deleted ones too, marked). */
  readonly all = new Map<string, AnthropicBatchRecord>();
  /** How many times a batch ran a request with this custom_id (cleared by reset()). */
  readonly executions = new Map<string, number>();

  constructor(
    private readonly dispatch: Dispatch,
    /** The mock server's URL (results_url is absolute). */
    private readonly selfUrl: () => string,
  ) {
    super();
  }

  settled(id: string): Promise<Record<string, any>> {
    const record = this.all.get(id);
    if (!record) throw new Error(`mock: no message batch ${id}`);
    return record.settled;
  }

  /** Expires the batch now (while in progress; otherwise false, nothing changes). */
  expire(id: string): boolean {
    const record = this.all.get(id);
    if (!record || record.stop || record.batch.processing_status !== 'in_progress') return false;
    record.stop = 'expire';
    record.abortRunning?.();
    this.wake();
    return true;
  }

  override reset(): void {
    super.reset();
    this.executions.clear();
  }

  /** Whether `path` is one of the batch routes (mock-anthropic.ts checks the headers, then calls serve()). */
  static routes(method: string, path: string): boolean {
    return ROUTE.test(path) && ['GET', 'POST', 'DELETE'].includes(method);
  }

  /** Serves a batch route (the headers already checked); false for a method the route has not. */
  serve(res: http.ServerResponse, call: MockCall, error: AnthropicErrorReply): boolean {
    const route = ROUTE.exec(call.path);
    if (!route) return false;
    const [, rawId, sub] = route;
    const { method } = call;
    const headers = { 'request-id': anthropicId('req_') };
    if (rawId === undefined) {
      if (method === 'POST') this.create(res, call, error);
      else if (method === 'GET') {
        const visible = [...this.all.values()].filter((r) => !r.deleted).map((r) => r.batch as { id: string });
        const result = anthropicPage(visible.reverse(), new URLSearchParams(call.rawQuery), 'message batch');
        if ('problem' in result) error(res, 400, result.problem);
        else sendJson(res, 200, JSON.stringify(result.page), headers);
      } else return false;
      return true;
    }
    const action =
      sub === '/cancel'
        ? method === 'POST' && 'cancel'
        : sub === '/results'
          ? method === 'GET' && 'results'
          : method === 'GET'
            ? 'retrieve'
            : method === 'DELETE' && 'delete';
    if (!action) return false;
    const id = decodeURIComponent(rawId);
    const record = this.all.get(id);
    if (!record || record.deleted) {
      error(res, 404, `message_batch_id: no message batch '${id}'`);
      return true;
    }
    const { batch } = record;
    if (action === 'retrieve') sendJson(res, 200, JSON.stringify(batch), headers);
    else if (action === 'cancel') {
      if (batch.processing_status === 'ended') return (error(res, 400, `Message batch ${id} has already ended and cannot be canceled.`), true);
      if (batch.processing_status === 'in_progress' && !record.stop) {
        record.stop = 'cancel';
        Object.assign(batch, { processing_status: 'canceling', cancel_initiated_at: rfc3339() });
        record.abortRunning?.();
        this.wake();
      }
      sendJson(res, 200, JSON.stringify(batch), headers);
    } else if (action === 'delete') {
      if (batch.processing_status !== 'ended') return (error(res, 400, `Message batch ${id} is still processing: cancel it before deleting it.`), true);
      record.deleted = true;
      sendJson(res, 200, JSON.stringify({ id, type: 'message_batch_deleted' }), headers);
    } else {
      if (batch.processing_status !== 'ended')
        return (error(res, 400, `Message batch ${id} has not ended yet: its results are available once processing_status is "ended".`), true);
      const body = record.requests.map((r) => JSON.stringify({ custom_id: r.custom_id, result: r.result }) + '\n').join('');
      res.writeHead(200, { 'content-type': 'application/x-jsonl', 'content-length': Buffer.byteLength(body), ...headers });
      res.end(body);
    }
    return true;
  }

  private create(res: http.ServerResponse, call: MockCall, error: AnthropicErrorReply): void {
    if (call.badJson) return error(res, 400, BAD_JSON_MESSAGE);
    const problem = invalidCreate(call.body);
    if (problem) return error(res, 400, problem);
    const created = Date.now();
    const batch = {
      id: anthropicId('msgbatch_'),
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: call.body.requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: null as string | null,
      created_at: rfc3339(created),
      expires_at: rfc3339(created + this.expiresInMs),
      archived_at: null,
      cancel_initiated_at: null as string | null,
      results_url: null as string | null,
    };
    const forwarded: http.IncomingHttpHeaders = {};
    for (const name of ['x-api-key', 'anthropic-version', 'anthropic-beta']) if (call.headers[name] !== undefined) forwarded[name] = call.headers[name];
    const requests: AnthropicBatchRequest[] = call.body.requests.map((r: any) => ({ custom_id: r.custom_id, params: r.params, state: 'pending' }));
    const record: AnthropicBatchRecord = { batch, requests, settled: Promise.resolve(batch), headers: forwarded };
    this.all.set(batch.id, record);
    record.clearExpiry = this.after(this.expiresInMs, () => this.expire(batch.id));
    record.settled = this.run(record).then(() => batch);
    sendJson(res, 200, JSON.stringify(batch), { 'request-id': anthropicId('req_') });
  }

  /** Waits `ms`, or less when the batch is stopped meanwhile. */
  private async step(record: AnthropicBatchRecord, ms: number): Promise<void> {
    if (ms <= 0 || record.stop) return;
    let elapsed = false;
    const clear = this.after(ms, () => {
      elapsed = true;
      this.wake();
    });
    await this.until(() => elapsed || record.stop !== undefined);
    clear();
  }

  private async run(record: AnthropicBatchRecord): Promise<void> {
    const { requests } = record;
    await this.step(record, this.stepMs);
    for (let i = 0; i < requests.length && !record.stop; i++) {
      await this.until(() => record.stop !== undefined || !this.holds('in_progress', i));
      await this.step(record, this.lineMs);
      if (!record.stop) await this.runRequest(record, requests[i]);
    }
    await this.until(() => record.stop !== undefined || !this.holds('in_progress', requests.length));
    if (record.stop === 'cancel') {
      await this.sleep(this.stepMs);
      await this.until(() => !this.holds('canceling'));
    }
    this.end(record);
  }

  private async runRequest(record: AnthropicBatchRecord, request: AnthropicBatchRequest): Promise<void> {
    countExecution(this.executions, request.custom_id);
    request.state = 'running';
    const errored = (type: string, message: string) => ({
      type: 'errored',
      error: { type: 'error', error: { type, message }, request_id: anthropicId('req_') },
    });
    if (isObject(request.params) && request.params.stream === true) {
      request.state = 'errored';
      request.result = errored('invalid_request_error', 'stream: streaming is not supported in the Message Batches API');
      return;
    }
    const call = this.dispatch('POST', '/v1/messages', record.headers, request.params);
    record.abortRunning = () => call.abort();
    const reply = await call.reply;
    record.abortRunning = undefined;
    if (reply.dropped && record.stop) {
      request.state = 'pending'; // abandoned: canceled or expired when the batch ends
      return;
    }
    const body = reply.dropped ? undefined : parseJson(reply.body);
    if (reply.status === 200 && body?.type === 'message') {
      request.state = 'succeeded';
      request.result = { type: 'succeeded', message: body };
    } else {
      request.state = 'errored';
      request.result = reply.status !== 200 && body?.type === 'error' ? { type: 'errored', error: body } : errored('api_error', 'Internal server error');
    }
  }

  /** Ends the batch: requests not run are canceled or expired; the counts and results_url are set. */
  private end(record: AnthropicBatchRecord): void {
    const { batch, requests } = record;
    for (const request of requests) {
      if (request.state === 'pending' || request.state === 'running') {
        request.state = record.stop === 'expire' ? 'expired' : 'canceled';
        request.result = { type: request.state };
      }
    }
    const count = (state: AnthropicBatchRequest['state']) => requests.filter((r) => r.state === state).length;
    batch.request_counts = { processing: 0, succeeded: count('succeeded'), errored: count('errored'), canceled: count('canceled'), expired: count('expired') };
    Object.assign(batch, { processing_status: 'ended', ended_at: rfc3339(), results_url: `${this.selfUrl()}/v1/messages/batches/${batch.id}/results` });
    record.clearExpiry?.();
  }
}

/** The first problem of a create body, in Anthropic's words, or null (params are checked while processing). */
function invalidCreate(body: unknown): string | null {
  if (!isObject(body)) return 'body: Input should be a valid dictionary';
  const extra = Object.keys(body).find((field) => field !== 'requests');
  if (extra) return `${extra}: Extra inputs are not permitted`;
  const requests = body.requests;
  if (requests === undefined) return 'requests: Field required';
  if (!Array.isArray(requests)) return 'requests: Input should be a valid list';
  if (requests.length === 0) return 'requests: List should have at least 1 item after validation, not 0';
  if (requests.length > MAX_REQUESTS) return `requests: List should have at most ${MAX_REQUESTS} items after validation, not ${requests.length}`;
  const seen = new Set<string>();
  for (const [i, request] of requests.entries()) {
    const at = `requests.${i}`;
    if (!isObject(request)) return `${at}: Input should be a valid dictionary`;
    const unknown = Object.keys(request).find((field) => field !== 'custom_id' && field !== 'params');
    if (unknown) return `${at}.${unknown}: Extra inputs are not permitted`;
    const id: unknown = request.custom_id;
    if (id === undefined) return `${at}.custom_id: Field required`;
    if (typeof id !== 'string') return `${at}.custom_id: Input should be a valid string`;
    if (id.length === 0) return `${at}.custom_id: String should have at least 1 character`;
    if (id.length > 64) return `${at}.custom_id: String should have at most 64 characters`;
    if (!CUSTOM_ID.test(id)) return `${at}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
    if (seen.has(id)) return `${at}.custom_id: Duplicate custom_id '${id}': each request in a Message Batch needs a unique custom_id`;
    seen.add(id);
    if (request.params === undefined) return `${at}.params: Field required`;
    if (!isObject(request.params)) return `${at}.params: Input should be a valid dictionary`;
  }
  return null;
}
