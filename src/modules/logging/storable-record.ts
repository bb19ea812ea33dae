/**
 * Values PostgreSQL refuses, made storable: the log writer's fallback for a row the
 * database turned down (see LogWriter.insertOneByOne). Applied only then, so the common
 * path pays nothing for it.
 *
 * - NUL (U+0000) fits neither `text` nor `jsonb`: replaced by U+FFFD.
 * - A lone UTF-16 surrogate, escaped by JSON.stringify as `\ud800`, is refused by `jsonb`:
 *   replaced by U+FFFD (as TextEncoder does).
 * - A `text` column is indexed (model, end_user, trace_id …) and a btree entry holds at
 *   most about 2.7 KB: text columns are cut to MAX_TEXT_CHARS (at most 4 bytes each).
 * - An `integer` column refuses a fraction (a latency measured with performance.now())
 *   and what is past 32 bits: rounded and clamped; not a finite number: null.
 */
export const MAX_TEXT_CHARS = 512;

// NUL is what PostgreSQL refuses in text and jsonb: matching it is the point.
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\ufffd');
}

/** A JSON value with every string (keys included) made storable. Bodies are depth-capped before they are logged. */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) copy[storableText(key)] = storableJson(child);
  return copy;
}

/** The record with its text columns cleaned and cut, its JSON columns cleaned (by the entity's column types). */
export function storableRecord<T extends object>(record: T, columnTypes: ReadonlyMap<string, string>): T {
  const copy = { ...record } as Record<string, unknown>;
  for (const [property, type] of columnTypes) {
    const value = copy[property];
    if (type === 'text' && typeof value === 'string') copy[property] = storableText(value).slice(0, MAX_TEXT_CHARS);
    else if (type === 'jsonb' && value != null) copy[property] = storableJson(value);
    else if (type === 'integer' && typeof value === 'number') copy[property] = storableInteger(value);
  }
  return copy as T;
}

const INT32_MAX = 2 ** 31 - 1;

function storableInteger(value: number): number | null {
  if (!Number.isFinite(value)) return null;
  return Math.min(INT32_MAX, Math.max(-INT32_MAX - 1, Math.round(value)));
}
