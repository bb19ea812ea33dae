import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { Environment } from '../../config/environment';
import { isDataError } from '../../database/database-errors';
import type { BudgetSettlement, TokenSettlement } from '../budgets/budget-types';
import { CounterStore } from '../budgets/counter-store';
import { RequestLogEntity } from './entities/request-log.entity';
import { LogJournal } from './log-journal';
import { storableRecord } from './storable-record';

/** A log row, and what it does to budget and token-rate counters once stored (see CounterStore). */
export type LogRecord = Partial<RequestLogEntity> & { budgetSettlements?: BudgetSettlement[]; tokenSettlements?: TokenSettlement[] };

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
  private queue: LogRecord[] = [];
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private failures = 0;
  private dropped = 0;
  private readonly batchSize: number;
  private readonly intervalMs: number;
  private readonly maxQueue: number;

  private readonly journal: LogJournal | null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly counters: CounterStore,
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
    this.journal?.append(record);
    if (this.queue.length >= this.maxQueue) {
      // The oldest record leaves memory; if it is journaled it is read back once the queue drains.
      if (!this.journal?.spill(this.queue.shift()!) && ++this.dropped % 1000 === 1) {
        this.logger.error(`Log queue full (${this.maxQueue}) and not journaled: ${this.dropped} oldest records dropped`);
      }
    }
    this.queue.push(record);
    if (this.queue.length >= this.batchSize && !this.flushing) void this.flush();
  }

  /** Writes everything queued so far; resolves when it is in the database (or the write failed). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.writeQueued().finally(() => (this.flushing = undefined));
    return this.flushing;
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
        const spilled = this.journal?.readSpilled();
        if (!spilled) return;
        this.queue.push(...(spilled as LogRecord[]));
        continue;
      }
      const batch = this.queue.splice(0, this.batchSize);
      let unwritten: LogRecord[] = [];
      let failure: unknown;
      try {
        await this.insert(batch);
      } catch (error) {
        failure = error;
        if (isDataError(error)) ({ unwritten, failure } = await this.insertOneByOne(batch));
        else unwritten = batch;
      }
      this.journal?.release(unwritten.length ? batch.filter((record) => !unwritten.includes(record)) : batch);
      if (unwritten.length) {
        this.queue.unshift(...unwritten);
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
  private async insertOneByOne(batch: LogRecord[]): Promise<{ unwritten: LogRecord[]; failure?: unknown }> {
    for (const [index, record] of batch.entries()) {
      try {
        await this.insert([record]);
        continue;
      } catch (error) {
        if (!isDataError(error)) return { unwritten: batch.slice(index), failure: error };
      }
      const cleaned = storableRecord(record, this.columnTypes());
      try {
        await this.insert([cleaned]);
      } catch (error) {
        if (!isDataError(error)) return { unwritten: batch.slice(index), failure: error };
        const note = { gateway_note: `body not storable: ${(error as Error).message}` };
        await this.insert([{ ...cleaned, requestBody: note, responseBody: note, requestHeaders: null }]).catch((again: Error) =>
          this.logger.error(`Log record ${record.id} dropped: ${again.message}`),
        );
      }
    }
    return { unwritten: [] };
  }

  /** The log entity's column types by property (text and jsonb are what storableRecord cleans). */
  private columnTypes(): Map<string, string> {
    return new Map(this.dataSource.getMetadata(RequestLogEntity).columns.map((column) => [column.propertyName, String(column.type)]));
  }

  /**
   * One multi-row INSERT with parameters, built by hand: TypeORM's query builder spent
   * more CPU preparing a batch than PostgreSQL spent storing it (see the benchmark).
   */
  private async insert(records: LogRecord[]): Promise<void> {
    // A record read back from the journal may still be queued too: each id once, or it would settle twice.
    const batch = records.length > 1 ? [...new Map(records.map((record) => [record.id, record])).values()] : records;
    const columns = this.dataSource.getMetadata(RequestLogEntity).columns;
    const params: unknown[] = [];
    const rows = batch.map((record) => {
      const placeholders = columns.map((column) => {
        const value = (record as Record<string, unknown>)[column.propertyName];
        params.push(value === undefined ? null : column.type === 'jsonb' && value !== null ? JSON.stringify(value) : value);
        return `$${params.length}`;
      });
      return `(${placeholders.join(',')})`;
    });
    const names = columns.map((column) => `"${column.databaseName}"`).join(',');
    const insert = `insert into request_logs (${names}) values ${rows.join(',')} on conflict (id) do nothing`;
    const settlements = batch.map((record) => ({ logId: record.id!, budgets: record.budgetSettlements ?? [], tokens: record.tokenSettlements ?? [] }));
    const steps = this.counters.logInsertSteps(settlements, params);
    await this.dataSource.query(steps.length ? `with inserted as (${insert} returning id), ${steps.join(', ')} select 1` : insert, params);
    await this.counters.afterLogInsert(settlements);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(async () => {
      await this.flush();
      if (this.timer === undefined) return; // shut down meanwhile
      // Back off while the database fails: 0.5 s, 1 s, … up to 5 s (one cheap attempt, and logs back soon after it is).
      const backoff = this.failures ? Math.min(5_000, this.intervalMs * 2 ** Math.min(this.failures, 10)) : this.intervalMs;
      this.schedule(backoff);
    }, delayMs);
    this.timer.unref();
  }
}
