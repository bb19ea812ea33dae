import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigService } from '@nestjs/config';
import type { DataSource } from 'typeorm';
import type { Environment } from '../../config/environment';
import type { CounterStore } from '../budgets/counter-store';
import type { PartStore } from './body-parts/part-store';
import { LogWriter, type LogRecord } from './log-writer';

/** A database that went away mid-batch: statements hang until `goAway`, which fails them and every later one. */
function unreachableDatabase() {
  const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  const waiting: ((error: Error) => void)[] = [];
  let gone = false;
  const dataSource = {
    getMetadata: () => ({ columns: [{ databaseName: 'id', propertyName: 'id', type: 'uuid', isArray: false }] }),
    query: () => (gone ? Promise.reject(refused()) : new Promise((_, reject) => waiting.push(reject))),
  } as unknown as DataSource;
  const goAway = () => {
    gone = true;
    waiting.splice(0).forEach((reject) => reject(refused()));
  };
  return { dataSource, goAway, waiting: () => waiting.length };
}

function writer(dataSource: DataSource, journalDir: string, maxQueue: number, batchSize: number): LogWriter {
  const settings: Partial<Environment> = {
    LOG_BATCH_SIZE: batchSize,
    LOG_FLUSH_INTERVAL_MS: 60_000,
    LOG_QUEUE_MAX: maxQueue,
    LOG_JOURNAL_DIR: journalDir,
    LOG_JOURNAL_MAX_BYTES: 64 * 1024 * 1024,
  };
  const config = { get: (name: keyof Environment) => settings[name] } as unknown as ConfigService<Environment, true>;
  const counters = { logInsertSteps: () => [] } as unknown as CounterStore;
  return new LogWriter(dataSource, counters, { inDatabase: true } as PartStore, config);
}

const record = (i: number) =>
  ({ id: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`, createdAt: new Date(), requestBody: null, responseBody: null }) as unknown as LogRecord;

describe('LogWriter', () => {
  let journalDir: string;
  beforeEach(() => (journalDir = mkdtempSync(join(tmpdir(), 'log-writer-'))));
  afterEach(() => rmSync(journalDir, { recursive: true, force: true }));

  it('keeps at most LOG_QUEUE_MAX records in memory when a failed batch comes back to a queue filled meanwhile', async () => {
    const database = unreachableDatabase();
    const logs = writer(database.dataSource, journalDir, 20, 5);
    for (let i = 0; i < 5; i++) logs.enqueue(record(i)); // a full batch: its write starts and hangs
    expect(database.waiting()).toBe(1);
    expect(logs.pending()).toBe(0);
    for (let i = 5; i < 40; i++) logs.enqueue(record(i)); // the queue fills up while the batch is out
    expect(logs.pending()).toBe(20);

    const flushed = logs.flush();
    database.goAway();
    await flushed;
    expect(logs.pending()).toBe(20);
    // Nothing is lost: what left memory is in the journal, read back once the queue drains.
    expect(logs.journalBytes()).toBeGreaterThan(0);
    await logs.beforeApplicationShutdown().catch(() => undefined);
  });
});
