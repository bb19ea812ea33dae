import { MigrationInterface, QueryRunner } from 'typeorm';
import { createRollupFunctions, QUEUED_COLUMNS, RollupCount, RollupRows } from './1764000700000-LogRollups';
import { PRICE_COUNTS } from './1764001600000-LogRollupsUnpriced';

/**
 * Requests as clients saw them (issue 36). A client's request may leave several rows: a
 * failed try that a retry or fallback followed, a tool round of the MCP loop, an MCP tool
 * call. They were all counted as requests (and their failures as errors). Now each row says
 * what it is:
 * - `kind`: `request` (what a client sent: its answer, status and latency), `attempt` (an
 *   earlier try that failed), `tool_round` (an earlier model call of the MCP tool loop), or
 *   `tool_call` (an MCP tool the gateway ran for the request);
 * - `parent_id`: for the last three, the id of the request's row (index: the rows nested
 *   under a request);
 * - `failed_attempts`: on a request's row, how many tries failed before its answer (a
 *   request that succeeded after one is "recovered");
 * - `nested_rows`: on a request's row, how many rows are nested under it.
 *
 * The rollups count requests, errors and latencies of `request` rows only, add up tokens and
 * cost of every row but tool calls (which cost nothing and are not models), and keep
 * `log_rows` (what a group still holds after deletes) and `recovered`.
 *
 * Rows logged before keep `kind = request`: an earlier attempt of theirs cannot be told
 * reliably from a request (a trace id may be the client's, shared by many requests), so
 * they count as they did. Adding columns with constant defaults rewrites no partition; the
 * partial index reads the log once, under the lock (the writer keeps rows in its journal
 * and retries meanwhile).
 */
export const REQUEST_ROWS: RollupRows = { request: `l.kind = 'request'`, included: `l.kind <> 'tool_call'`, empty: 'log_rows <= 0' };

export const REQUEST_COUNTS: RollupCount[] = [
  ...PRICE_COUNTS,
  { column: 'log_rows', where: 'true' },
  { column: 'recovered', where: `l.kind = 'request' and l.failed_attempts > 0 and l.status_code < 400 and l.error is null` },
];

const QUEUED = [...QUEUED_COLUMNS.map(([column]) => column), 'kind', 'failed_attempts'].join(', ');

export class LogRequestKinds1764002700000 implements MigrationInterface {
  name = 'LogRequestKinds1764002700000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('lock table request_logs in share row exclusive mode');
    await db.query(`
      alter table request_logs
        add column kind text not null default 'request',
        add column parent_id uuid,
        add column failed_attempts smallint not null default 0,
        add column nested_rows smallint not null default 0`);
    await db.query(`create index request_logs_parent_idx on request_logs (parent_id) where parent_id is not null`);
    await db.query(
      `alter table request_log_rollup_queue add column kind text not null default 'request', add column failed_attempts smallint not null default 0`,
    );
    await db.query(`
      create or replace function request_log_rollups_enqueue() returns trigger language plpgsql as $$
      begin
        insert into request_log_rollup_queue (id, ${QUEUED}) select id, ${QUEUED} from inserted_rows where kind <> 'tool_call';
        return null;
      end $$`);
    await db.query(`alter table request_log_rollups add column log_rows integer not null default 0, add column recovered integer not null default 0`);
    await db.query(`update request_log_rollups set log_rows = requests`);
    await createRollupFunctions(db, REQUEST_COUNTS, REQUEST_ROWS);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('lock table request_logs in share row exclusive mode');
    await createRollupFunctions(db, PRICE_COUNTS);
    await db.query(`alter table request_log_rollups drop column log_rows, drop column recovered`);
    const legacy = QUEUED_COLUMNS.map(([column]) => column).join(', ');
    await db.query(`
      create or replace function request_log_rollups_enqueue() returns trigger language plpgsql as $$
      begin
        insert into request_log_rollup_queue (id, ${legacy}) select id, ${legacy} from inserted_rows;
        return null;
      end $$`);
    await db.query(`alter table request_log_rollup_queue drop column kind, drop column failed_attempts`);
    await db.query(`drop index request_logs_parent_idx`);
    await db.query(`alter table request_logs drop column kind, drop column parent_id, drop column failed_attempts, drop column nested_rows`);
  }
}
