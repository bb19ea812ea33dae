import { maskSecret } from '../../common/crypto/secret-box';
import { redactUserinfo } from '../../common/http/http-url';

/**
 * Second line of defence for what the audit log stores: the views it records are the admin
 * API's, already masked, except the one answer that carries a secret on purpose (a created
 * API key's `key`). Every string under a credential's name, every value of a `headers`
 * object and every gateway key (`gk-…`) anywhere becomes its hint (`sk-…a1b2`, as `key_hint`
 * shows), unless it already is one; the `user:password@` of a URL anywhere is hidden.
 */
const SECRET_NAME = /(^|_)(key|token|secret|password|authorization|credentials?)$/;
/** Names that end like a credential but hold a slug or an identifier. */
const NOT_SECRET = new Set(['virtual_key', 'default_virtual_key', 'aws_access_key_id']);
const GATEWAY_KEY = /gk-[A-Za-z0-9_-]{12,}/g;
const MAX_DEPTH = 64;

export function isAuditSecretName(name: string): boolean {
  const lower = name.toLowerCase();
  return !NOT_SECRET.has(lower) && SECRET_NAME.test(lower);
}

/** A hint already: `maskSecret`'s output, a redaction marker, or nothing to hide. */
function isMasked(value: string): boolean {
  return value === '' || value.includes('…') || value === '[REDACTED]';
}

export function maskForAudit(value: unknown, insideHeaders = false, depth = 0): unknown {
  if (typeof value === 'string') return redactUserinfo(value.replace(GATEWAY_KEY, (secret) => maskSecret(secret)));
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[nested too deep]';
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => maskForAudit(item, insideHeaders, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(value)) {
    if (typeof inner === 'string' && (insideHeaders || isAuditSecretName(name))) out[name] = isMasked(inner) ? inner : maskSecret(inner);
    else out[name] = maskForAudit(inner, name.toLowerCase() === 'headers', depth + 1);
  }
  return out;
}
