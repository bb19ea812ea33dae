/**
 * OpenAI's Batch API in the mock upstream, with the batches kept in memory per mock server
 * (`mock.batches`, an OpenAIBatchesMock; reset() keeps the batches, as the files mock keeps its files).
 *
 * Routes (also under /batches, Azure's `/openai/batches?api-version=…` (404 without it) and Azure's
 * `/openai/v1/batches`)
 *   POST /v1/batches                 {input_file_id, endpoint, completion_window, metadata?, output_expires_after?}
 *                                    -> the Batch object, status "validating"
 *   GET  /v1/batches?limit&after     {object: "list", data (newest first), first_id, last_id, has_more};
 *                                    limit 1…100, default 20
 *   GET  /v1/batches/{id}            the Batch; an unknown id is a 404 "No batch found with id '…'."
 *   POST /v1/batches/{id}/cancel     validating, in_progress or finalizing: status "cancelling", then
 *                                    "cancelled" with the requests answered so far in the output and
 *                                    error files; cancelling: the batch unchanged; a finished batch: 400
 *                                    "Cannot cancel a batch with status '<status>'."
 * Auth: `Authorization: Bearer …` required (401, OpenAI's error); on Azure's paths `api-key` or Bearer.
 *
 * Create checks (400 invalid_request_error, `param` naming the field): input_file_id, endpoint and
 * completion_window required; input_file_id a file of this mock uploaded with purpose "batch";
 * endpoint one of /v1/chat/completions, /v1/responses, /v1/embeddings, /v1/completions (on Azure's
 * paths also without /v1, as Azure writes them); completion_window "24h"; metadata at most 16
 * string pairs (keys ≤ 64 chars, values ≤ 512); output_expires_after {anchor: "created_at",
 * seconds 3600…2592000} (the output and error files' expires_at).
 *
 * The Batch object: {id: "batch_<32 hex>", object: "batch", endpoint, model (the first request's,
 * null until in progress), errors, input_file_id, completion_window, status, output_file_id,
 * error_file_id, created_at, in_progress_at, expires_at, finalizing_at, completed_at, failed_at,
 * expired_at, cancelling_at, cancelled_at, request_counts {total, completed, failed}, usage
 * {input_tokens, input_tokens_details {cached_tokens}, output_tokens, output_tokens_details
 * {reasoning_tokens}, total_tokens} (summed over the answered requests), metadata}. Times in seconds.
 *
 * Lifecycle, paced by the mock's clock (see BatchPace in mock-batch-support.ts):
 *   validating (stepMs) -> the input file's JSONL is checked; any problem fails the batch: status
 *     "failed", failed_at, errors {object: "list", data: [{code, message, param, line}]}:
 *       invalid_json_line           a line that is not JSON ("This line is not parseable as valid JSON.")
 *       invalid_request             a line that is JSON but no object, a field of the wrong type,
 *                                   a method other than POST
 *       missing_required_parameter  no custom_id, method, url or body
 *       invalid_url                 url not the batch's endpoint ("The URL provided for this request
 *                                   does not prefix-match the batch endpoint.")
 *       duplicate_custom_id         a custom_id already used on an earlier line
 *       empty_file                  no request at all (line null)
 *     (blank lines are skipped; `line` counts from 1)
 *   in_progress (stepMs, then each request after lineMs, one at a time): each request runs through
 *     the mock's own route for the endpoint (chat, responses, embeddings; /v1/completions has none,
 *     so its requests get the mock's 404), with the create's Authorization: the same bodies, usage
 *     and model switches as a synchronous call (mock-error-400 fails that request, mock-slow-<ms>
 *     delays it, mock-hang keeps the batch in progress until it is cancelled or expires, …). A body
 *     with `stream: true` is a 400 for that request. request_counts move as requests are answered.
 *   finalizing (stepMs) -> completed: the output file (purpose "batch_output", filename
 *     "batch_<id>_output.jsonl") holds the 200s, one line each
 *       {"id":"batch_req_…","custom_id":…,"response":{"status_code":200,"request_id":"req_…","body":{…}},"error":null}
 *     and the error file ("batch_<id>_error.jsonl") the others, the same shape with their status
 *     and error body. A file is made only when it has lines (else its id stays null). Both are read
 *     through GET /v1/files/{id} and /content (mock-openai-files.ts). Lines are in input order.
 *   expiry: expires_at = created_at + expiresInMs (default 24 h). When it passes while the batch is
 *     validating or in progress (or on expire(id)), the request running is abandoned and every
 *     request not answered goes in the error file as
 *       {"id":…,"custom_id":…,"response":null,"error":{"code":"batch_expired","message":"This request could not be executed before the completion window expired."}}
 *     (counted in request_counts.failed); status "expired", expired_at.
 *
 * For tests (mock.batches): stepMs, lineMs, expiresInMs, hold(state, {afterLines}), release(),
 * expire(id), executions (Map custom_id -> times a batch ran a request with that custom_id (sent it
 * to the mock's routes, or answered a stream one with its 400), across this server's batches;
 * cleared by reset()), all (Map id -> record: the
 * Batch object, its requests and their outcome), settled(id) (resolves when the batch is final).
 */
import { randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { BatchPace, countExecution, type Dispatch } from './mock-batch-support';
import { AZURE_MISSING_API_VERSION_BODY, BAD_JSON_BODY, errorBody } from './mock-openai-chunks';
import { storedFile, storeMockFile } from './mock-openai-files';
// A cycle (mock-upstream.ts imports this file), harmless: calls happen per request.
import { sendJson } from './mock-upstream';

const ROUTE = /^(\/v1|\/openai\/v1|\/openai|)\/batches(?:\/([^/]+)(\/cancel)?)?$/;
const ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/completions'];
/** Azure writes the endpoints without /v1 too. */
const AZURE_ENDPOINTS = [...ENDPOINTS, ...ENDPOINTS.map((endpoint) => endpoint.slice(3))];
const FINISHED = ['completed', 'failed', 'expired', 'cancelled'];
const EXPIRED_ERROR = { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' };
const SERVER_ERROR = { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null };

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

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const seconds = () => Math.floor(Date.now() / 1000);
const invalid = (message: string, param: string | null, code: string | null = null) => errorBody(message, 'invalid_request_error', code, param);
const typeName = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);

/** One problem of a batch's input file, as the Batch object's `errors.data` lists it. */
export interface BatchError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

/** One request of a batch (a line of its input file) and what became of it. */
export interface OpenAIBatchRequest {
  line: number;
  custom_id: string;
  url: string;
  body: any;
  state: 'pending' | 'running' | 'succeeded' | 'failed' | 'expired';
  /** Its line in the output or error file, once answered. */
  result?: Record<string, unknown>;
}

export interface OpenAIBatchRecord {
  /** The Batch object, as GET /v1/batches/{id} answers it (live). */
  batch: Record<string, any>;
  /** The requests read from the input file (empty when it was invalid). */
  requests: OpenAIBatchRequest[];
  /** The input file's problems (the batch fails with them once validated). */
  problems: BatchError[];
  /** Resolves with the Batch object once it is completed, failed, expired or cancelled. */
  settled: Promise<Record<string, any>>;
  /** What stops it early: a cancel or its expiry. */
  stop?: 'cancel' | 'expire';
  /** Headers the requests are sent with (the create's authorization). */
  headers: http.IncomingHttpHeaders;
  /** output_expires_after.seconds, for the output and error files. */
  outputExpiresAfter?: number;
  /** Gives up the request running (cancel, expiry). */
  abortRunning?: () => void;
  clearExpiry?: () => void;
}

/** OpenAI's Batch API of one mock server: the routes, and the pace and records tests use. */
export class OpenAIBatchesMock extends BatchPace {
  /** Every batch of this mock server, by id, oldest first. */
  readonly all = new Map<string, OpenAIBatchRecord>();
  /** How many times a batch ran a request with this custom_id (cleared by reset()). */
  readonly executions = new Map<string, number>();

  constructor(
    private readonly dispatch: Dispatch,
    /** The mock server's flaky counters' map: it names the server the files belong to. */
    private readonly server: Map<string, number>,
  ) {
    super();
  }

  /** Resolves with the Batch object once it is final. */
  settled(id: string): Promise<Record<string, any>> {
    const record = this.all.get(id);
    if (!record) throw new Error(`mock: no batch ${id}`);
    return record.settled;
  }

  /** Expires the batch now (validating or in progress; otherwise false, nothing changes). */
  expire(id: string): boolean {
    const record = this.all.get(id);
    if (!record || record.stop || !['validating', 'in_progress'].includes(record.batch.status)) return false;
    record.stop = 'expire';
    record.abortRunning?.();
    this.wake();
    return true;
  }

  override reset(): void {
    super.reset();
    this.executions.clear();
  }

  /** Serves the batch routes; false for any other path. */
  serve(res: http.ServerResponse, call: MockCall): boolean {
    const route = ROUTE.exec(call.path);
    if (!route) return false;
    const [, prefix, rawId, cancel] = route;
    const id = rawId === undefined ? undefined : decodeURIComponent(rawId);
    const action =
      id === undefined
        ? call.method === 'POST'
          ? 'create'
          : call.method === 'GET' && 'list'
        : cancel
          ? call.method === 'POST' && 'cancel'
          : call.method === 'GET' && 'retrieve';
    if (!action) return false; // mock-upstream answers 404 Invalid URL
    const azure = prefix.startsWith('/openai');
    if (prefix === '/openai' && !new URLSearchParams(call.rawQuery).has('api-version')) return answered(res, 404, AZURE_MISSING_API_VERSION_BODY);
    if (azure) {
      const apiKey = call.headers['api-key'];
      if (!(typeof apiKey === 'string' && apiKey) && !hasBearer(call)) return answered(res, 401, AZURE_UNAUTHORIZED_BODY);
    } else if (!hasBearer(call)) {
      return answered(res, 401, NO_API_KEY_BODY);
    }

    if (action === 'create') return answered(res, ...this.create(call, azure));
    if (action === 'list') return answered(res, 200, JSON.stringify(this.page(new URLSearchParams(call.rawQuery))));
    const record = this.all.get(id!);
    if (!record) return answered(res, 404, invalid(`No batch found with id '${id}'.`, null));
    if (action === 'retrieve') return answered(res, 200, JSON.stringify(record.batch));
    return answered(res, ...this.cancel(record));
  }

  private create(call: MockCall, azure: boolean): [number, string] {
    const body = call.body;
    if (call.badJson || body === null || typeof body !== 'object' || Array.isArray(body)) return [400, BAD_JSON_BODY];
    for (const field of ['input_file_id', 'endpoint', 'completion_window']) {
      if (body[field] === undefined || body[field] === null)
        return [400, invalid(`Missing required parameter: '${field}'.`, field, 'missing_required_parameter')];
      if (typeof body[field] !== 'string')
        return [400, invalid(`Invalid type for '${field}': expected a string, but got ${typeName(body[field])} instead.`, field, 'invalid_type')];
    }
    const endpoints = azure ? AZURE_ENDPOINTS : ENDPOINTS;
    if (!endpoints.includes(body.endpoint))
      return [400, invalid(`Invalid value: '${body.endpoint}'. Supported values are: ${listed(ENDPOINTS)}.`, 'endpoint', 'invalid_value')];
    if (body.completion_window !== '24h')
      return [400, invalid(`Invalid value: '${body.completion_window}'. Supported values are: '24h'.`, 'completion_window', 'invalid_value')];
    const badMetadata = invalidMetadata(body.metadata);
    if (badMetadata) return [400, badMetadata];
    let outputExpiresAfter: number | undefined;
    if (body.output_expires_after !== undefined) {
      const { anchor, seconds: after } = body.output_expires_after ?? {};
      if (anchor !== 'created_at')
        return [400, invalid(`Invalid value for 'output_expires_after.anchor': expected 'created_at'.`, 'output_expires_after.anchor')];
      if (!Number.isInteger(after) || after < 3600 || after > 2592000)
        return [400, invalid(`'output_expires_after.seconds' must be between 3600 and 2592000.`, 'output_expires_after.seconds')];
      outputExpiresAfter = after;
    }
    const file = storedFile(this.server, body.input_file_id);
    if (!file) return [400, invalid(`No such File object: ${body.input_file_id}`, 'input_file_id')];
    if (file.object.purpose !== 'batch') {
      const message = `The input file ${body.input_file_id} has purpose '${file.object.purpose}': a batch's input file must be uploaded with purpose 'batch'.`;
      return [400, invalid(message, 'input_file_id')];
    }

    const { requests, problems } = readInput(file.bytes, body.endpoint, azure);
    const created = seconds();
    const batch = {
      id: 'batch_' + hex(16),
      object: 'batch',
      endpoint: body.endpoint,
      model: null as string | null,
      errors: null as Record<string, unknown> | null,
      input_file_id: body.input_file_id,
      completion_window: '24h',
      status: 'validating',
      output_file_id: null as string | null,
      error_file_id: null as string | null,
      created_at: created,
      in_progress_at: null as number | null,
      expires_at: created + Math.ceil(this.expiresInMs / 1000),
      finalizing_at: null as number | null,
      completed_at: null as number | null,
      failed_at: null as number | null,
      expired_at: null as number | null,
      cancelling_at: null as number | null,
      cancelled_at: null as number | null,
      request_counts: { total: 0, completed: 0, failed: 0 },
      usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
      metadata: body.metadata ?? null,
    };
    // The requests are sent as the create was: its key (Azure's api-key as a Bearer token for the /v1 routes).
    const apiKey = call.headers['api-key'];
    const authorization = hasBearer(call) ? String(call.headers.authorization) : `Bearer ${typeof apiKey === 'string' ? apiKey : 'mock'}`;
    const record: OpenAIBatchRecord = { batch, requests, problems, settled: Promise.resolve(batch), headers: { authorization }, outputExpiresAfter };
    this.all.set(batch.id, record);
    record.clearExpiry = this.after(this.expiresInMs, () => this.expire(batch.id));
    record.settled = this.run(record).then(() => batch);
    return [200, JSON.stringify(batch)];
  }

  private cancel(record: OpenAIBatchRecord): [number, string] {
    const batch = record.batch;
    if (FINISHED.includes(batch.status)) return [400, invalid(`Cannot cancel a batch with status '${batch.status}'.`, null)];
    if (batch.status !== 'cancelling' && record.stop !== 'expire') {
      record.stop = 'cancel';
      Object.assign(batch, { status: 'cancelling', cancelling_at: seconds() });
      record.abortRunning?.();
      this.wake();
    }
    return [200, JSON.stringify(batch)];
  }

  private page(query: URLSearchParams): Record<string, unknown> {
    const all = [...this.all.values()].map((record) => record.batch).reverse();
    const limit = Math.min(100, Math.max(1, Number(query.get('limit') ?? 20) || 20));
    const after = query.get('after');
    const start = after ? all.findIndex((batch) => batch.id === after) + 1 : 0;
    const data = start === 0 && after ? [] : all.slice(start, start + limit);
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: start + data.length < all.length && data.length > 0,
    };
  }

  /** Waits `ms`, or less when the batch is stopped meanwhile. */
  private async step(record: OpenAIBatchRecord, ms: number): Promise<void> {
    if (ms <= 0 || record.stop) return;
    let elapsed = false;
    const clear = this.after(ms, () => {
      elapsed = true;
      this.wake();
    });
    await this.until(() => elapsed || record.stop !== undefined);
    clear();
  }

  /** Waits while the pace holds the batch in `state` (a stop ends the wait). */
  private holding(record: OpenAIBatchRecord, state: 'validating' | 'in_progress' | 'finalizing', linesDone = 0): Promise<void> {
    return this.until(() => record.stop !== undefined || !this.holds(state, linesDone));
  }

  private async run(record: OpenAIBatchRecord): Promise<void> {
    const { batch, requests } = record;
    await this.step(record, this.stepMs);
    await this.holding(record, 'validating');
    // An invalid file fails the batch, unless it was cancelled or expired while validating.
    if (record.problems.length && !record.stop) return this.fail(record);
    if (!record.stop) {
      Object.assign(batch, { status: 'in_progress', in_progress_at: seconds(), model: requests[0].body?.model ?? null });
      batch.request_counts.total = requests.length;
      await this.step(record, this.stepMs);
      for (let i = 0; i < requests.length && !record.stop; i++) {
        await this.holding(record, 'in_progress', i);
        await this.step(record, this.lineMs);
        if (!record.stop) await this.runRequest(record, requests[i]);
      }
      await this.holding(record, 'in_progress', requests.length);
    }
    if (!record.stop) {
      Object.assign(batch, { status: 'finalizing', finalizing_at: seconds() });
      await this.step(record, this.stepMs);
      await this.holding(record, 'finalizing');
    }
    if (record.stop === 'expire') return this.end(record, 'expired');
    if (record.stop === 'cancel') {
      await this.sleep(this.stepMs);
      await this.until(() => !this.holds('cancelling'));
      return this.end(record, 'cancelled');
    }
    this.end(record, 'completed');
  }

  private async runRequest(record: OpenAIBatchRecord, request: OpenAIBatchRequest): Promise<void> {
    const { batch } = record;
    countExecution(this.executions, request.custom_id);
    request.state = 'running';
    let status: number;
    let requestId: string;
    let body: any;
    if (request.body.stream === true) {
      [status, requestId] = [400, 'req_' + hex(16)];
      body = JSON.parse(invalid('Streaming is not supported in the Batch API.', 'stream'));
    } else {
      const path = '/v1' + (request.url.startsWith('/v1/') ? request.url.slice(3) : request.url);
      const call = this.dispatch('POST', path, record.headers, request.body);
      record.abortRunning = () => call.abort();
      const reply = await call.reply;
      record.abortRunning = undefined;
      if (reply.dropped && record.stop) {
        request.state = 'pending'; // abandoned: expired (or left out of a cancelled batch's files)
        return;
      }
      requestId = reply.headers['x-request-id'] ?? 'req_' + hex(16);
      body = reply.dropped ? undefined : parseJson(reply.body);
      status = body === undefined ? 500 : reply.status;
      if (body === undefined) body = { error: SERVER_ERROR };
    }
    request.result = { id: 'batch_req_' + hex(16), custom_id: request.custom_id, response: { status_code: status, request_id: requestId, body }, error: null };
    if (status === 200) {
      request.state = 'succeeded';
      batch.request_counts.completed++;
      addUsage(batch.usage, body?.usage);
    } else {
      request.state = 'failed';
      batch.request_counts.failed++;
    }
  }

  private fail(record: OpenAIBatchRecord): void {
    Object.assign(record.batch, { status: 'failed', failed_at: seconds(), errors: { object: 'list', data: record.problems } });
    record.clearExpiry?.();
  }

  /** Writes the output and error files and ends the batch in `status`. */
  private end(record: OpenAIBatchRecord, status: 'completed' | 'cancelled' | 'expired'): void {
    const { batch, requests } = record;
    if (status === 'expired') {
      batch.request_counts.total = requests.length;
      for (const request of requests.filter((r) => r.state === 'pending' || r.state === 'running')) {
        request.state = 'expired';
        request.result = { id: 'batch_req_' + hex(16), custom_id: request.custom_id, response: null, error: EXPIRED_ERROR };
        batch.request_counts.failed++;
      }
    }
    const file = (kind: 'output' | 'error', states: OpenAIBatchRequest['state'][]) => {
      const lines = requests.filter((r) => states.includes(r.state)).map((r) => JSON.stringify(r.result) + '\n');
      if (!lines.length) return null;
      const expiresAt = record.outputExpiresAfter === undefined ? null : seconds() + record.outputExpiresAfter;
      return storeMockFile(this.server, { purpose: 'batch_output', filename: `${batch.id}_${kind}.jsonl`, bytes: Buffer.from(lines.join('')), expiresAt }).id;
    };
    batch.output_file_id = file('output', ['succeeded']);
    batch.error_file_id = file('error', ['failed', 'expired']);
    const at = seconds();
    Object.assign(batch, { status, ...(status === 'completed' ? { completed_at: at } : status === 'cancelled' ? { cancelled_at: at } : { expired_at: at }) });
    record.clearExpiry?.();
  }
}

