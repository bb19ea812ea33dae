import { GatewayError } from '../errors/gateway-error';

export const METADATA_MAX_KEYS = 32;
export const METADATA_MAX_VALUE = 128;

/** `x-gateway-metadata`: a JSON object of at most 32 string values of at most 128 characters. */
export function parseMetadataHeader(raw: string | string[] | undefined): Record<string, string> {
  if (raw === undefined || raw === '') return {};
  const fail = (why: string) => GatewayError.invalidRequest(`x-gateway-metadata ${why}`, 'x-gateway-metadata');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Array.isArray(raw) ? raw[0] : raw);
  } catch {
    throw fail('is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw fail('must be a JSON object');
  const entries = Object.entries(parsed);
  if (entries.length > METADATA_MAX_KEYS) throw fail(`has more than ${METADATA_MAX_KEYS} keys`);
  for (const [key, value] of entries) {
    if (typeof value !== 'string') throw fail(`value of '${key}' must be a string`);
    if (value.length > METADATA_MAX_VALUE) throw fail(`value of '${key}' is longer than ${METADATA_MAX_VALUE} characters`);
    if (key.length === 0 || key.length > 64) throw fail('keys must be 1 to 64 characters');
  }
  // fromEntries defines own properties: a `__proto__` key stays data, never a prototype.
  return Object.fromEntries(entries);
}
