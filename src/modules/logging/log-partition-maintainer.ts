import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource, QueryRunner } from 'typeorm';
import type { Environment } from '../../config/environment';
import { exclusivePass } from '../../database/exclusive-pass';
import { PartStore } from './body-parts/part-store';

const DAY_MS = 86_400_000;
/** How often a pass runs (and once at start-up): partitions are made days ahead, so a missed pass costs nothing. */
const MAINTENANCE_INTERVAL_MS = 3_600_000;
/** Days after today that have their partition ready (as the migration PartitionRequestLogs makes them). */
export const PARTITION_DAYS_AHEAD = 3;
/** Rollup rows deleted per statement: short transactions beside the compactor's upserts. */
const ROLLUP_DELETE_BATCH = 5_000;
/** Body parts freed per statement, for the same reason. */
const PART_DELETE_BATCH = 1_000;
/**
 * How long a pass waits for a lock on the log. Dropping a partition needs ACCESS EXCLUSIVE on
 * the log (DETACH ... CONCURRENTLY is refused while a default partition exists): statements
 * queue behind the waiting DROP, so it gives up soon and the next pass tries again.
 */
const LOCK_TIMEOUT = '500ms';
/** pg_try_advisory_lock key of a maintenance pass (any constant the gateway uses nowhere else). */
const MAINTENANCE_LOCK = 7_305_118_002;
const PARTITION_NAME = /^request_logs_p(\d{4})(\d{2})(\d{2})$/;

/** What one pass did. */
export interface MaintenanceReport {
  /** Partitions made, by day (YYYY-MM-DD). */
  created: string[];
  /** Partitions dropped by LOG_RETENTION_DAYS, by day. */
  dropped: string[];
  /** Rollup rows deleted by ROLLUP_RETENTION_DAYS. */
  rollupRowsDeleted: number;
  /** Log body parts freed: no kept row references them (LOG_RETENTION_DAYS), or their workspace is deleted. */
  partsFreed: number;
}

/**
 * Keeps the day partitions of the request log (migration PartitionRequestLogs): makes those
 * of today and the next PARTITION_DAYS_AHEAD days, and of any day that has rows waiting in
 * the default partition (they move in); drops the partitions older than LOG_RETENTION_DAYS,
 * frees the body parts no kept row references and those of deleted workspaces, and deletes
 * the rollups older than ROLLUP_RETENTION_DAYS. Off the request path and the
 * log writer's (short lock timeouts; what could not be done is done next pass), on one
 * instance at a time (advisory lock), at start-up and every hour.
 */
