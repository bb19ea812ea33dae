/** Budget and rate-limit fields shared by API keys and virtual keys (CONTRACT section 4). */
export const BUDGET_PERIODS = ['daily', 'weekly', 'monthly'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export const RATE_LIMIT_TYPES = ['requests', 'tokens'] as const;
export const RATE_LIMIT_UNITS = ['rpm', 'rph', 'rpd'] as const;

export interface RateLimit {
  type: (typeof RATE_LIMIT_TYPES)[number];
  unit: (typeof RATE_LIMIT_UNITS)[number];
  value: number;
}

/** The length of each rate-limit window: fixed windows aligned on UTC. */
export const RATE_WINDOW_MS: Record<RateLimit['unit'], number> = { rpm: 60_000, rph: 3_600_000, rpd: 86_400_000 };

/** Start of the budget period that contains `now` (UTC); null for a lifetime budget. */
export function budgetPeriodStart(period: BudgetPeriod | null, now = new Date()): Date | null {
  if (!period) return null;
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  if (period === 'weekly') start.setUTCDate(start.getUTCDate() - ((start.getUTCDay() + 6) % 7)); // Monday
  if (period === 'monthly') start.setUTCDate(1);
  return start;
}
