import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { setImmediate as yieldToRequests, setTimeout as sleep } from 'node:timers/promises';
import { DataSource, QueryRunner } from 'typeorm';
import type { Environment } from '../../../config/environment';
import { isDataError } from '../../../database/database-errors';
import { exclusivePass } from '../../../database/exclusive-pass';
import { WHOLE_BODIES_SQL } from '../../../database/migrations/1764002400000-LogWholeBodies';
import { partsUpsertStep } from './part-sql';
import { PartStore } from './part-store';
import { KnownParts, recordWithParts, type RecordWithParts } from './record-parts';

/** pg_try_advisory_lock key of a backfill pass (any constant the gateway uses nowhere else). */
const BACKFILL_LOCK = 7_305_118_003;
/** How often a pass runs after the one at start-up: once none is left, it reads one empty index. */
const PASS_INTERVAL_MS = 3_600_000;
/** Rows per batch: one short UPDATE beside the log writer's INSERTs. */
const BATCH_ROWS = 200;
/** Bodies per batch, as PostgreSQL stores them (compressed): a batch of large bodies is cut short (never below one row). */
const BATCH_STORED_BYTES = 4 * 1024 * 1024;
/**
 * How long a batch waits for a lock: only a partition being dropped, or a part the log
 * writer is storing at that moment, holds one, and the writer may be waiting meanwhile for
 * a part the batch has locked. The batch is then tried again a few times, after a pause,
 * before the pass stops (the next one goes on).
 */
const LOCK_TIMEOUT = '500ms';
const LOCK_RETRIES = 3;
const LOCK_RETRY_PAUSE_MS = 1_000;
/** SQLSTATEs of a lock conflict: lock_not_available (LOCK_TIMEOUT), deadlock_detected. */
const LOCK_CONFLICTS = new Set(['55P03', '40P01']);
/** The pause after a batch is as long as the batch took, within these bounds: the backfill has half the time at most. */
const MIN_PAUSE_MS = 50;
const MAX_PAUSE_MS = 1_000;

/** What a pass did. */
export interface BackfillReport {
  /** Rows whose bodies were moved to parts. */
  rows: number;
  /** Parts written with the moved rows: each distinct part once per workspace and day of rows (one stored before only has its last_seen_day moved on). */
  parts: number;
  /** Rows left whole for good: their workspace is deleted (and its parts with it), or PostgreSQL refused them split. */
  keptWhole: number;
}

/** A row with whole bodies, as a batch reads it. */
interface WholeRow {
  id: string;
  created_at: Date;
  /** created_at to the microsecond (a Date keeps milliseconds): with the id, the row's key and the walk's cursor. */
  created_at_exact: string;
  workspace_id: string;
  request_body: unknown;
  response_body: unknown;
  workspace_deleted: boolean;
}

/** A row whose bodies could not be split: kept whole, like one PostgreSQL refuses. */
class UnsplittableRow extends Error {}

/** The row's fault, not the database's: the row is kept whole and the backfill goes on. */
const isRowFault = (error: unknown) => error instanceof UnsplittableRow || isDataError(error);
const isLockConflict = (error: unknown) => LOCK_CONFLICTS.has((error as { driverError?: { code?: string } }).driverError?.code ?? '');

/**
 * The next batch of rows with whole bodies before the cursor ($2 created_at, $3 id), newest
 * first, from the partial index of migration LogWholeBodies (its predicate repeated, so that
 * it is used): at most BATCH_ROWS rows, cut where their stored bodies pass $1 bytes.
 */
const NEXT_BATCH_SQL = `
  select id, created_at, to_json(created_at) #>> '{}' as created_at_exact, workspace_id, request_body, response_body,
    exists (select 1 from workspaces w where w.id = batch.workspace_id and w.deleted_at is not null) as workspace_deleted
  from (
    select *, sum(stored_bytes) over (order by created_at desc, id desc rows unbounded preceding) - stored_bytes as bytes_before
    from (
      select id, created_at, workspace_id, request_body, response_body,
        coalesce(pg_column_size(request_body), 0) + coalesce(pg_column_size(response_body), 0) as stored_bytes
      from request_logs
      where ${WHOLE_BODIES_SQL} and created_at <= $2 and (created_at, id) < ($2, $3)
      order by created_at desc, id desc
      limit ${BATCH_ROWS}) as candidates) as batch
  where bytes_before < $1
  order by created_at desc, id desc`;