@Injectable()
export class LogPartitionMaintainer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(LogPartitionMaintainer.name);
  private readonly logRetentionDays?: number;
  private readonly rollupRetentionDays?: number;
  private timer?: NodeJS.Timeout;
  private running?: Promise<MaintenanceReport | null>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly partStore: PartStore,
    config: ConfigService<Environment, true>,
  ) {
    this.logRetentionDays = config.get('LOG_RETENTION_DAYS', { infer: true });
    this.rollupRetentionDays = config.get('ROLLUP_RETENTION_DAYS', { infer: true });
  }

  onApplicationBootstrap(): void {
    void this.run();
    this.timer = setInterval(() => void this.run(), MAINTENANCE_INTERVAL_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass (joins the one under way); null when another instance holds the lock or the database failed. */
  run(now = new Date()): Promise<MaintenanceReport | null> {
    return (this.running ??= this.pass(now)
      .catch((error: Error) => {
        this.logger.warn(`Log partition maintenance failed: ${error.message}`);
        return null;
      })
      .finally(() => (this.running = undefined)));
  }

  private pass(now: Date): Promise<MaintenanceReport | null> {
    return exclusivePass(this.dataSource, MAINTENANCE_LOCK, LOCK_TIMEOUT, async (db) => {
      const report = {
        created: await this.createPartitions(db, now),
        dropped: await this.dropOldPartitions(db, now),
        partsFreed: await this.freeParts(db, now),
        rollupRowsDeleted: await this.deleteOldRollups(db, now),
      };
      if (report.created.length) this.logger.log(`Request log partitions made for ${report.created.join(', ')}`);
      if (report.partsFreed) this.logger.log(`Log retention: ${report.partsFreed} body parts no kept row references freed`);
      if (report.rollupRowsDeleted) this.logger.log(`Rollup retention (${this.rollupRetentionDays} days): ${report.rollupRowsDeleted} rollup rows deleted`);
      return report;
    });
  }

  /** Today's partition and the next days', and one for each day that has rows in the default partition. */
  private async createPartitions(db: QueryRunner, now: Date): Promise<string[]> {
    const today = Math.floor(now.getTime() / DAY_MS);
    const days = new Set(Array.from({ length: PARTITION_DAYS_AHEAD + 1 }, (_, i) => dayOf(today + i)));
    const waiting: { day: string }[] = await db.query(`select distinct to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day from request_logs_default`);
    for (const { day } of waiting) days.add(day);
    const created: string[] = [];
    for (const day of [...days].sort()) {
      const [{ made }] = (await this.attempt(`making the partition of ${day}`, () =>
        db.query('select request_logs_create_partition($1::date) as made', [day]),
      )) ?? [{}];
      if (made) created.push(day);
    }
    return created;
  }

  /** Drops the day partitions that ended LOG_RETENTION_DAYS or more ago (whole days only: a row is kept at least that long). */
  private async dropOldPartitions(db: QueryRunner, now: Date): Promise<string[]> {
    if (!this.logRetentionDays) return [];
    const oldestKept = this.oldestRetainedDay(now);
    const dropped: string[] = [];
    for (const { name, day } of await partitionsByDay(db)) {
      if (day >= oldestKept) continue;
      // A dropped partition fires no DELETE trigger: its days stay in the rollups.
      if (await this.attempt(`dropping the partition of ${day}`, () => db.query(`drop table ${name}`).then(() => true))) {
        dropped.push(day);
        this.logger.log(`Log retention (${this.logRetentionDays} days): dropped partition ${name}, the request log of ${day}`);
      }
    }
    return dropped;
  }

  /**
   * Frees the body parts (migration LogBodyParts) that only dropped rows referenced: those
   * last referenced before the oldest day the log still holds; and every part of a deleted
   * workspace. In batches of short statements: the log writer, which may store one of them
   * again meanwhile, waits at most for one batch.
   */
  private async freeParts(db: QueryRunner, now: Date): Promise<number> {
    let freed = 0;
    if (this.logRetentionDays) freed += await this.freePartsWhere(db, 'last_seen_day < $1::date', [await this.oldestDayHeld(db, now)]);
    return freed + (await this.freePartsWhere(db, 'workspace_id in (select id from workspaces where deleted_at is not null)', []));
  }

  /**
   * Deletes the part rows `where` selects, in batches; with parts in an object store, each
   * batch with its objects (PartStore.freeWith).
   */
  private async freePartsWhere(db: QueryRunner, where: string, params: unknown[]): Promise<number> {
    if (this.partStore.inDatabase) return deleteInBatches(db, 'log_body_parts', where, params, PART_DELETE_BATCH);
    const batch = `delete from log_body_parts where ctid = any(array(select ctid from log_body_parts where ${where} limit ${PART_DELETE_BATCH})) returning workspace_id, hash`;
    let freed = 0;
    for (;;) {
      const count = await this.partStore.freeWith(db, batch, params);
      freed += count;
      if (count < PART_DELETE_BATCH) return freed;
    }
  }

  /** The first day LOG_RETENTION_DAYS keeps. */
  private oldestRetainedDay(now: Date): string {
    return dayOf(Math.floor((now.getTime() - this.logRetentionDays! * DAY_MS) / DAY_MS));
  }

  /**
   * The oldest day whose rows the log may still hold: the retention's, or earlier when a
   * partition past it is still there (its drop failed and waits for the next pass) or the
   * default partition holds older rows.
   */
  private async oldestDayHeld(db: QueryRunner, now: Date): Promise<string> {
    const [{ day: waiting }] = await db.query(`select to_char(min(created_at) at time zone 'UTC', 'YYYY-MM-DD') as day from request_logs_default`);
    const days = (await partitionsByDay(db)).map(({ day }) => day);
    return [this.oldestRetainedDay(now), ...days, ...(waiting ? [waiting] : [])].sort()[0];
  }

  /** Deletes, in small batches, the rollup rows whose period ended ROLLUP_RETENTION_DAYS or more ago. */
  private async deleteOldRollups(db: QueryRunner, now: Date): Promise<number> {
    if (!this.rollupRetentionDays) return 0;
    const cutoff = new Date(now.getTime() - this.rollupRetentionDays * DAY_MS);
    return deleteInBatches(db, 'request_log_rollups', `bucket + ('1 ' || period)::interval <= $1`, [cutoff], ROLLUP_DELETE_BATCH);
  }

  /** Runs one step; a lock it waited for too long (or another failure) is logged and left for the next pass (undefined). */
  private async attempt<T>(what: string, step: () => Promise<T>): Promise<T | undefined> {
    try {
      return await step();
    } catch (error) {
      this.logger.warn(`Log partition maintenance: ${what} failed, tried again next pass: ${(error as Error).message}`);
      return undefined;
    }
  }
}

/** The log's day partitions (the default one apart), oldest first. */
async function partitionsByDay(db: QueryRunner): Promise<{ name: string; day: string }[]> {
  const partitions: { name: string }[] = await db.query(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'request_logs'::regclass order by c.relname`,
  );
  return partitions.flatMap(({ name }) => {
    const match = PARTITION_NAME.exec(name);
    return match ? [{ name, day: `${match[1]}-${match[2]}-${match[3]}` }] : [];
  });
}

/** Deletes the rows of `table` that `where` selects, `batch` rows a statement (short transactions beside the writers'); answers how many. */
async function deleteInBatches(db: QueryRunner, table: string, where: string, params: unknown[], batch: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const [, count] = await db.query(`delete from ${table} where ctid = any(array(select ctid from ${table} where ${where} limit ${batch}))`, params);
    deleted += count;
    if (count < batch) return deleted;
  }
}

/** YYYY-MM-DD of a UTC day number (days since 1970-01-01). */
function dayOf(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}
