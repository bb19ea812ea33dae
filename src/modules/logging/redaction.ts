export const REDACTED = '[REDACTED]';

/** Header names whose values are credentials. */
const SECRET_HEADERS = new Set([
  'authorization', 'proxy-authorization', 'x-gateway-api-key', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie', 'set-cookie',
  // AWS credentials per request (Bedrock); the access key id names the identity and is kept, as AWS's own logs keep it.
  'x-gateway-aws-secret-access-key', 'x-gateway-aws-session-token',
]);

/** Body fields whose values are credentials (provider keys, MCP tokens). */
const SECRET_FIELDS = new Set(['api_key', 'apikey', 'authorization', 'authorization_token', 'access_token', 'password', 'secret']);

export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : value;
    out[name] = SECRET_HEADERS.has(lower) ? REDACTED : lower === 'x-gateway-config' ? redactInlineConfig(text) : text;
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
 * anywhere, and every value of a `headers` object (MCP tool headers carry tokens).
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
    else redacted = redactBody(inner, lower === 'headers', depth + 1);
    if (redacted !== inner) (copy ??= { ...(value as Record<string, unknown>) })[key] = redacted;
  }
  return (copy ?? value) as T;
}