/** Before every row: the cursor of a pass's first batch. */
const START = { created_at_exact: 'infinity', id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' };

/**
 * One statement: the parts the records carry (part-sql.ts), then the rows rewritten as the
 * log writer would have stored them (record-parts.ts), unless they were moved meanwhile or
 * their workspace was deleted (retention frees its parts). `$1`: the records, a JSON array;
 * `$2`, `$3`: the oldest and newest created_at of the batch, so that the rows are looked up
 * in their partitions' range only (without it PostgreSQL may join them by scanning them all).
 */
const moveSql = (bodiesInDatabase: boolean) => `
  with ${partsUpsertStep('$1', bodiesInDatabase)},
  moved as (
    update request_logs l
    set request_body = r."requestBody", response_body = r."responseBody", part_hashes = r."partHashes", part_layout = r."partLayout", body_bytes = r."bodyBytes"
    from json_to_recordset($1::json) as r(id uuid, "createdAtExact" timestamptz, "requestBody" jsonb, "responseBody" jsonb, "partHashes" uuid[], "partLayout" jsonb, "bodyBytes" integer)
    where l.id = r.id and l.created_at = r."createdAtExact" and l.created_at between $2 and $3 and l.body_bytes is null
      and not exists (select 1 from workspaces w where w.id = l.workspace_id and w.deleted_at is not null)
    returning 1)
  select count(*)::int as moved from moved`;

/** Marks rows as done with their bodies whole: `body_bytes` set (their JSON text), so no pass reads them again. */
const KEEP_WHOLE_SQL = `
  update request_logs l set body_bytes = coalesce(octet_length(l.request_body::text), 0) + coalesce(octet_length(l.response_body::text), 0)
  from unnest($1::uuid[], $2::timestamptz[]) as k(id, created_at)
  where l.id = k.id and l.created_at = k.created_at and l.body_bytes is null`;

/**
 * Moves the log rows written before bodies were stored as parts (CONTRACT section 14: they
 * keep their bodies whole and read as before) to parts, online: batches of BATCH_ROWS rows,
 * newest first, each one short UPDATE that stores the batch's parts and rewrites its rows as
 * the log writer stores new ones, then a pause as long as the batch took. It never waits on
 * the writer (LOCK_TIMEOUT), runs on one instance at a time (advisory lock), at start-up and
 * hourly (LOG_BODY_BACKFILL=false: never), and stops at shutdown after the batch under way.
 * Rows of deleted workspaces, and rows PostgreSQL refuses once split (data errors), are kept
 * whole for good, with a warning for the latter.
 */
@Injectable()
export class LogBodyBackfill implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(LogBodyBackfill.name);
  private readonly enabled: boolean;
  private timer?: NodeJS.Timeout;
  private running?: Promise<BackfillReport | null>;
  private stopping = false;
  /**
   * Parts this backfill stored, which later rows need not carry again. Its own, not the log
   * writer's: it learns a batch's parts as it splits the batch (the batch is one statement)
   * and forgets everything when a statement fails; and its parts are of past days, which
   * would push the writer's parts of today out of the writer's memory.
   */
  private readonly known = new KnownParts();
  private readonly moveSql: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly partStore: PartStore,
    config: ConfigService<Environment, true>,
  ) {
    this.enabled = config.get('LOG_BODY_BACKFILL', { infer: true });
    this.moveSql = moveSql(partStore.inDatabase);
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    void this.run();
    this.timer = setInterval(() => void this.run(), PASS_INTERVAL_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    this.stopping = true;
    await this.running;
  }

  /** One pass over every row left (joins the one under way); null when another instance holds the lock or the database failed. */
  run(): Promise<BackfillReport | null> {
    return (this.running ??= this.pass()
      .catch((error: Error) => {
        this.logger.warn(`Log body backfill stopped, it goes on next pass: ${error.message}`);
        return null;
      })
      .finally(() => (this.running = undefined)));
  }

  private pass(): Promise<BackfillReport | null> {
    return exclusivePass(this.dataSource, BACKFILL_LOCK, LOCK_TIMEOUT, async (db) => {
      const report = await this.moveAll(db);
      if (report.rows || report.keptWhole) {
        this.logger.log(
          `Log body backfill: ${report.rows} rows written before parts moved to parts (${report.parts} parts stored), ${report.keptWhole} kept whole`,
        );
      }
      return report;
    });
  }

  /** Batch after batch, newest first, until no row is left or the gateway shuts down. */
  private async moveAll(db: QueryRunner): Promise<BackfillReport> {
    const report: BackfillReport = { rows: 0, parts: 0, keptWhole: 0 };
    let cursor: Pick<WholeRow, 'created_at_exact' | 'id'> = START;
    let lockConflicts = 0;
    while (!this.stopping) {
      const started = Date.now();
      const rows: WholeRow[] = await db.query(NEXT_BATCH_SQL, [BATCH_STORED_BYTES, cursor.created_at_exact, cursor.id]);
      if (rows.length === 0) break;
      if (cursor === START && lockConflicts === 0) this.logger.log('Log body backfill: moving the rows written before parts to parts, newest first');
      try {
        const done = await this.moveBatch(db, rows);
        report.rows += done.rows;
        report.parts += done.parts;
        report.keptWhole += done.keptWhole;
      } catch (error) {
        if (!isLockConflict(error) || ++lockConflicts > LOCK_RETRIES) throw error;
        await sleep(LOCK_RETRY_PAUSE_MS);
        continue; // the same batch again
      }
      lockConflicts = 0;
      cursor = rows[rows.length - 1];
      await sleep(Math.min(MAX_PAUSE_MS, Math.max(MIN_PAUSE_MS, Date.now() - started)));
    }
    return report;
  }

  /**
   * Moves a batch in one statement. When PostgreSQL refuses it for a row's sake (a data
   * error), row by row: a row refused alone is kept whole, with a warning.
   */
  private async moveBatch(db: QueryRunner, rows: WholeRow[]): Promise<BackfillReport> {
    const keptWhole = await this.keepWhole(
      db,
      rows.filter((row) => row.workspace_deleted),
    );
    const live = rows.filter((row) => !row.workspace_deleted);
    try {
      return { ...(await this.move(db, live)), keptWhole };
    } catch (error) {
      if (!isRowFault(error)) throw error;
    }
    const done: BackfillReport = { rows: 0, parts: 0, keptWhole };
    for (const row of live) {
      try {
        const moved = await this.move(db, [row]);
        done.rows += moved.rows;
        done.parts += moved.parts;
      } catch (error) {
        if (!isRowFault(error)) throw error;
        this.logger.warn(`Log row ${row.id} keeps its bodies whole: they could not be stored as parts: ${(error as Error).message}`);
        done.keptWhole += await this.keepWhole(db, [row]);
      }
    }
    return done;
  }

  /** Splits the rows' bodies and stores parts and rows in one statement. */
  private async move(db: QueryRunner, rows: WholeRow[]): Promise<Omit<BackfillReport, 'keptWhole'>> {
    if (rows.length === 0) return { rows: 0, parts: 0 };
    try {
      const records: RecordWithParts[] = [];
      for (const row of rows) {
        records.push(this.split(row));
        await yieldToRequests(); // a batch of large bodies is split between requests, not in one block
      }
      const parts = records.flatMap((record) => record.parts);
      const params = [`[${records.map((record) => record.json).join(',')}]`, rows[rows.length - 1].created_at_exact, rows[0].created_at_exact];
      const [{ moved }] = this.partStore.inDatabase
        ? await db.query(this.moveSql, params)
        : await this.partStore.putThenStore<{ moved: number }[]>(db, parts, this.moveSql, params);
      return { rows: moved, parts: parts.length };
    } catch (error) {
      // Parts learnt from this batch were not stored.
      this.known.clear();
      throw error;
    }
  }

  /**
   * The row as the log writer would store it (record-parts.ts): bodies stored before were
   * redacted then, so they are split as they are. Its parts are learnt at once, so that the
   * rest of the batch (the same statement) does not carry them again.
   */
  private split(row: WholeRow): RecordWithParts {
    try {
      const record = recordWithParts(
        {
          id: row.id,
          createdAt: row.created_at,
          createdAtExact: row.created_at_exact,
          workspaceId: row.workspace_id,
          requestBody: row.request_body,
          responseBody: row.response_body,
        },
        this.known,
      );
      this.known.learn(record.partKeys);
      return record;
    } catch (error) {
      throw new UnsplittableRow(`splitting its bodies failed: ${(error as Error).message}`);
    }
  }

  /** Marks rows as done with their bodies whole; how many were. */
  private async keepWhole(db: QueryRunner, rows: WholeRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const [, count] = await db.query(KEEP_WHOLE_SQL, [rows.map((row) => row.id), rows.map((row) => row.created_at_exact)]);
    return count;
  }
}
