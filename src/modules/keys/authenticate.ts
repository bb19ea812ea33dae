import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../common/errors/gateway-error';
import { gatewayKeyOf, MISSING_GATEWAY_KEY } from '../../common/guards/gateway-key';
import { BATCH_LINE_HEADER } from '../../common/crypto/batch-line-token';
import { parseMetadataHeader } from '../../common/guards/metadata-header';
import { TRACE_ID } from '../../common/ids';
import type { RequestContext } from '../../context/request-context';
import type { KeyLookupService } from './key-lookup.service';
import type { ApiKeyPrincipal } from '../../context/caller';

/** A dashboard session named by the request's cookie (the auth module's SessionService). */
export interface CookieSession {
  principal: ApiKeyPrincipal;
  /** Whether `x-csrf-token` is this session's CSRF token. */
  csrfMatches(token: string | undefined): boolean;
}

/** Finds the session of a request's cookie: undefined when it has none, null when it names no live session (forged, expired, ended). */
export interface SessionAuthenticator {
  sessionOf(headers: IncomingHttpHeaders): Promise<CookieSession | null | undefined>;
}

/** What the HTTP guard tells `authenticate` so that a request without a key may use the dashboard's session cookie. */
export interface CookieAuthentication {
  sessions: SessionAuthenticator;
  /** POST, PATCH, PUT, DELETE: need the session's CSRF token in `x-csrf-token`. */
  write: boolean;
  /** A `models.call` route: only API keys call models. */
  callsModels: boolean;
}

/**
 * The gateway key (`x-gateway-api-key`, or a `gk-` key as the client's API key: see
 * gatewayKeyOf) to a live API key (401 otherwise), or, with no key and `cookies` given, the
 * dashboard's session cookie; and the request-wide headers every operation shares (trace id,
 * metadata) checked and noted on the context. Shared by the HTTP guard (ApiKeyGuard) and the
 * realtime WebSocket handshake (keys only).
 */
export async function authenticate(
  keys: KeyLookupService,
  headers: IncomingHttpHeaders,
  context: RequestContext | undefined,
  cookies?: CookieAuthentication,
): Promise<ApiKeyPrincipal> {
  const lineToken = headers[BATCH_LINE_HEADER];
  const secret = gatewayKeyOf(headers);
  const key =
    typeof lineToken === 'string'
      ? await batchLinePrincipal(keys, lineToken, context)
      : secret === null
        ? await sessionPrincipal(headers, cookies)
        : await keys.apiKeyBySecret(secret);
  if (!key) throw GatewayError.authentication('Invalid or revoked gateway API key');
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) {
    throw GatewayError.authentication(`The API key expired at ${key.expiresAt.toISOString()}`);
  }
  if (context) context.principal = key;

  const traceId = headers['x-gateway-trace-id'];
  if (typeof traceId === 'string' && !TRACE_ID.test(traceId)) {
    throw GatewayError.invalidRequest('x-gateway-trace-id must be 1 to 128 letters, digits or . : _ -', 'x-gateway-trace-id');
  }
  if (context) {
    // The key's own metadata is set by an admin and wins over what the caller sends.
    context.metadata = { ...parseMetadataHeader(headers['x-gateway-metadata']), ...key.metadata };
    context.user = context.metadata._user ?? null;
  }
  return key;
}

/** The key that created a batch, for a line the gateway sends itself (BatchLineToken); the line is noted on the context for its log row. */
async function batchLinePrincipal(keys: KeyLookupService, token: string, context: RequestContext | undefined): Promise<ApiKeyPrincipal | null> {
  const line = keys.batchLine(token);
  if (!line) throw GatewayError.authentication('Invalid batch line token: only the gateway sends x-gateway-batch-line');
  if (context) context.batchLine = { batchId: line.batchId, customId: line.customId };
  return keys.apiKeyByHash(line.keyHash);
}

/** The principal of the session cookie, for a request that carries no gateway key. */
async function sessionPrincipal(headers: IncomingHttpHeaders, cookies: CookieAuthentication | undefined): Promise<ApiKeyPrincipal> {
  const session = cookies ? await cookies.sessions.sessionOf(headers) : undefined;
  if (session === undefined) throw GatewayError.authentication(MISSING_GATEWAY_KEY);
  if (session === null)
    throw new GatewayError(
      401,
      'authentication_error',
      'The dashboard session is not valid (signed out, expired or not issued by this gateway): sign in again',
      'invalid_session',
    );
  if (cookies!.callsModels)
    throw GatewayError.permission('Calling models needs an API key (x-gateway-api-key); a dashboard session cannot call models', 'api_key_required');
  const token = headers['x-csrf-token'];
  if (cookies!.write && !session.csrfMatches(typeof token === 'string' ? token : undefined)) {
    throw GatewayError.permission(
      "A change made with the dashboard's session cookie needs the session's CSRF token in x-csrf-token (GET /auth/session gives it)",
      'csrf_token_invalid',
    );
  }
  return session.principal;
}
