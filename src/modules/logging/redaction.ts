import { redactUserinfo } from '../../common/http/http-url';

export const REDACTED = '[REDACTED]';

/** Header names whose values are credentials. */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-gateway-api-key',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
  'set-cookie',
  // AWS credentials per request (Bedrock); the access key id names the identity and is kept, as AWS's own logs keep it.
  'x-gateway-aws-secret-access-key',
  'x-gateway-aws-session-token',
  // A batch line's token (BatchLineToken).
  'x-gateway-batch-line',
]);

/** Body fields whose values are credentials (provider keys, MCP tokens). */
const SECRET_FIELDS = new Set(['api_key', 'apikey', 'authorization', 'authorization_token', 'access_token', 'password', 'secret']);
/** Body fields that hold a URL, whose `user:password@` is hidden (a config's host, an MCP server's, a webhook's). */
const URL_FIELDS = new Set(['custom_host', 'url', 'server_url', 'base_url']);

export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : value;
    // Any value may be a URL with `user:password@` (x-gateway-custom-host, a referer).
    out[name] = SECRET_HEADERS.has(lower) ? REDACTED : lower === 'x-gateway-config' ? redactInlineConfig(text) : redactUserinfo(text);
  }
  return out;
}

/** An inline config carries provider `api_key`s: keep its shape, hide the credentials. */
function redactInlineConfig(value: string): string {
  if (!value.trimStart().startsWith('{')) return value; // a stored config's slug or id
  try {
    return JSON.stringify(redactBody(JSON.parse(value)));
  } catch {
    return REDACTED;
  }
}

/** Deeper than this, a body is stored as a note: no credential can hide down there, and nothing recurses without end. */
export const MAX_LOGGED_DEPTH = 64;
export const TOO_DEEP = '[nested deeper than 64 levels: not stored]';

/**
 * A copy of a request or response body with every credential replaced: secret fields
 * anywhere, every value of a `headers` object (MCP tool headers carry tokens), and the
 * `user:password@` of URL fields.
 * Objects without secrets are returned as they are, not copied.
 */
export function redactBody<T>(value: T, insideHeaders = false, depth = 0): T {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_LOGGED_DEPTH) return TOO_DEEP as T;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    value.forEach((item, i) => {
      const redacted = redactBody(item, insideHeaders, depth + 1);
      if (redacted !== item) (copy ??= [...value])[i] = redacted;
    });
    return (copy ?? value) as T;
  }
  let copy: Record<string, unknown> | null = null;
  for (const [key, inner] of Object.entries(value)) {
    const lower = key.toLowerCase();
    let redacted: unknown;
    if ((insideHeaders || SECRET_FIELDS.has(lower)) && typeof inner === 'string') redacted = REDACTED;
    else if (URL_FIELDS.has(lower) && typeof inner === 'string') redacted = redactUserinfo(inner);
    else redacted = redactBody(inner, lower === 'headers', depth + 1);
    if (redacted !== inner) (copy ??= { ...(value as Record<string, unknown>) })[key] = redacted;
  }
  return (copy ?? value) as T;
}