function answered(res: http.ServerResponse, status: number, body: string): true {
  sendJson(res, status, body);
  return true;
}

function hasBearer(call: MockCall): boolean {
  const authorization = call.headers.authorization;
  return typeof authorization === 'string' && /^Bearer\s+\S/i.test(authorization);
}

/** 'a', 'b', and 'c' (OpenAI's enum errors). */
const listed = (values: string[]) =>
  values
    .map((v) => `'${v}'`)
    .join(', ')
    .replace(/, ([^,]*)$/, ', and $1');

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** At most 16 pairs, keys ≤ 64 characters, values strings ≤ 512; the 400 body, or null. */
function invalidMetadata(metadata: unknown): string | null {
  if (metadata === undefined || metadata === null) return null;
  if (typeof metadata !== 'object' || Array.isArray(metadata))
    return invalid(`Invalid type for 'metadata': expected an object, but got ${typeName(metadata)} instead.`, 'metadata', 'invalid_type');
  const entries = Object.entries(metadata);
  if (entries.length > 16) {
    const message = `Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with ${entries.length} properties instead.`;
    return invalid(message, 'metadata', 'object_above_max_properties');
  }
  for (const [key, value] of entries) {
    if (key.length > 64) {
      const message = `Invalid 'metadata': too long key. Expected a key with maximum length 64, but got a key with length ${key.length} instead.`;
      return invalid(message, 'metadata', 'string_above_max_length');
    }
    if (typeof value !== 'string')
      return invalid(`Invalid type for 'metadata.${key}': expected a string, but got ${typeName(value)} instead.`, `metadata.${key}`, 'invalid_type');
    if (value.length > 512) {
      const message = `Invalid 'metadata.${key}': string too long. Expected a string with maximum length 512, but got a string with length ${value.length} instead.`;
      return invalid(message, `metadata.${key}`, 'string_above_max_length');
    }
  }
  return null;
}

