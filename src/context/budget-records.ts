/** The budget and rate-limit records shared by the ledger, the limiter, their counter stores and the request context. */

/** Whose budget or rate limit: a key's, an end user's, or a workspace's (across all its keys, CONTRACT section 13). */
export type BudgetScope = 'api_key' | 'virtual_key' | 'end_user' | 'workspace';

/** An estimate reserved against one key's budget for a request in flight. */
export interface BudgetHold {
  scope: BudgetScope;
  scopeId: string;
  /** What the log rows of this scope carry: the API key id, the virtual key id, the user or the workspace id. */
  owner: string;
  /** The request's workspace: an end user's rows are the `user`'s rows in this workspace only. */
  workspaceId: string;
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
