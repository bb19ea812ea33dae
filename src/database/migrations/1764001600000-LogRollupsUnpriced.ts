import { MigrationInterface, QueryRunner } from 'typeorm';
import { createRollupFunctions, RollupCount, upsert } from './1764000700000-LogRollups';

/**
 * A model without a price must not read as $0 in analytics (issue 25): the rollups count,
 * besides the sums, the rows that have a cost (`priced_requests`) and the rows that used a
 * model (tokens) without one (`unpriced_requests`). A group whose rows have no price at all
 * has an unknown cost, not 0; a failure that used nothing (no tokens, no cost) is neither.
 *
 * Existing rollups are rebuilt from the log (as LogRollups filled them): the log is locked
 * against writers meanwhile, and the queue, which the rebuild covers, is emptied with them.
 */
export const PRICE_COUNTS: RollupCount[] = [
  { column: 'priced_requests', where: 'l.cost_usd is not null' },
  { column: 'unpriced_requests', where: 'l.cost_usd is null and (l.prompt_tokens is not null or l.completion_tokens is not null)' },
];

export class LogRollupsUnpriced1764001600000 implements MigrationInterface {
  name = 'LogRollupsUnpriced1764001600000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('lock table request_logs in share row exclusive mode');
    await db.query(
      'alter table request_log_rollups add column priced_requests integer not null default 0, add column unpriced_requests integer not null default 0',
    );
    await createRollupFunctions(db, PRICE_COUNTS);
    await this.rebuild(db, PRICE_COUNTS);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('lock table request_logs in share row exclusive mode');
    await createRollupFunctions(db, []);
    await db.query('alter table request_log_rollups drop column priced_requests, drop column unpriced_requests');
  }

  private async rebuild(db: QueryRunner, counts: RollupCount[]): Promise<void> {
    await db.query('truncate request_log_rollups, request_log_rollup_queue');
    await db.query('set local jit = off');
    await db.query(`set local work_mem = '256MB'`);
    await db.query(`with ${upsert('request_logs', 1, counts)} select 1`);
    await db.query('analyze request_log_rollups');
  }
}
