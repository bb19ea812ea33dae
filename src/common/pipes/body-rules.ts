import { GatewayError } from '../errors/gateway-error';

/**
 * Small hand-written field checks for hot-path bodies (chat completions): one pass over
 * the plain object, no class instances. Messages read like class-validator's, so every
 * 400 looks the same whichever way a body was checked.
 */
export type Rule = (value: unknown, field: string) => string | null;

export const isString =
  (maxLength = Infinity): Rule =>
  (v, f) =>
    typeof v !== 'string' ? `${f} must be a string` : v.length > maxLength ? `${f} must be shorter than or equal to ${maxLength} characters` : null;

export const isBoolean: Rule = (v, f) => (typeof v === 'boolean' ? null : `${f} must be a boolean value`);

export const isNumber =
  (min = -Infinity, max = Infinity, integer = false): Rule =>
  (v, f) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return `${f} must be a number`;
    if (integer && !Number.isInteger(v)) return `${f} must be an integer number`;
    if (v < min) return `${f} must not be less than ${min}`;
    if (v > max) return `${f} must not be greater than ${max}`;
    return null;
  };

export const isInt = (min = -Number.MAX_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): Rule => isNumber(min, max, true);

export const isObject: Rule = (v, f) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? null : `${f} must be an object`);

export const isArray =
  (minItems = 0, maxItems = Infinity): Rule =>
  (v, f) => {
    if (!Array.isArray(v)) return `${f} must be an array`;
    if (v.length < minItems) return minItems === 1 ? `${f} should not be empty` : `${f} must contain at least ${minItems} elements`;
    if (v.length > maxItems) return `${f} must contain no more than ${maxItems} elements`;
    return null;
  };

/** After a string or array rule: at least one character or element. */
export const isNotEmpty: Rule = (v, f) => ((v as { length: number }).length === 0 ? `${f} should not be empty` : null);

export const isOneOf =
  (values: readonly string[]): Rule =>
  (v, f) =>
    typeof v === 'string' && values.includes(v) ? null : `${f} must be one of the following values: ${values.join(', ')}`;

/** Every rule of a field must pass; the first failure is reported. */
export const all =
  (...rules: Rule[]): Rule =>
  (v, f) => {
    for (const rule of rules) {
      const problem = rule(v, f);
      if (problem) return problem;
    }
    return null;
  };

export interface BodySchema {
  required: Record<string, Rule>;
  optional: Record<string, Rule>;
}

/** Checks a body against a schema; throws one 400 listing every problem, `param` naming the first field. */
export function checkBody(body: Record<string, unknown>, schema: BodySchema): void {
  const problems: string[] = [];
  for (const [field, rule] of Object.entries(schema.required)) {
    const problem = body[field] === undefined ? rule(undefined, field) : rule(body[field], field);
    if (problem) problems.push(problem);
  }
  for (const [field, rule] of Object.entries(schema.optional)) {
    if (body[field] === undefined || body[field] === null) continue;
    const problem = rule(body[field], field);
    if (problem) problems.push(problem);
  }
  if (problems.length) {
    // A rule may name a deeper field itself, e.g. `messages[2].role must be …`.
    throw GatewayError.invalidRequest(problems.join('; '), problems[0].match(/^[\w.[\]]+/)?.[0] ?? null);
  }
}
