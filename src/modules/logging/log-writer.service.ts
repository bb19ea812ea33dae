import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource } from 'typeorm';
import type { Environment } from '../../config/environment';
import type { BudgetSettlement } from '../budgets/budget-ledger.service';
import { CounterStore } from '../budgets/counter-store';
import type { TokenSettlement } from '../budgets/rate-limiter.service';
import { RequestLogEntity } from './entities/request-log.entity';

/** A log row, and what it does to budget and token-rate counters once stored (see CounterStore). */
export type LogRecord = Partial<RequestLogEntity> & { budgetSettlements?: BudgetSettlement[]; tokenSettlements?: TokenSettlement[] };

/**
 * Writes log rows off the request path: records queue in memory and are inserted in
 * batches every LOG_FLUSH_INTERVAL_MS (or as soon as a batch is full). When the
 * database fails, the batch goes back to the queue and is retried with backoff;
 * nothing is dropped unless the queue passes LOG_QUEUE_MAX. Shutdown flushes.
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

  constructor(
    private readonly dataSource: DataSource,
    private readonly counters: CounterStore,
    config: ConfigService<Environment, true>,
  ) {
    this.batchSize = config.get('LOG_BATCH_SIZE', { infer: true });
    this.intervalMs = config.get('LOG_FLUSH_INTERVAL_MS', { infer: true });
    this.maxQueue = config.get('LOG_QUEUE_MAX', { infer: true });
  }

  onModuleInit(): void {
    this.schedule(this.intervalMs);
  }

  enqueue(record: LogRecord): void {
    if (this.queue.length >= this.maxQueue) {
      this.queue.shift();
      if (++this.dropped % 1000 === 1) this.logger.error(`Log queue full (${this.maxQueue}): ${this.dropped} oldest records dropped`);
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

  pending(): number {
    return this.queue.length;
  }

  // Before TypeORM closes its pool (that happens in onApplicationShutdown).
  async beforeApplicationShutdown(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (let attempt = 0; attempt < 3 && this.queue.length; attempt++) await this.flush();
    if (this.queue.length) this.logger.error(`${this.queue.length} log records could not be written before shutdown`);
  }

  private async writeQueued(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.batchSize);
      try {
        await this.insert(batch);
        this.failures = 0;
      } catch (error) {
        if (isDataError(error)) {
          await this.insertOneByOne(batch);
          continue;
        }
        this.queue.unshift(...batch);
        this.failures++;
        this.logger.warn(`Writing ${batch.length} log records failed (attempt ${this.failures}): ${(error as Error).message}`);
        return;
      }
    }
  }

  /**
   * A row PostgreSQL refuses (e.g. a body with a NUL character, which jsonb cannot hold)
   * must not block the queue: store it without its bodies, noting why.
   */
  private async insertOneByOne(batch: LogRecord[]): Promise<void> {
    for (const record of batch) {
      try {
        await this.insert([record]);
      } catch (error) {
        if (!isDataError(error)) throw error;
        const note = { gateway_note: `body not storable: ${(error as Error).message}` };
        await this.insert([{ ...record, requestBody: note, responseBody: note, requestHeaders: null }]).catch((again: Error) =>
          this.logger.error(`Log record ${record.id} dropped: ${again.message}`),
        );
      }
    }
  }

  /**
   * One multi-row INSERT with parameters, built by hand: TypeORM's query builder spent
   * more CPU preparing a batch than PostgreSQL spent storing it (see the benchmark).
   */
  private async insert(batch: LogRecord[]): Promise<void> {
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
      // Back off while the database fails: 0.25 s, 0.5 s, … up to 30 s.
      const backoff = this.failures ? Math.min(30_000, this.intervalMs * 2 ** Math.min(this.failures, 10)) : this.intervalMs;
      this.schedule(backoff);
    }, delayMs);
    this.timer.unref();
  }
}

/** PostgreSQL classes 22 (data exception) and 23 (integrity): the row, not the database, is at fault. */
function isDataError(error: unknown): boolean {
  const code = (error as { driverError?: { code?: string }; code?: string }).driverError?.code ?? (error as { code?: string }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}
