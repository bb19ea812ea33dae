import { MigrationInterface, QueryRunner } from 'typeorm';

export class BudgetCounters1764000100000 implements MigrationInterface {
  name = 'BudgetCounters1764000100000';

  async up(db: QueryRunner): Promise<void> {
    // One row per budgeted key and budget period (a new period is a new row: no reset job).
    // spent_usd: the logged cost of the period; reserved_usd: estimates of requests in flight.
    await db.query(`
      create table budget_counters (
        scope text not null,
        scope_id uuid not null,
        period_start timestamptz(3) not null,
        spent_usd numeric(20, 10) not null default 0,
        reserved_usd numeric(20, 10) not null default 0,
        primary key (scope, scope_id, period_start)
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table budget_counters`);
  }
}
