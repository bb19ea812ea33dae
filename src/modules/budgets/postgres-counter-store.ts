import { DataSource } from 'typeorm';
import { BudgetCounter, CounterStore, RateWindow, RowSettlements } from './counter-store';

/**
 * Counters in the gateway's PostgreSQL (`budget_counters`, `rate_counters`): one
 * conditional UPDATE or upsert per check, and settlement inside the log INSERT, so a
 * counter always equals the sum of its stored rows even when a batch is retried.
 */
export class PostgresCounterStore extends CounterStore {
  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async reserveBudget(counter: BudgetCounter, amountUsd: number, limitUsd: number, seed: () => Promise<number>): Promise<boolean> {
    const key = [counter.scope, counter.scopeId, counter.periodStart];
    const reserve = () =>
      this.count(
        `with held as (
           update budget_counters set reserved_usd = reserved_usd + $4
           where scope = $1 and scope_id = $2 and period_start = $3 and spent_usd + reserved_usd < $5
           returning 1)
         select count(*)::int as n from held`,
        [...key, amountUsd, limitUsd],
      );
    // One UPDATE in the common case; the period's first request creates the counter.
    if (await reserve()) return true;
    const exists = await this.count(`select count(*)::int as n from budget_counters where scope = $1 and scope_id = $2 and period_start = $3`, key);
    if (exists) return false;
    await this.dataSource.query(`insert into budget_counters (scope, scope_id, period_start, spent_usd) values ($1, $2, $3, $4) on conflict do nothing`, [...key, await seed()]);
    return (await reserve()) > 0;
  }

  async countRequest(window: RateWindow, max: number): Promise<boolean> {
    return (
      (await this.count(
        `with counted as (
           insert into rate_counters (scope, scope_id, limit_key, window_start, used) values ($1, $2, $3, $4, 1)
           on conflict (scope, scope_id, limit_key, window_start) do update set used = rate_counters.used + 1 where rate_counters.used < $5
           returning 1)
         select count(*)::int as n from counted`,
        [window.scope, window.scopeId, window.limitKey, window.windowStart, max],
      )) > 0
    );
  }

  async tokensUsed(window: RateWindow): Promise<number> {
    const [row] = await this.dataSource.query(
      `select coalesce(max(used), 0)::float8 as used from rate_counters where scope = $1 and scope_id = $2 and limit_key = $3 and window_start = $4`,
      [window.scope, window.scopeId, window.limitKey, window.windowStart],
    );
    return Number(row.used);
  }

  /** Only rows inserted by this statement settle: a batch retried after a failure neither loses nor doubles a settlement. */
  logInsertSteps(rows: RowSettlements[], params: unknown[]): string[] {
    const budgets = rows.flatMap((row) => row.budgets.map((settlement) => ({ ...settlement, log_id: row.logId })));
    const tokens = rows.flatMap((row) => row.tokens.map((settlement) => ({ ...settlement, log_id: row.logId })));
    const steps: string[] = [];
    if (budgets.length) {
      params.push(JSON.stringify(budgets));
      steps.push(`budgets as (
        update budget_counters c
        set spent_usd = c.spent_usd + s.spend_usd, reserved_usd = greatest(0, c.reserved_usd - s.release_usd)
        from (
          select s.scope, s.scope_id, s.period_start, sum(s.spend_usd) as spend_usd, sum(s.release_usd) as release_usd
          from jsonb_to_recordset($${params.length}::jsonb)
            as s(log_id uuid, scope text, scope_id uuid, period_start timestamptz, spend_usd numeric, release_usd numeric)
          join inserted on inserted.id = s.log_id
          group by 1, 2, 3) s
        where c.scope = s.scope and c.scope_id = s.scope_id and c.period_start = s.period_start)`);
    }
    if (tokens.length) {
      params.push(JSON.stringify(tokens));
      steps.push(`tokens as (
        insert into rate_counters (scope, scope_id, limit_key, window_start, used)
        select s.scope, s.scope_id, s.limit_key, s.window_start, sum(s.tokens)
        from jsonb_to_recordset($${params.length}::jsonb)
          as s(log_id uuid, scope text, scope_id uuid, limit_key text, window_start timestamptz, tokens bigint)
        join inserted on inserted.id = s.log_id
        group by 1, 2, 3, 4
        on conflict (scope, scope_id, limit_key, window_start) do update set used = rate_counters.used + excluded.used)`);
    }
    return steps;
  }

  async afterLogInsert(): Promise<void> {
    // Settled inside the INSERT.
  }

  private async count(sql: string, params: unknown[]): Promise<number> {
    const [row] = await this.dataSource.query(sql, params);
    return Number(row?.n ?? 0);
  }
}
