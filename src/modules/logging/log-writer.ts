import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { Environment } from '../../config/environment';
import { isDataError } from '../../database/database-errors';
import type { BudgetSettlement, TokenSettlement } from '../../context/budget-records';
import { CounterStore, type RowSettlements } from '../budgets/counter-store';
import { RequestLogEntity } from './entities/request-log.entity';
import { LogJournal, type JournalEntry } from './log-journal';
import { KnownParts, recordWithParts } from './body-parts/record-parts';
import { storableJson, storableRecord } from './storable-record';
import { partsUpsertStep, RECORD_WORKSPACE_SQL } from './body-parts/part-sql';
import { PartStore, type PartToStore } from './body-parts/part-store';
import { DEFAULT_WORKSPACE_ID } from '../workspaces/workspace.entity';

/** A log row, and what it does to budget and token-rate counters once stored (see CounterStore). */
export type LogRecord = Partial<RequestLogEntity> & { budgetSettlements?: BudgetSettlement[]; tokenSettlements?: TokenSettlement[] };

/** A record as queued and journaled: its bodies split (record-parts.ts), with the parts to store. */
type StoredRecord = LogRecord & { bodyParts?: { h: string; n: number; b: unknown }[] | null };

/**
 * A queued record: its JSON, serialised once (the journal's line and the INSERT's
 * parameter), and its settlements. Not the record's objects, which may go at once.
 */
interface Queued extends JournalEntry {
  settlements: RowSettlements;
  /** The keys the row names and its time, for their last_used_at (see markKeysUsed). */
  used: { apiKeyId: string | null; virtualKeyId: string | null; at: number };
  /** The parts the record carries, for KnownParts once it is stored. */
  partKeys: string[];
  /** The parts the record carries, to put in the object store first (PartStore; empty when parts are in PostgreSQL). */
  parts: PartToStore[];
}

function queued(record: LogRecord, json: string, partKeys: string[] = [], parts: PartToStore[] = []): Queued {
  return {
    json,
    partKeys,
    parts,
    settlements: { logId: record.id!, budgets: record.budgetSettlements ?? [], tokens: record.tokenSettlements ?? [] },
    // A record read back from the journal has its time as an ISO string.
    used: { apiKeyId: record.apiKeyId ?? null, virtualKeyId: record.virtualKeyId ?? null, at: new Date(record.createdAt ?? Date.now()).getTime() },
  };
}

/** A line of the journal read back (throws when it is not JSON: a line a crash cut short); its parts are in it. */
function requeued(json: string): Queued {
  const record = JSON.parse(json) as StoredRecord;
  return queued(record, json, [], partsCarried(record));
}

/** The parts a stored record carries, as the object store takes them. */
function partsCarried(record: StoredRecord): PartToStore[] {
  const workspaceId = record.workspaceId ?? DEFAULT_WORKSPACE_ID;
  return (record.bodyParts ?? []).map((part) => ({ workspaceId, hash: part.h, json: JSON.stringify(part.b) }));
}

/**
 * Writes log rows off the request path: each record is journaled on disk (LogJournal),
 * queues in memory and is inserted in batches every LOG_FLUSH_INTERVAL_MS (or as soon
 * as a batch is full). When the database fails, the batch goes back to the queue and is
 * retried with backoff; past LOG_QUEUE_MAX records the oldest wait on disk only and are
 * read back when the queue drains. Shutdown flushes; what the database could not take
 * stays in the journal for the next start.
 */
