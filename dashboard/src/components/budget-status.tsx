import { formatCost } from '../format';

/** Spend at or past this share of the budget is "near the budget". */
export const NEAR_BUDGET = 0.8;

/**
 * Spend against a budget, with a warning once it is near (80%) or over it: over, the
 * gateway refuses the requests (402) until the period ends.
 */
export function BudgetStatus({ spent, limit, period }: { spent: number; limit: number | null; period: string | null }) {
  if (limit === null)
    return (
      <span>
        <span class="muted">no budget</span> · {formatCost(spent)} spent
      </span>
    );
  const share = limit > 0 ? spent / limit : spent > 0 ? Infinity : 0;
  return (
    <span>
      {formatCost(spent)} of {formatCost(limit)} {period ?? 'in total'}
      {spent >= limit ? (
        <strong class="over-budget" data-testid="over-budget">
          over budget: requests refused
        </strong>
      ) : share >= NEAR_BUDGET ? (
        <strong class="near-budget" data-testid="near-budget">
          {Math.round(share * 100)}% used
        </strong>
      ) : null}
    </span>
  );
}
