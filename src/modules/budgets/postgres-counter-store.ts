import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { ThrottledWarning } from '../../common/logging/throttled-warning';
import { isDatabaseUnavailable } from '../../database/database-errors';
import type { RateWindow } from '../../context/budget-records';
import { BudgetCounter, BudgetReservation, CounterStore, RowSettlements } from './counter-store';

const LAST_KNOWN_MAX = 100_000;

/**
 * Counters in the gateway's PostgreSQL (`budget_counters`, `rate_counters`): one
 * conditional UPDATE or upsert per check, and settlement inside the log INSERT, so a
 * counter always equals the sum of its stored rows even when a batch is retried.
 *
 * While the database is unreachable, limits stay enforced from what this instance last
 * read of each counter, counting its own requests on top (a key whose budget it has
 * never checked gets 503); the log rows, journaled meanwhile, settle the real costs
 * when the database is back.
 */
export class PostgresCounterStore extends CounterStore {
  private readonly logger = new Logger(PostgresCounterStore.name);
  private readonly warning = new ThrottledWarning(this.logger);
  /** Spend + reservations (USD) or requests/tokens used, per counter, as last read. */
  private readonly lastKnown = new Map<string, number>();

  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async reserveBudget(counter: BudgetCounter, amountUsd: number, limitUsd: number, seed: () => Promise<number>): Promise<BudgetReservation> {
    const key = [counter.scope, counter.scopeId, counter.periodStart];
    const memo = `budget:${counter.scope}:${counter.scopeId}:${counter.periodStart.getTime()}`;
    const reserve = async () => {
      const [row] = await this.dataSource.query(
        // In a CTE: TypeORM answers a bare UPDATE with [rows, count], a SELECT with its rows.
        `with held as (
           update budget_counters set reserved_usd = reserved_usd + $4
           where scope = $1 and scope_id = $2 and period_start = $3 and spent_usd + reserved_usd < $5
           returning (spent_usd + reserved_usd)::float8 as used)
         select used from held`,
        [...key, amountUsd, limitUsd],
      );
      if (row) this.remember(memo, Number(row.used));
      return row !== undefined;
    };
    try {
      // One UPDATE in the common case; the period's first request creates the counter.
      if (await reserve()) return 'held';
      const [exists] = await this.dataSource.query(`select 1 from budget_counters where scope = $1 and scope_id = $2 and period_start = $3`, key);
      if (!exists) {
        await this.dataSource.query(`insert into budget_counters (scope, scope_id, period_start, spent_usd) values ($1, $2, $3, $4) on conflict do nothing`, [
          ...key,
          await seed(),
        ]);
        if (await reserve()) return 'held';
      }
      this.remember(memo, limitUsd);
      return 'refused';
    } catch (error) {
      const used = this.whenUnreachable(error, memo);
      if (used === undefined) throw GatewayError.unavailable("The gateway cannot check this key's budget right now: its database is unreachable");
      if (used >= limitUsd) return 'refused';
      this.remember(memo, used + amountUsd);
      return 'held_locally';
    }
  }

  async countRequest(window: RateWindow, max: number): Promise<boolean> {
    const memo = rateMemo(window);
    try {
      const [row] = await this.dataSource.query(
        `with counted as (
           insert into rate_counters (scope, scope_id, limit_key, window_start, used) values ($1, $2, $3, $4, 1)
           on conflict (scope, scope_id, limit_key, window_start) do update set used = rate_counters.used + 1 where rate_counters.used < $5
           returning used::float8 as used)
         select used from counted`,
        [window.scope, window.scopeId, window.limitKey, window.windowStart, max],
      );
      this.remember(memo, row ? Number(row.used) : max);
      return row !== undefined;
    } catch (error) {
      // A window that began during the outage counts from this instance's own requests.
      const used = this.whenUnreachable(error, memo) ?? 0;
      if (used >= max) return false;
      this.remember(memo, used + 1);
      return true;
    }
  }

  async tokensUsed(window: RateWindow): Promise<number> {
    const memo = rateMemo(window);
    try {
      const [row] = await this.dataSource.query(
        `select coalesce(max(used), 0)::float8 as used from rate_counters where scope = $1 and scope_id = $2 and limit_key = $3 and window_start = $4`,
        [window.scope, window.scopeId, window.limitKey, window.windowStart],
      );
      this.remember(memo, Number(row.used));
      return Number(row.used);
    } catch (error) {
      return this.whenUnreachable(error, memo) ?? 0;
    }
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

  /** The counter as last read, when `error` is the database being unreachable; rethrows anything else. */
  private whenUnreachable(error: unknown, memo: string): number | undefined {
    if (!isDatabaseUnavailable(error)) throw error;
    this.warning.warn(`Database unreachable: budgets and rate limits enforced from this instance's last known counters (${(error as Error).message})`);
    return this.lastKnown.get(memo);
  }

  /** Bounded memory: the counter read longest ago goes first (a Map iterates in insertion order). */
  private remember(memo: string, used: number): void {
    this.lastKnown.delete(memo);
    this.lastKnown.set(memo, used);
    if (this.lastKnown.size > LAST_KNOWN_MAX) this.lastKnown.delete(this.lastKnown.keys().next().value as string);
  }
}

function rateMemo(window: RateWindow): string {
  return `rate:${window.scope}:${window.scopeId}:${window.limitKey}:${window.windowStart.getTime()}`;
}
