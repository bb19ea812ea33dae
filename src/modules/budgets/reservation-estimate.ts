/**
 * What a budget reservation holds for a request, so that concurrent requests overshoot a
 * budget by about one request's real cost at most (CONTRACT section 15). Two guesses, the
 * larger wins: the request's own body (prompt, output limit, number of choices), and
 * what this budget's requests to the same model really cost lately: a provider that
 * ignores `max_tokens`, or a client that leaves it out, makes the body's guess too low.
 */

/** Output tokens assumed per choice when the request sets no limit. */
export const DEFAULT_OUTPUT_TOKENS = 1024;

/**
 * The output the body allows: its token limit (`max_completion_tokens`, `max_tokens`,
 * `max_output_tokens`) per choice, times the choices generated and billed (`n`, and the
 * legacy completions' `best_of`, which generates that many to return the best).
 */
export function outputTokenAllowance(body: Record<string, unknown>): number {
  const limit = [body.max_completion_tokens, body.max_tokens, body.max_output_tokens].find((value) => isCount(value, 0));
  const perChoice = typeof limit === 'number' ? limit : DEFAULT_OUTPUT_TOKENS;
  const choices = Math.max(1, ...[body.n, body.best_of].filter((value): value is number => isCount(value, 1)));
  return perChoice * choices;
}

function isCount(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min;
}

/** Half the weight of a cost observed this long ago. */
const HALF_LIFE_MS = 10 * 60_000;
/** Budget and model pairs remembered; the least recently observed is forgotten first. */
const MAX_KEYS = 10_000;

/**
 * The recent cost per request of each budget counter and model: a peak that a costlier
 * request raises at once and that halves every HALF_LIFE_MS, so one expensive answer
 * makes the next reservations cautious for a while, not forever. In memory, per
 * process: learned from the log rows as they are queued, read with no database trip.
 */
export class RecentCosts {
  private readonly peaks = new Map<string, { usd: number; at: number }>();

  constructor(private readonly maxKeys = MAX_KEYS) {}

  observe(key: string, usd: number, now = Date.now()): void {
    const peak = Math.max(usd, this.expected(key, now));
    // Re-inserted: the Map's order is then the order of last observation.
    this.peaks.delete(key);
    this.peaks.set(key, { usd: peak, at: now });
    if (this.peaks.size > this.maxKeys) this.peaks.delete(this.peaks.keys().next().value!);
  }

  /** The decayed peak; 0 for a pair never observed. */
  expected(key: string, now = Date.now()): number {
    const peak = this.peaks.get(key);
    if (!peak) return 0;
    return peak.usd * 0.5 ** (Math.max(0, now - peak.at) / HALF_LIFE_MS);
  }
}
