/** Whether `value` is an absolute http(s) URL (a custom host, a webhook). */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Whether a URL carries `user:password@`. The gateway never sends it (undici drops it,
 * fetch refuses it), so such a host only puts a password into logs and admin reads:
 * hosts with it are refused where they are given.
 */
export function hasUserinfo(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

/**
 * `scheme://user:pass@host` → `scheme://[REDACTED]@host` wherever a URL sits in `text`
 * (a header, a field, a message). Up to the last `@` before the path, as URL parsers read
 * it, so a password holding `@` is hidden whole.
 */
const USERINFO = /\b(https?|wss?):\/\/[^\s/?#]*@/gi;

export function redactUserinfo(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(USERINFO, (_match, scheme: string) => `${scheme}://[REDACTED]@`);
}
