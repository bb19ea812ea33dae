/**
 * The admin API as the dashboard calls it: signed in by the gateway's HttpOnly session
 * cookie (single sign-on, or an API key exchanged once at `/auth/key-session`, so one sign-in
 * serves every tab), the session's CSRF token in `x-csrf-token` on writes, JSON both ways,
 * and every failure turned into an `ApiError` whose message is written for a person.
 */
import type { components } from './api-types';
import { workspaceHeader } from './acting-workspace';

/** Who is signed in (`GET /auth/session`). */
export type Session = components['schemas']['SessionResponseDto'];

/** How the dashboard may sign in (`GET /auth/config`). */
export type AuthConfig = components['schemas']['AuthConfigResponseDto'];

let session: Session | null = null;

/** The session this page is signed in with, once loaded. */
export function currentSession(): Session | null {
  return session;
}

const WRITES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** Listeners told when the key stops working (revoked, expired), so the app can sign out. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

interface ErrorBody {
  error?: { message?: string; type?: string; code?: string | null; param?: string | null };
}

/** The words shown for an error answer of the gateway. */
export function describeError(status: number, body: ErrorBody | undefined): string {
  const error = body?.error;
  const message = error?.message?.trim();
  if (status === 401) return 'This key was not accepted: it is unknown to the gateway, revoked or expired.';
  if (status === 403 && error?.code === 'admin_required') return 'This needs an admin key: the role of this sign-in may not do it.';
  if (status === 403) return message ? `Not allowed: ${message}` : 'This key may not do that.';
  if (status === 503 && error?.code === 'gateway_unavailable') return `The gateway is running but cannot reach its database right now. ${message ?? ''}`.trim();
  if (status >= 500)
    return message ? `The gateway failed to answer (${status}): ${message}` : `The gateway failed to answer (HTTP ${status}). Try again in a moment.`;
  if (message) return message.endsWith('.') ? message : `${message}.`;
  return `The gateway answered HTTP ${status} without an explanation.`;
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...workspaceHeader(path) };
  if (session && WRITES.has(method)) headers['x-csrf-token'] = session.csrf_token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(
      'The gateway could not be reached. Is it running, and is this page served by it? Check your connection and try again.',
      0,
      'network_error',
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = (parsed as ErrorBody | undefined)?.error;
    // The session stopped working (signed out elsewhere, expired, its key revoked); not a key being tried on the sign-in form.
    if (response.status === 401 && session !== null && !path.startsWith('/auth/')) {
      session = null;
      unauthorizedListeners.forEach((listener) => listener());
    }
    throw new ApiError(describeError(response.status, parsed as ErrorBody), response.status, error?.code ?? null, error?.param ?? null);
  }
  if (parsed === undefined && text) throw new ApiError(`The gateway answered ${path} with something that is not JSON.`, response.status, 'invalid_json');
  return parsed as T;
}

/**
 * Saves an export (`GET …?format=csv|json`) as a file, with the session and the workspace
 * header of every admin call; the file name is the one the gateway gives.
 */
export async function download(path: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(path, { headers: { ...workspaceHeader(path) }, cache: 'no-store', credentials: 'same-origin' });
  } catch {
    throw new ApiError('The gateway could not be reached. Check your connection and try again.', 0, 'network_error');
  }
  if (!response.ok) {
    const parsed = await response.json().catch(() => undefined);
    throw new ApiError(describeError(response.status, parsed as ErrorBody), response.status, null);
  }
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'export';
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function authConfig(): Promise<AuthConfig> {
  return api<AuthConfig>('GET', '/auth/config');
}

/** The session of this browser's cookie, or null when not signed in. */
export async function loadSession(): Promise<Session | null> {
  try {
    session = await api<Session>('GET', '/auth/session');
  } catch (e) {
    if ((e as ApiError).status !== 401) throw e;
    session = null;
  }
  return session;
}

/**
 * API-key sign-in: the key is exchanged for a session cookie (the page does not keep it),
 * then checked to read the log, which every role may (a `member` its own requests, a
 * `viewer` its workspace's); the pages its role may not use are left out of the menu.
 */
export async function keySignIn(key: string): Promise<Session> {
  session = await api<Session>('POST', '/auth/key-session', { key });
  try {
    await api('GET', '/v1/logs?limit=1&include_bodies=false');
  } catch (e) {
    await signOut().catch(() => undefined);
    throw e;
  }
  return session;
}

/** Ends the session on the gateway (every tab) and forgets it here. */
export async function signOut(): Promise<void> {
  try {
    if (session) await api('POST', '/auth/logout');
  } finally {
    session = null;
  }
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  next_cursor: string | null;
}

