/**
 * Small readers for the fields of a gateway config and of its guardrail checks. Those
 * returning problems word them as the config validation does: `<path> must be ...`, the
 * path naming the exact field.
 */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const isInt = (v: unknown, min: number, max: number): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

export function unknownFields(config: Record<string, unknown>, allowed: string[], path: string): string[] {
  return Object.keys(config)
    .filter((k) => !allowed.includes(k))
    .map((k) => `${path}.${k} is not a known field`);
}

/** Absent is fine: the check's default applies. */
export function oneOf<T extends string>(value: unknown, allowed: readonly T[], path: string): string[] {
  if (value === undefined || allowed.includes(value as T)) return [];
  return [`${path} must be one of ${allowed.join(', ')}`];
}

/** A non-empty array of non-empty strings, at most `max` long. */
export function stringList(value: unknown, path: string, max = 1000): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > max) return [`${path} must be a non-empty array of at most ${max} strings`];
  const bad = value.findIndex((v) => typeof v !== 'string' || v === '');
  return bad === -1 ? [] : [`${path}[${bad}] must be a non-empty string`];
}
