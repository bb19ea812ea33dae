import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes the dashboard's reads need beyond those of the initial schema, which already
 * has `(column, id desc)` for trace_id, api_key_id, virtual_key_id, end_user, model,
 * provider and status_code, `created_at`, and a GIN index on metadata.
 *
 * - `(operation, id desc)`: the log list filtered by operation pages newest first like
 *   the other filters (without it a rare operation walks the whole primary key).
 * - `(api_key_id | virtual_key_id | end_user, created_at) include (cost_usd)`: spend in
 *   the current budget period of each key on the keys pages (`SpendService`: `sum(cost_usd)
 *   where <column> = $1 and created_at >= $2`) becomes an index-only range scan of that
 *   period instead of a visit to every heap row the key ever logged. Measured with
 *   `npm run bench:analytics` (1M rows): 20 API keys from about 1.1 s to a few ms.
 *
 * Plain CREATE INDEX (the migrations run in one transaction, so not CONCURRENTLY): on a
 * large existing log it holds inserts back while it builds; the log writer keeps the
 * rows in its journal meanwhile.
 */
export class LogIndexes1764000400000 implements MigrationInterface {
  name = 'LogIndexes1764000400000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`create index if not exists request_logs_operation_idx on request_logs (operation, id desc)`);
    for (const column of ['api_key_id', 'virtual_key_id', 'end_user']) {
      await db.query(`create index if not exists request_logs_${column}_spend_idx on request_logs (${column}, created_at) include (cost_usd)`);
    }
  }

  async down(db: QueryRunner): Promise<void> {
    for (const column of ['api_key_id', 'virtual_key_id', 'end_user']) {
      await db.query(`drop index if exists request_logs_${column}_spend_idx`);
    }
    await db.query(`drop index if exists request_logs_operation_idx`);
  }
}
