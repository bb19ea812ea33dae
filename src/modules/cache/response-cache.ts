import { createHash } from 'node:crypto';
import type { NormalizedUsage } from '../../providers/usage';

/**
 * One cached answer: what the client got (the JSON bytes, or the SSE frames in order)
 * and what the log needs to describe a hit without asking the provider again.
 */
export interface CachedResponse {
  kind: 'json' | 'sse';
  status: number;
  /** kind 'json': the response body as sent (UTF-8 JSON text). */
  body?: string;
  /** kind 'sse': every frame as sent, e.g. `data: {...}\n\n`, `[DONE]` included. */
  frames?: string[];
  provider: string;
  model: string | null;
  servedModel: string | null;
  usage: NormalizedUsage | null;
  responseBody: unknown;
}

/**
 * The response cache of a config's `cache: {mode: "simple"}` (CONTRACT section 5):
 * PostgreSQL by default, Redis when REDIS_URL is set. Implementations never reject:
 * a store that fails is logged and behaves as a miss, since the cache must not turn a
 * servable request into an error.
 */
export abstract class ResponseCache {
  abstract get(key: string): Promise<CachedResponse | null>;
  abstract set(key: string, value: CachedResponse, maxAgeSeconds: number): Promise<void>;
}

/** Key order does not change a JSON request's meaning, so it must not change the key. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}

/**
 * The exact-match key: the operation, where it goes (provider, credential identity,
 * host) and the body as it would be sent upstream, with object keys sorted.
 */
export function responseCacheKey(operation: string, upstreamIdentity: string, upstreamBody: unknown): string {
  const text = JSON.stringify([operation, upstreamIdentity, canonical(upstreamBody)]);
  return createHash('sha256').update(text).digest('hex');
}
