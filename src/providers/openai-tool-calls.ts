import { GatewayError } from '../common/errors/gateway-error';
import { fieldOf } from './translation-checks';

/** One tool call of an assistant message in OpenAI's format, checked and with its arguments parsed. */
export interface ToolCall {
  id: string | undefined;
  name: string;
  args: Record<string, unknown>;
}

/**
 * Reads `call` (at `param`, e.g. `messages[1].tool_calls[0]`) for a vendor that takes
 * tool calls as objects: function calls only (a 400 naming `provider` otherwise), a
 * name, and arguments that are a JSON object.
 */
export function readToolCall(call: unknown, param: string, provider: string): ToolCall {
  const type = fieldOf(call, 'type');
  if (type !== 'function') {
    throw GatewayError.invalidRequest(`Provider ${provider} does not support tool calls of type ${JSON.stringify(type)} (${param}.type)`, `${param}.type`);
  }
  const fn = fieldOf(call, 'function');
  const name = fieldOf(fn, 'name');
  if (typeof name !== 'string' || !name) throw GatewayError.invalidRequest(`${param}.function.name must be a string`, `${param}.function.name`);
  let args: unknown;
  try {
    args = JSON.parse(String(fieldOf(fn, 'arguments') || '{}'));
  } catch {
    throw GatewayError.invalidRequest(`${param}.function.arguments is not valid JSON`, `${param}.function.arguments`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw GatewayError.invalidRequest(`${param}.function.arguments must be a JSON object`, `${param}.function.arguments`);
  }
  const id = fieldOf(call, 'id');
  return { id: typeof id === 'string' ? id : undefined, name, args: args as Record<string, unknown> };
}
