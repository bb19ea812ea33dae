import { GatewayError } from '../common/errors/gateway-error';
import type { ChatMessage, ChatRole, ChatTool } from './chat-format';

/*
 * The small checks every translation makes of the fields it reads: a translated body has
 * passed only the gateway's own rules (the pass-through rule), so each field a
 * translation reads is checked there, a 400 naming it, never a TypeError.
 */

export type Fields = Record<string, unknown>;

/** A 400 naming the field. */
export const invalid = (message: string, param: string) => GatewayError.invalidRequest(message, param);

export const isObject = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `value[key]` when `value` is an object, else undefined: `value?.[key]` for a value read off the wire. */
export const fieldOf = (value: unknown, key: string): unknown => (isObject(value) ? value[key] : undefined);

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
 * The fields a chat message of each role may carry through a translation; any other
 * with a value is something the vendor cannot do. One table for every translated vendor.
 */
export const CHAT_MESSAGE_FIELDS: Readonly<Record<ChatRole, ReadonlySet<string>>> = {
  // `cache_control`: a prompt-cache breakpoint, mapped or named as ignored by each translation (prompt-cache.ts).
  system: new Set(['role', 'content', 'cache_control']),
  developer: new Set(['role', 'content', 'cache_control']),
  user: new Set(['role', 'content', 'cache_control']),
  // `annotations` are citations of an earlier answer echoed back: output metadata, not instructions.
  assistant: new Set(['role', 'content', 'tool_calls', 'refusal', 'annotations', 'cache_control']),
  tool: new Set(['role', 'content', 'tool_call_id', 'cache_control']),
};

/**
 * Chat message `i`, checked as a translation reads it: an object, a role it knows (the
 * deprecated `function` role is refused), and no field CHAT_MESSAGE_FIELDS does not name
 * for its role (a field the vendor cannot carry is a 400, never a silent drop). Its
 * content and tool calls are still the translation's to check.
 */
export function chatMessage(message: unknown, i: number, unsupported: ReturnType<typeof unsupportedBy>): ChatMessage {
  const param = `messages[${i}]`;
  if (!isObject(message)) throw invalid(`${param} must be an object`, param);
  const role = message.role;
  if (role === 'function') throw unsupported(`${param}.role`, `the deprecated function role (${param}.role)`);
  const known = typeof role === 'string' && Object.hasOwn(CHAT_MESSAGE_FIELDS, role) ? CHAT_MESSAGE_FIELDS[role as ChatRole] : undefined;
  if (!known) throw invalid(`${param}.role must be system, developer, user, assistant or tool`, `${param}.role`);
  for (const [key, value] of Object.entries(message)) {
    if (!known.has(key) && value !== null && value !== undefined) throw unsupported(`${param}.${key}`);
  }
  return message as ChatMessage;
}

/**
 * The function of tool `i`, checked as a translation reads it: a function tool (another
 * type is a 400 naming the provider), a name, and parameters, when set, a JSON schema object.
 */
export function chatToolFunction(tool: unknown, i: number, unsupported: ReturnType<typeof unsupportedBy>): ChatTool['function'] {
  const type = isObject(tool) ? tool.type : undefined;
  if (!isObject(tool) || type !== 'function') throw unsupported(`tools[${i}].type`, `tools of type ${JSON.stringify(type)} (tools[${i}].type)`);
  const fn = tool.function;
  if (!isObject(fn) || typeof fn.name !== 'string' || !fn.name) throw invalid(`tools[${i}].function.name must be a string`, `tools[${i}].function.name`);
  if (present(fn.parameters) && !isObject(fn.parameters))
    throw invalid(`tools[${i}].function.parameters must be a JSON schema object`, `tools[${i}].function.parameters`);
  return fn as ChatTool['function'];
}

/** The function name a `tool_choice` object forces (`{type: 'function', function: {name}}`); undefined for anything else. */
export function forcedFunction(choice: unknown): string | undefined {
  if (!isObject(choice) || choice.type !== 'function' || !isObject(choice.function)) return undefined;
  const name = choice.function.name;
  return typeof name === 'string' ? name : undefined;
}