type Schemas = components['schemas'];

/** Where a search's words are in a row's bodies (`GET /v1/logs?q=…`): a short text, the words' places in it. */
export type SearchSnippet = Schemas['SearchSnippetResponseDto'];

export type RowKind = LogRow['kind'];

/** A request's figures with the rows nested under it (`GET /v1/logs/{id}`). */
export type RequestTotals = Schemas['RequestTotalsResponseDto'];

/** A row of the request log (`GET /v1/logs`, `GET /v1/logs/{id}`). */
export type LogRow = Schemas['LogRowResponseDto'];

/** A group of `GET /v1/analytics/summary`: requests, errors and latencies as clients saw them, tokens and cost of every row. */
export type SummaryRow = Schemas['AnalyticsSummaryRowResponseDto'];

/** A bucket of `GET /v1/analytics/timeseries`. */
export type TimeseriesRow = Schemas['AnalyticsBucketResponseDto'];

/** Ranges over two days get latency percentiles estimated from histograms (bins 9% wide). */
export type Percentiles = Summary['latency_percentiles'];

export type Summary = Schemas['AnalyticsSummaryResponseDto'];

export type Timeseries = Schemas['AnalyticsTimeseriesResponseDto'];

/** A group's buckets in a breakdown over time: the top groups, then `other` (the rest), adding up to `data` bucket by bucket. */
export type BreakdownSeries = Schemas['AnalyticsSeriesResponseDto'];

/** An end user's figures in a period (`GET /v1/analytics/users`, `/users/{user}`). */
export type EndUserActivity = Schemas['EndUserActivityResponseDto'];

/** A page of `GET /v1/analytics/users`: `total` end users in all. */
export type EndUserActivityPage = Schemas['EndUserActivityListResponseDto'];

/** A batch as analytics read it (`GET /v1/analytics/batches`, `/batches/{id}`): status, lines by status, cost so far, files. */
export type Batch = Schemas['BatchAnalyticsResponseDto'];

/** A batch's lines by status, and how many it has. */
export type BatchLines = Schemas['BatchLinesResponseDto'];

/** A page of `GET /v1/analytics/batches`. */
export type BatchPage = Schemas['BatchAnalyticsListResponseDto'];

/** An API key as the admin API answers it (`GET /v1/api-keys`); on creation with its secret, `key`. */
export type ApiKey = Schemas['ApiKeyResponseDto'];

/** A virtual key as the admin API answers it (`GET /v1/virtual-keys`): the provider credential only as `key_hint`. */
export type VirtualKey = Schemas['VirtualKeyResponseDto'];

/** A stored config (`GET /v1/configs`): its latest version, credentials inside as hints. */
export type Config = Schemas['ConfigResponseDto'];

/** A version of a config (`GET /v1/configs/{id}/versions`). */
export type ConfigVersion = Schemas['ConfigVersionResponseDto'];

/** A prompt template (`GET /v1/prompts`): its latest version, the template's fields at the top level. */
export type Prompt = Schemas['PromptResponseDto'];

/** A version of a prompt (`GET /v1/prompts/{id}/versions`): its template's fields at the top level. */
export type PromptVersion = Schemas['PromptVersionResponseDto'];

/** A workspace (`GET /v1/workspaces`): its budget and rate limits, held across all its keys. */
export type Workspace = Schemas['WorkspaceResponseDto'];

/** An end user's budget record (`GET /v1/end-users`): its budget and the spend of its period. */
export type EndUser = Schemas['EndUserResponseDto'];

/** An MCP server of the registry (`GET /v1/mcp-servers`): its headers as hints. */
export type McpServer = Schemas['McpServerResponseDto'];

/** A tool an MCP server lists now, and whether its allow-list lets callers use it (`GET /v1/mcp-servers/{id}/tools`). */
export type McpServerTool = Schemas['McpServerToolResponseDto'];

/** Every page of a list endpoint, up to `max` rows. */
export async function listAll<T>(path: string, max = 1000): Promise<T[]> {
  const rows: T[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: ListPage<T> = await api('GET', `${path}${separator}limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    rows.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor && rows.length < max);
  return rows;
}

export type GuardrailResult = Schemas['GuardrailResultResponseDto'];

/** A price of a provider's model, with its source (`GET /v1/prices`). */
export type PriceEntry = components['schemas']['PriceEntryResponseDto'];
/** An admin change (`GET /v1/audit-log`). */
export type AuditEntry = components['schemas']['AuditLogEntryResponseDto'];
