/** The budget and rate-limit records shared by the ledger, the limiter, their counter stores and the request context. */

export type BudgetScope = 'api_key' | 'virtual_key' | 'end_user';

/** An estimate reserved against one key's budget for a request in flight. */
export interface BudgetHold {
  scope: BudgetScope;
  scopeId: string;
  /** What the log rows of this scope carry: the API key id, the virtual key id or the user. */
  owner: string;
  periodStart: Date;
  amountUsd: number;
}

/** What a log row does to a budget counter when it is written (see LogWriter). */
export interface BudgetSettlement {
  scope: BudgetScope;
  scope_id: string;
  period_start: string;
  spend_usd: number;
  release_usd: number;
}

/** What a log row adds to a token window. */
export interface TokenSettlement {
  scope: BudgetScope;
  scope_id: string;
  limit_key: string;
  window_start: string;
  tokens: number;
}

/** One rate-limit window of a key: `limitKey` is `<type>:<unit>`, e.g. `requests:rpm`. */
export interface RateWindow {
  scope: BudgetScope;
  scopeId: string;
  limitKey: string;
  windowStart: Date;
  windowMs: number;
}
