import type { LoggedError } from './gateway-error';
import { sseFrame } from '../http/sse-frame';

/** The error types of Anthropic's API; a gateway error of another type is named by its status. */
const ANTHROPIC_ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

const BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The Anthropic error `type` for a gateway error: its own when Anthropic has it, else by status (413 always by status, as Anthropic answers it). */
export function anthropicErrorType(type: string, status: number): string {
  if (status === 413) return 'request_too_large';
  if (type === 'guardrail_denied') return type; // the gateway's own 446, named as in CONTRACT section 5
  if (ANTHROPIC_ERROR_TYPES.has(type)) return type;
  return BY_STATUS[status] ?? (status === 503 ? 'overloaded_error' : 'api_error');
}

/** The `event: error` frame that ends an Anthropic stream the gateway cannot finish. */
export function anthropicErrorFrame(error: LoggedError): string {
  return sseFrame(JSON.stringify({ type: 'error', error: { type: anthropicErrorType(error.type, 502), message: error.message } }), 'error');
}
