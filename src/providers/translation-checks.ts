import { GatewayError } from '../common/errors/gateway-error';

/*
 * The small checks every translation makes of the fields it reads: a translated body has
 * passed only the gateway's own rules (the pass-through rule), so each field a
 * translation reads is checked there, a 400 naming it, never a TypeError.
 */

export type Fields = Record<string, any>;

/** A 400 naming the field. */
export const invalid = (message: string, param: string) => GatewayError.invalidRequest(message, param);

export const isObject = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Set to something: OpenAI's and Anthropic's APIs read a null as "the default". */
export const present = (value: unknown) => value !== undefined && value !== null;

/** A finite number, or a 400 naming the field. */
export function finiteNumber(value: unknown, param: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`${param} must be a number`, param);
  return value;
}

/** An integer, or a 400 naming the field. */
export function integer(value: unknown, param: string): number {
  if (!Number.isInteger(value)) throw invalid(`${param} must be an integer`, param);
  return value as number;
}

/** A 400 for what the provider reached through a translation cannot do: "Provider x does not support …". */
export const unsupportedBy =
  (provider: string) =>
  (param: string, what = param): GatewayError =>
    GatewayError.invalidRequest(`Provider ${provider} does not support ${what}`, param);

/**
 * The role of chat message `i`, checked as a translation reads it: an object, a role it
 * knows (the deprecated `function` role is refused), and no field the role's entry in
 * `fields` does not name (a field the vendor cannot carry is a 400, never a silent drop).
 */
export function chatMessageRole(message: unknown, i: number, fields: Readonly<Record<string, ReadonlySet<string>>>, unsupported: ReturnType<typeof unsupportedBy>): string {
  const param = `messages[${i}]`;
  if (!isObject(message)) throw invalid(`${param} must be an object`, param);
  const role = message.role;
  if (role === 'function') throw unsupported(`${param}.role`, `the deprecated function role (${param}.role)`);
  const known = typeof role === 'string' && Object.hasOwn(fields, role) ? fields[role] : undefined;
  if (!known) throw invalid(`${param}.role must be system, developer, user, assistant or tool`, `${param}.role`);
  for (const [key, value] of Object.entries(message)) {
    if (!known.has(key) && value !== null && value !== undefined) throw unsupported(`${param}.${key}`);
  }
  return role as string;
}
