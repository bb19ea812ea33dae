/** One field of an audit entry as the page shows it: what it was, what it became. */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
  kind: 'added' | 'removed' | 'changed';
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Stored as jsonb, a view comes back with its keys reordered: names first, times last, the rest by name. */
const FIRST = ['id', 'object', 'name', 'slug', 'user', 'provider', 'model'];
const LAST = ['created_at', 'updated_at'];
const rank = (field: string) => (FIRST.includes(field) ? FIRST.indexOf(field) - FIRST.length : LAST.includes(field) ? 1 + LAST.indexOf(field) : 0);

/**
 * The top-level fields that differ between `before` and `after` (a create: every field of
 * `after`; a delete: every field of `before`). Nested objects (a config body, rate limits)
 * are compared and shown whole.
 */
export function changedFields(before: Record<string, unknown> | null, after: Record<string, unknown> | null): FieldChange[] {
  const fields = [...new Set([...Object.keys(after ?? {}), ...Object.keys(before ?? {})])].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const changes: FieldChange[] = [];
  for (const field of fields) {
    const had = before !== null && Object.prototype.hasOwnProperty.call(before, field);
    const has = after !== null && Object.prototype.hasOwnProperty.call(after, field);
    if (had && has && same(before[field], after[field])) continue;
    changes.push({
      field,
      before: had ? before[field] : undefined,
      after: has ? after[field] : undefined,
      kind: !had ? 'added' : !has ? 'removed' : 'changed',
    });
  }
  return changes;
}

/** A field's value in a table cell: strings as they are, the rest as JSON. */
export function showValue(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2);
}
