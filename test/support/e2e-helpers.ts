/**
 * Small helpers shared by the gateway-core e2e suites: raw HTTP calls, the OpenAI SDK
 * pointed at a test gateway, admin fixtures, and log reads.
 */
import OpenAI from 'openai';
import { admin, TestGateway } from './test-gateway';

export interface RawResponse<T = any> {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  body: T;
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as it is (with content-type application/json). */
  body?: unknown;
  /** x-gateway-api-key; default the bootstrap admin key, null to send none. */
  apiKey?: string | null;
}

/** One HTTP call to the gateway, never throwing on an error status. */
export async function call<T = any>(gateway: TestGateway, path: string, options: CallOptions = {}): Promise<RawResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const apiKey = options.apiKey === undefined ? gateway.adminKey : options.apiKey;
  if (apiKey !== null) headers['x-gateway-api-key'] = apiKey;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${gateway.url}${path}`, { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await response.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

export const HELLO = [{ role: 'user', content: 'Say hello' }];

/** POST /v1/chat/completions with the given routing headers (default body: gpt-4o-mini, "Say hello"). */
export function chat(gateway: TestGateway, headers: Record<string, string>, body: Record<string, unknown> = {}, apiKey?: string | null) {
  return call(gateway, '/v1/chat/completions', { headers, body: { model: 'gpt-4o-mini', messages: HELLO, ...body }, apiKey });
}

/** The OpenAI SDK against the gateway, as a user would set it up. */
export function openai(gateway: TestGateway, headers: Record<string, string>, apiKey = 'unused', gatewayKey = gateway.adminKey): OpenAI {
  return new OpenAI({
    baseURL: `${gateway.url}/v1`,
    apiKey,
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gatewayKey, ...headers },
  });
}

/** Asserts the OpenAI error shape with exactly these four fields. */
export function expectError(
  response: RawResponse,
  status: number,
  error: { type: string; code?: string | null; param?: string | null; message?: string | RegExp },
): void {
  expect({ status: response.status, keys: Object.keys(response.body ?? {}) }).toEqual({ status, keys: ['error'] });
  const { message, ...rest } = error;
  expect(Object.keys(response.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(response.body.error).toMatchObject(Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)));
  expect(typeof response.body.error.message).toBe('string');
  if (message instanceof RegExp) expect(response.body.error.message).toMatch(message);
  else if (message !== undefined) expect(response.body.error.message).toBe(message);
  expect(response.text).not.toMatch(/\n\s+at /); // no stack trace
}

/** Creates a virtual key through the admin API and fails the test if that does not work. */
export async function createVirtualKey(gateway: TestGateway, fields: Record<string, unknown>): Promise<any> {
  const created = await admin(gateway, 'POST', '/v1/virtual-keys', { name: String(fields.slug), provider: 'openai', ...fields });
  expect(created.status).toBe(201);
  return created.body;
}

export async function createApiKey(gateway: TestGateway, fields: Record<string, unknown>): Promise<any> {
  const created = await admin(gateway, 'POST', '/v1/api-keys', { name: 'test key', role: 'user', ...fields });
  expect(created.status).toBe(201);
  return created.body;
}

export async function createConfig(gateway: TestGateway, slug: string, config: Record<string, unknown>): Promise<any> {
  const created = await admin(gateway, 'POST', '/v1/configs', { name: slug, slug, config });
  expect(created.status).toBe(201);
  return created.body;
}

/** Flushes the log queue and reads one log row through the admin API. */
export async function logOf(gateway: TestGateway, requestId: string | null): Promise<any> {
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  await gateway.flushLogs();
  const log = await admin(gateway, 'GET', `/v1/logs/${requestId}`);
  expect(log.status).toBe(200);
  return log.body;
}

/** Polls until `check` returns a truthy value (or throws the last failure after `timeoutMs`). */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 3000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`waitFor: condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A CSV text as rows of cells (RFC 4180: quoted cells, doubled quotes, CRLF rows). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}

/**
 * SQL for a `request_logs` row (unaliased): its bodies' text as stored, their parts included
 * (bodies are stored as parts, CONTRACT section 14), for tests that look for a marker or a secret.
 */
export const LOGGED_TEXT_SQL = `(coalesce(request_body::text, '') || ' ' || coalesce(response_body::text, '') || ' ' || coalesce((
  select string_agg(p.body::text, ' ') from log_body_parts p where p.workspace_id = request_logs.workspace_id and p.hash = any(request_logs.part_hashes)), ''))`;