@Injectable()
export class LogWriter implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(LogWriter.name);
  private queue: Queued[] = [];
  /** The INSERT's text (see insert), built once from the entity's columns. */
  private insertSql?: string;
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private failures = 0;
  private dropped = 0;
  private readonly batchSize: number;
  private readonly intervalMs: number;
  private readonly maxQueue: number;

  private readonly journal: LogJournal | null;
  /** Parts stored lately, which a record need not carry again (see KnownParts). */
  readonly knownParts = new KnownParts();

  constructor(
    private readonly dataSource: DataSource,
    private readonly counters: CounterStore,
    private readonly partStore: PartStore,
    config: ConfigService<Environment, true>,
  ) {
    this.batchSize = config.get('LOG_BATCH_SIZE', { infer: true });
    this.intervalMs = config.get('LOG_FLUSH_INTERVAL_MS', { infer: true });
    this.maxQueue = config.get('LOG_QUEUE_MAX', { infer: true });
    const journalDir = config.get('LOG_JOURNAL_DIR', { infer: true }) ?? join(config.get('DATA_DIR', { infer: true }), 'journal');
    this.journal = journalDir === 'off' ? null : new LogJournal(journalDir, config.get('LOG_JOURNAL_MAX_BYTES', { infer: true }));
  }

  onModuleInit(): void {
    const adopted = this.journal?.adoptOrphans() ?? 0;
    if (adopted) this.logger.log(`Replaying ${adopted} log journal file(s) left by an earlier run`);
    this.schedule(adopted ? 0 : this.intervalMs);
  }

  enqueue(record: LogRecord): void {
    const { json, partKeys, parts } = recordWithParts(record, this.knownParts);
    const entry = queued(record, json, partKeys, this.partStore.inDatabase ? [] : parts);
    this.journal?.append(entry);
    if (this.queue.length >= this.maxQueue) this.leaveMemory(this.queue.shift()!);
    this.queue.push(entry);
    if (this.queue.length >= this.batchSize && !this.flushing) void this.flush();
  }

  /** Writes everything queued so far; resolves when it is in the database (or the write failed). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.writeQueued().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** The oldest record leaves memory past LOG_QUEUE_MAX; if it is journaled it is read back once the queue drains. */
  private leaveMemory(entry: Queued): void {
    if (!this.journal?.spill(entry) && ++this.dropped % 1000 === 1) {
      this.logger.error(`Log queue full (${this.maxQueue}) and not journaled: ${this.dropped} oldest records dropped`);
    }
  }

  /** Records waiting in memory. */
  pending(): number {
    return this.queue.length;
  }

  /** Bytes of the journal on disk (0 without a journal). */
  journalBytes(): number {
    return this.journal?.size ?? 0;
  }

  // Before TypeORM closes its pool (that happens in onApplicationShutdown).
  async beforeApplicationShutdown(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (let attempt = 0; attempt < 3 && this.queue.length; attempt++) await this.flush();
    if (this.queue.length && this.journal) this.logger.warn(`${this.queue.length} log records stay in the journal; the next start writes them`);
    else if (this.queue.length) this.logger.error(`${this.queue.length} log records could not be written before shutdown`);
    this.journal?.close();
  }

  private async writeQueued(): Promise<void> {
    for (;;) {
      if (this.queue.length === 0) {
        // Memory is drained: read back what only the journal holds, oldest first.
        const spilled = this.journal?.readSpilled(requeued);
        if (!spilled) return;
        this.queue.push(...spilled);
        continue;
      }
      const batch = this.queue.splice(0, this.batchSize);
      let unwritten: Queued[] = [];
      let failure: unknown;
      try {
        await this.insert(batch);
      } catch (error) {
        failure = error;
        if (isDataError(error)) ({ unwritten, failure } = await this.insertOneByOne(batch));
        else unwritten = batch;
      }
      const written = unwritten.length ? batch.filter((entry) => !unwritten.includes(entry)) : batch;
      this.journal?.release(written);
      this.knownParts.learn(written.flatMap((entry) => entry.partKeys));
      await this.markKeysUsed(written);
      if (unwritten.length) {
        this.queue.unshift(...unwritten);
        // Records enqueued while the batch was out filled the queue: the memory bound holds all the same.
        while (this.queue.length > this.maxQueue) this.leaveMemory(this.queue.shift()!);
        this.failures++;
        this.logger.warn(`Writing ${unwritten.length} log records failed (attempt ${this.failures}): ${(failure as Error).message}`);
        return;
      }
      this.failures = 0;
    }
  }

  /**
   * A row PostgreSQL refuses must not block the queue. Stored again with its text made
   * storable (storableRecord: NUL, lone surrogates, over-long indexed values); if even
   * that is refused, without its bodies, noting why. Stops at a failure of the database
   * itself, returning the records not written.
   */
  private async insertOneByOne(batch: Queued[]): Promise<{ unwritten: Queued[]; failure?: unknown }> {
    for (const [index, entry] of batch.entries()) {
      try {
        await this.insert([entry]);
        continue;
      } catch (error) {
        if (!isDataError(error)) return { unwritten: batch.slice(index), failure: error };
      }
      const record = JSON.parse(entry.json) as StoredRecord;
      const cleaned = storableRecord(record, this.columnTypes());
      cleaned.bodyParts = record.bodyParts?.map((part) => ({ ...part, b: storableJson(part.b) }));
      try {
        await this.insert([queued(cleaned, JSON.stringify(cleaned), entry.partKeys, this.partStore.inDatabase ? [] : partsCarried(cleaned))]);
      } catch (error) {
        if (!isDataError(error)) return { unwritten: batch.slice(index), failure: error };
        const note = { gateway_note: `body not storable: ${(error as Error).message}` };
        const bare = { ...cleaned, requestBody: note, responseBody: note, requestHeaders: null, partHashes: null, partLayout: null, bodyParts: null };
        await this.insert([queued(bare, JSON.stringify(bare))]).catch((again: Error) => this.logger.error(`Log record ${record.id} dropped: ${again.message}`));
      }
    }
    return { unwritten: [] };
  }

  /** The log entity's column types by property (text, jsonb and integer are what storableRecord cleans). */
  private columnTypes(): Map<string, string> {
    return new Map(this.dataSource.getMetadata(RequestLogEntity).columns.map((column) => [column.propertyName, String(column.type)]));
  }

  /**
   * One INSERT of the whole batch from one parameter, the records' JSON (already built
   * for the journal) as an array that PostgreSQL unpacks with json_to_recordset:
   * TypeORM's query builder, and then a parameter per column, each JSON column
   * serialised again, cost more CPU than PostgreSQL spent storing the rows.
   */
  private async insert(entries: Queued[]): Promise<void> {
    // A record read back from the journal may still be queued too: each id once, or it would settle twice.
    const batch = entries.length > 1 ? [...new Map(entries.map((entry) => [entry.settlements.logId, entry])).values()] : entries;
    const params: unknown[] = [`[${batch.map((entry) => entry.json).join(',')}]`];
    const insert = (this.insertSql ??= this.buildInsertSql());
    const settlements = batch.map((entry) => entry.settlements);
    const steps = this.counters.logInsertSteps(settlements, params);
    const statement = `with ${insert}${steps.map((step) => `, ${step}`).join('')} select 1`;
    if (this.partStore.inDatabase) await this.dataSource.query(statement, params);
    else await this.insertAfterParts(batch, statement, params);
    await this.counters.afterLogInsert(settlements);
  }

  /** With parts in an object store: puts the batch's parts there, then stores the rows (PartStore.putThenStore). */
  private async insertAfterParts(batch: Queued[], statement: string, params: unknown[]): Promise<void> {
    const db = this.dataSource.createQueryRunner();
    try {
      await this.partStore.putThenStore(
        db,
        batch.flatMap((entry) => entry.parts),
        statement,
        params,
      );
    } finally {
      await db.release();
    }
  }

  /**
   * Moves the keys' last_used_at forward to their newest row of a stored batch: one UPDATE per
   * batch, after the INSERT and apart from it, so that its failure costs the rows nothing (it
   * is only logged). A key row locked by someone else (an admin's change) is skipped, not
   * waited for: the next batch with that key sets it.
   */
  private async markKeysUsed(written: Queued[]): Promise<void> {
    const newest = (key: 'apiKeyId' | 'virtualKeyId'): [string[], string[]] => {
      const byKey = new Map<string, number>();
      for (const { used } of written) {
        const id = used[key];
        if (id && Number.isFinite(used.at) && used.at > (byKey.get(id) ?? -Infinity)) byKey.set(id, used.at);
      }
      return [[...byKey.keys()], [...byKey.values()].map((at) => new Date(at).toISOString())];
    };
    const [apiKeys, apiKeyTimes] = newest('apiKeyId');
    const [virtualKeys, virtualKeyTimes] = newest('virtualKeyId');
    if (!apiKeys.length && !virtualKeys.length) return;
    const step = (name: string, table: string, ids: number, times: number) =>
      `${name} as (update ${table} k set last_used_at = u.at from unnest($${ids}::uuid[], $${times}::timestamptz[]) as u(id, at)
        where k.id = u.id and (k.last_used_at is null or k.last_used_at < u.at)
          and k.id in (select id from ${table} where id = any($${ids}::uuid[]) for update skip locked) returning 1)`;
    try {
      await this.dataSource.query(`with ${step('a', 'api_keys', 1, 2)}, ${step('v', 'virtual_keys', 3, 4)} select 1`, [
        apiKeys,
        apiKeyTimes,
        virtualKeys,
        virtualKeyTimes,
      ]);
    } catch (error) {
      this.logger.warn(`Setting last_used_at of ${apiKeys.length + virtualKeys.length} keys failed (the log rows are stored): ${(error as Error).message}`);
    }
  }

  /**
   * Two steps of one statement (the rows' settlements follow them), so a row is never stored without its parts:
   * `parts` (part-sql.ts), then `inserted`, the rows. `$1` is a JSON array of records keyed by property name;
   * each column is read by its property name and type. A record stored before (a replay) is skipped: its key
   * is (id, created_at), the log being partitioned by created_at, and a replayed record carries the created_at
   * it was first written with.
   */
  private buildInsertSql(): string {
    const columns = this.dataSource.getMetadata(RequestLogEntity).columns;
    const names = columns.map((column) => `"${column.databaseName}"`).join(',');
    const fields = columns.map((column) => `"${column.propertyName}" ${String(column.type)}${column.isArray ? '[]' : ''}`).join(',');
    // A column with a default takes it for a record written before the column was (a journal replayed after an upgrade).
    const valueOf = (column: (typeof columns)[number]) =>
      typeof column.default === 'string' || typeof column.default === 'number' || typeof column.default === 'boolean'
        ? `coalesce(r."${column.propertyName}", ${typeof column.default === 'string' ? `'${column.default.replace(/'/g, "''")}'` : String(column.default)})`
        : `r."${column.propertyName}"`;
    const values = columns.map((column) => (column.propertyName === 'workspaceId' ? RECORD_WORKSPACE_SQL : valueOf(column))).join(',');
    const rows = `inserted as (
      insert into request_logs (${names}) select ${values} from json_to_recordset($1::json) as r(${fields})
      on conflict (id, created_at) do nothing returning id)`;
    return `${partsUpsertStep('$1', this.partStore.inDatabase)}, ${rows}`;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => void this.flushThenSchedule(), delayMs);
    this.timer.unref();
  }

  private async flushThenSchedule(): Promise<void> {
    try {
      await this.flush();
    } catch (error) {
      // Not the database's failures (flush keeps those queued): a fault of the writer itself, which must not stop its timer.
      this.failures++;
      this.logger.error(`Flushing the log queue failed: ${(error as Error).message}`);
    }
    if (this.timer === undefined) return; // shut down meanwhile
    // Back off while the database fails: 0.5 s, 1 s, … up to 5 s (one cheap attempt, and logs back soon after it is).
    const backoff = this.failures ? Math.min(5_000, this.intervalMs * 2 ** Math.min(this.failures, 10)) : this.intervalMs;
    this.schedule(backoff);
  }
}
