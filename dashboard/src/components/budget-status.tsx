import { formatCost } from '../format';

/** What the admin API says of a key's (a workspace's, an end user's) spend. */
export interface SpendFields {
  spent_usd?: number;
  unpriced_requests?: number;
  budget_limit_usd?: number | null;
  budget_period?: string | null;
}

/** The budget status of a row of the admin API. */
export function RowBudgetStatus({ row }: { row: SpendFields }) {
  return (
    <BudgetStatus spent={row.spent_usd ?? 0} unpriced={row.unpriced_requests ?? 0} limit={row.budget_limit_usd ?? null} period={row.budget_period ?? null} />
  );
}

/** Spend at or past this share of the budget is "near the budget". */
export const NEAR_BUDGET = 0.8;

/**
 * Spend against a budget, with a warning once it is near (80%) or over it: over, the
 * gateway refuses the requests (402) until the period ends.
 */
export function BudgetStatus({ spent, unpriced = 0, limit, period }: { spent: number; unpriced?: number; limit: number | null; period: string | null }) {
  if (limit === null)
    return (
      <span>
        <span class="muted">no budget</span> · <SpentText spent={spent} unpriced={unpriced} /> spent
      </span>
    );
  const share = limit > 0 ? spent / limit : spent > 0 ? Infinity : 0;
  return (
    <span>
      <SpentText spent={spent} unpriced={unpriced} /> of {formatCost(limit)} {period ?? 'in total'}
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

/**
 * Spend as known: requests at a model without a price add no made-up $0, they are counted
 * apart ("$1.20 + 3 unpriced").
 */
export function SpentText({ spent, unpriced = 0 }: { spent: number; unpriced?: number }) {
  return (
    <span>
      {formatCost(spent)}
      {unpriced > 0 && (
        <span class="unpriced-cost" data-testid="unpriced" title="Requests at a model without a known price: set one on the Prices page">
          {' '}
          + {unpriced} unpriced
        </span>
      )}
    </span>
  );
}
