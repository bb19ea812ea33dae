/**
 * The decisions of config routing as pure functions: which child a strategy picks,
 * whether a failure moves on to the next target or is retried, and how long to wait.
 * No I/O and no clock here; the executor supplies the randomness, so tests can draw
 * thousands of times and check the distribution.
 */
import { matchesQuery, QueryFacts } from './condition-query';
import type { RetryPolicy, RouteNode } from '../../context/route-plan';

/** What the executor knows of a failed attempt. */
export interface AttemptFailure {
  status: number;
  /** Network errors, timeouts and open circuits always move a fallback on. */
  unreachable: boolean;
  /** From `retry-after-ms` or `retry-after`, when the provider sent one. */
  retryAfterMs: number | null;
}

/** A weighted draw; weight 0 is never picked. Null when nothing has weight. */
export function pickWeighted<T extends { weight: number }>(items: T[], random: () => number): T | null {
  const total = items.reduce((sum, item) => sum + Math.max(0, item.weight), 0);
  if (total <= 0) return null;
  let point = random() * total;
  for (const item of items) {
    if (item.weight <= 0) continue;
    point -= item.weight;
    if (point < 0) return item;
  }
  // Floating point left a sliver at the end: the last item with weight owns it.
  return [...items].reverse().find((item) => item.weight > 0) ?? null;
}

/** Conditional mode: the target of the first matching condition, else the default, else null. */
export function chooseConditional(node: RouteNode, facts: QueryFacts): RouteNode | null {
  const condition = node.conditions.find((c) => matchesQuery(c.query, facts));
  const name = condition ? condition.then : node.defaultTarget;
  return name === null ? null : (node.children.find((child) => child.name === name) ?? null);
}

/** Fallback mode: does this failure move on to the next target? */
export function fallsBack(node: RouteNode, failure: AttemptFailure): boolean {
  if (failure.unreachable) return true;
  return node.fallbackOn === null ? failure.status < 200 || failure.status >= 300 : node.fallbackOn.includes(failure.status);
}

/**
 * How long to wait before retry number `retry` (0 = the first retry), or null for no
 * retry. Exponential backoff with "equal jitter" (half fixed, half random) so that
 * clients failing together do not retry together; a provider's Retry-After wins,
 * unless it asks for longer than `maxDelayMs`, in which case waiting is pointless.
 */
export function retryDelayMs(
  policy: RetryPolicy | null,
  retry: number,
  failure: AttemptFailure,
  timing: { baseDelayMs: number; maxDelayMs: number },
  random: () => number,
): number | null {
  if (!policy || retry >= policy.attempts || !policy.onStatusCodes.includes(failure.status)) return null;
  if (failure.retryAfterMs !== null) return failure.retryAfterMs <= timing.maxDelayMs ? failure.retryAfterMs : null;
  const ceiling = Math.min(timing.maxDelayMs, timing.baseDelayMs * 2 ** retry);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** `retry-after-ms` (OpenAI) or `retry-after` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | null {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const ms = Number(first(headers['retry-after-ms']));
  if (first(headers['retry-after-ms']) !== undefined && Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const raw = first(headers['retry-after']);
  if (raw === undefined || raw.trim() === '') return null;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : null;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
