import { compileSafeRegex } from '../../common/regex/safe-regex';

/**
 * Evaluates a conditional-routing query (CONTRACT section 5) against what is known of a
 * request: `metadata.<key>` (the x-gateway-metadata header and the key's metadata) and
 * `params.<field>` (the request body, dotted paths into nested objects). A query holds
 * fields and `$and` / `$or`; every entry must match. A field's value is either an
 * operator object (`{"$gte": 10}`) or a plain value meaning `$eq`. Pure code: the config
 * validator has already checked operators and shapes.
 */
export interface QueryFacts {
  metadata: Record<string, string>;
  params: unknown;
}

type Query = Record<string, unknown>;

export function matchesQuery(query: Query, facts: QueryFacts): boolean {
  return Object.entries(query).every(([key, expected]) => {
    if (key === '$and') return (expected as Query[]).every((q) => matchesQuery(q, facts));
    if (key === '$or') return (expected as Query[]).some((q) => matchesQuery(q, facts));
    return matchesField(lookup(key, facts), expected);
  });
}

function lookup(key: string, facts: QueryFacts): unknown {
  const [root, ...path] = key.split('.');
  let value: unknown = root === 'metadata' ? facts.metadata : facts.params;
  for (const part of path) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).some((k) => k.startsWith('$'));
}

function matchesField(actual: unknown, expected: unknown): boolean {
  if (!isOperatorObject(expected)) return equals(actual, expected);
  return Object.entries(expected).every(([operator, operand]) => applyOperator(operator, actual, operand));
}

function applyOperator(operator: string, actual: unknown, operand: unknown): boolean {
  switch (operator) {
    case '$eq':
      return equals(actual, operand);
    case '$ne':
      return !equals(actual, operand);
    case '$in':
      return (operand as unknown[]).some((item) => equals(actual, item));
    case '$nin':
      return !(operand as unknown[]).some((item) => equals(actual, item));
    case '$gt':
      return compare(actual, operand, (a, b) => a > b);
    case '$gte':
      return compare(actual, operand, (a, b) => a >= b);
    case '$lt':
      return compare(actual, operand, (a, b) => a < b);
    case '$lte':
      return compare(actual, operand, (a, b) => a <= b);
    case '$regex':
      // Compiled (and cached) when the config was validated; RE2, so no pattern can stall the event loop.
      return typeof actual === 'string' && compileSafeRegex(operand as string).regex?.test(actual) === true;
    default:
      return false;
  }
}

/**
 * Metadata values are always strings, so `"5"` equals `5` and compares as a number:
 * a condition `{"metadata.tier_level": {"$gte": 2}}` works on `{"tier_level": "3"}`.
 */
function equals(actual: unknown, expected: unknown): boolean {
  if (actual === expected) return true;
  if (typeof actual === 'string' && typeof expected === 'number') return actual.trim() !== '' && Number(actual) === expected;
  if (typeof actual === 'number' && typeof expected === 'string') return expected.trim() !== '' && Number(expected) === actual;
  if (typeof actual === 'object' && actual !== null && typeof expected === 'object' && expected !== null) {
    return JSON.stringify(actual) === JSON.stringify(expected);
  }
  return false;
}

function compare(actual: unknown, operand: unknown, holds: (a: number | string, b: number | string) => boolean): boolean {
  if (typeof operand === 'number') {
    const value = typeof actual === 'string' && actual.trim() !== '' ? Number(actual) : actual;
    return typeof value === 'number' && !Number.isNaN(value) && holds(value, operand);
  }
  if (typeof operand === 'string' && typeof actual === 'string') return holds(actual, operand);
  return false;
}