/** The requests of an input file, or its problems (what validation finds). */
function readInput(bytes: Buffer | null, endpoint: string, azure: boolean): { requests: OpenAIBatchRequest[]; problems: BatchError[] } {
  if (!bytes) return { requests: [], problems: [{ code: 'file_too_large', message: 'The mock keeps files up to 16 MB only.', param: null, line: null }] };
  const problems: BatchError[] = [];
  const requests: OpenAIBatchRequest[] = [];
  const seen = new Set<string>();
  const problem = (line: number, code: string, message: string, param: string | null = null) => problems.push({ code, message, param, line });
  // Azure's endpoints are written with or without /v1: a line matches its batch's either way there.
  const same = (url: string) => (azure ? url.replace(/^\/v1\//, '/') === endpoint.replace(/^\/v1\//, '/') : url === endpoint);
  bytes
    .toString()
    .split('\n')
    .forEach((text, index) => {
      const line = index + 1;
      if (!text.trim()) return;
      const parsed = parseJson(text);
      if (parsed === undefined) return problem(line, 'invalid_json_line', 'This line is not parseable as valid JSON.');
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return problem(line, 'invalid_request', 'Each line must be a JSON object.');
      let ok = true;
      for (const [field, kind] of [
        ['custom_id', 'string'],
        ['method', 'string'],
        ['url', 'string'],
        ['body', 'object'],
      ] as const) {
        const value = parsed[field];
        if (value === undefined || value === null) {
          problem(line, 'missing_required_parameter', `Missing required parameter: '${field}'.`, field);
          ok = false;
        } else if (kind === 'string' ? typeof value !== 'string' : typeof value !== 'object' || Array.isArray(value)) {
          problem(
            line,
            'invalid_request',
            `Invalid type for '${field}': expected ${kind === 'string' ? 'a string' : 'an object'}, but got ${typeName(value)} instead.`,
            field,
          );
          ok = false;
        }
      }
      if (!ok) return;
      if (parsed.method !== 'POST')
        return problem(line, 'invalid_request', `Invalid value for 'method': only POST is supported, got '${parsed.method}'.`, 'method');
      if (!same(parsed.url)) return problem(line, 'invalid_url', 'The URL provided for this request does not prefix-match the batch endpoint.', 'url');
      if (seen.has(parsed.custom_id)) {
        const message = 'The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.';
        return problem(line, 'duplicate_custom_id', message, 'custom_id');
      }
      seen.add(parsed.custom_id);
      requests.push({ line, custom_id: parsed.custom_id, url: parsed.url, body: parsed.body, state: 'pending' });
    });
  if (!problems.length && !requests.length) problems.push({ code: 'empty_file', message: 'The batch input file is empty.', param: null, line: null });
  return problems.length ? { requests: [], problems } : { requests, problems };
}

/** Adds a request's usage (chat's prompt/completion tokens, or the Responses API's and embeddings' input/output ones) to the batch's. */
function addUsage(total: Record<string, any>, usage: any): void {
  if (!usage || typeof usage !== 'object') return;
  const input = Number(usage.input_tokens ?? usage.prompt_tokens ?? 0);
  const output = Number(usage.output_tokens ?? usage.completion_tokens ?? 0);
  total.input_tokens += input;
  total.output_tokens += output;
  total.total_tokens += input + output;
  total.input_tokens_details.cached_tokens += Number((usage.input_tokens_details ?? usage.prompt_tokens_details)?.cached_tokens ?? 0);
  total.output_tokens_details.reasoning_tokens += Number((usage.output_tokens_details ?? usage.completion_tokens_details)?.reasoning_tokens ?? 0);
}
