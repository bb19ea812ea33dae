import type { IncomingHttpHeaders } from 'node:http';

/** Every gateway API key the gateway issues starts so; a provider's key never does. */
export const GATEWAY_KEY_PREFIX = 'gk-';

export const MISSING_GATEWAY_KEY = 'Missing gateway API key: send x-gateway-api-key, or the gk-… key as Authorization: Bearer, x-api-key or x-goog-api-key';

/**
 * Where a request carries its gateway key (CONTRACT sections 1 and 12): `x-gateway-api-key`,
 * or, for clients that only take a base URL and an API key (Codex, Cursor, Claude Code),
 * a `gk-` secret sent as that API key: `Authorization: Bearer gk-…` or `x-api-key: gk-…`.
 * Google's clients send their API key as `x-goog-api-key` (or `?key=`, which the Gemini
 * routes move into that header): a `gk-` secret there is the gateway key too.
 * Any other Authorization value stays a provider credential (`x-gateway-provider`).
 */
export function gatewayKeyOf(headers: IncomingHttpHeaders): string | null {
  const explicit = headers['x-gateway-api-key'];
  if (typeof explicit === 'string' && explicit !== '') return explicit;
  const bearer = bearerToken(headers.authorization);
  if (bearer?.startsWith(GATEWAY_KEY_PREFIX)) return bearer;
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.startsWith(GATEWAY_KEY_PREFIX)) return apiKey;
  const googleKey = headers['x-goog-api-key'];
  if (typeof googleKey === 'string' && googleKey.startsWith(GATEWAY_KEY_PREFIX)) return googleKey;
  return null;
}

/** The token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(authorization: string | undefined): string | null {
  if (typeof authorization !== 'string') return null;
  const match = /^Bearer\s+(.+)$/i.exec(authorization);
  return match ? match[1].trim() : null;
}

/** A provider credential sent as `Authorization: Bearer`; a gateway key there is not one. */
export function providerKeyOf(headers: IncomingHttpHeaders): string | null {
  const token = bearerToken(headers.authorization);
  return token && !token.startsWith(GATEWAY_KEY_PREFIX) ? token : null;
}
