import type { BudgetScope, BudgetSettlement, RateWindow, TokenSettlement } from '../../context/budget-records';

/** One budget counter: a key's spend (and reservations in flight) in one budget period. */
export interface BudgetCounter {
  scope: BudgetScope;
  scopeId: string;
  periodStart: Date;
}

export type BudgetReservation = 'held' | 'refused' | 'held_locally';

/** What one log row does to the counters once it is stored. */
export interface RowSettlements {
  logId: string;
  budgets: BudgetSettlement[];
  tokens: TokenSettlement[];
}

/**
 * Where budget and rate counters live, shared by every gateway instance: PostgreSQL by
 * default, Redis when REDIS_URL is set. Every operation is atomic in the store, so
 * concurrent requests on several instances never both take the last unit of a limit.
 *
 * Settlement (a logged row's cost and tokens added, its reservation released) must
 * happen exactly once per stored log row. PostgreSQL does it in the statement that
 * inserts the rows (`logInsertSteps`); Redis after the insert (`afterLogInsert`), with a
 * per-row marker that makes a repeated settlement a no-op.
 */
export abstract class CounterStore {
  /**
   * Adds `amountUsd` to the counter's reservations if its spend plus reservations is
   * under `limitUsd`. A counter that does not exist yet starts from `seed()`, the spend
   * the log already holds for the period (a budget set on a key that has been spending).
   * `held_locally`: the store was unreachable and this instance admitted the request
   * from what it last knew of the counter; there is no stored reservation to release.
   */
  abstract reserveBudget(counter: BudgetCounter, amountUsd: number, limitUsd: number, seed: () => Promise<number>): Promise<BudgetReservation>;

  /** Counts one request in the window if it is under `max`; false (nothing counted) when full. */
  abstract countRequest(window: RateWindow, max: number): Promise<boolean>;

  /** The tokens the window's logged rows have used so far. */
  abstract tokensUsed(window: RateWindow): Promise<number>;

  /**
   * Common table expressions the log writer adds to its INSERT (whose CTE is named
   * `inserted` and returns `id`), pushing their parameters onto `params`; none when the
   * store settles elsewhere.
   */
  abstract logInsertSteps(rows: RowSettlements[], params: unknown[]): string[];

  /**
   * Called once the rows are stored. Never rejects: the rows are safe, and a settlement
   * that fails is kept and retried by the store.
   */
  abstract afterLogInsert(rows: RowSettlements[]): Promise<void>;
}
