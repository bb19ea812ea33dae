import type { IncomingHttpHeaders } from 'node:http';

/**
 * Whether a request wants Anthropic's shapes (CONTRACT section 12): everything under
 * `/v1/messages`, and `/v1/models` when it carries `anthropic-version` or
 * `vendor-version` (Anthropic's SDKs always send the version; OpenAI's never do).
 */
export function speaksAnthropic(path: string, headers: IncomingHttpHeaders): boolean {
  if (path.startsWith('/v1/messages')) return true;
  return path.startsWith('/v1/models') && wantsAnthropicModels(headers);
}

/** `/v1/models` in Anthropic's shape. */
export function wantsAnthropicModels(headers: IncomingHttpHeaders): boolean {
  return headers['anthropic-version'] !== undefined || headers['vendor-version'] !== undefined;
}
