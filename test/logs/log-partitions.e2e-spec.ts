/**
 * The request log partitioned by UTC day (migration PartitionRequestLogs) and kept by
 * LogPartitionMaintainer: the migration keeps every row (in its day's partition) and the
 * rollups, partitions are made ahead, a row of a day without one lands in the default
 * partition, retention drops old days and old rollups, reads work across partitions, and
 * a replayed record is stored once.
 */
import { randomUUID } from 'node:crypto';
import type { ConfigService } from '@nestjs/config';
import { Client } from 'pg';
import { uuidv7 } from '../../src/common/ids';
import type { Environment } from '../../src/config/environment';
import { PartitionRequestLogs1764001500000 } from '../../src/database/migrations/1764001500000-PartitionRequestLogs';
import { LogPartitionMaintainer, PARTITION_DAYS_AHEAD } from '../../src/modules/logging/log-partition-maintainer';
import { PartStore } from '../../src/modules/logging/body-parts/part-store';
import { LogRollupCompactor } from '../../src/modules/logging/log-rollup-compactor';
import { LogWriter } from '../../src/modules/logging/log-writer';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const DAY_MS = 86_400_000;
const dayOf = (date: Date) => date.toISOString().slice(0, 10);
const partitionOf = (day: string) => `request_logs_p${day.replace(/-/g, '')}`;

describe('request log partitions', () => {
  let gateway: TestGateway;
  const query = <T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> => gateway.dataSource.query(sql, params);

  /** A log row written straight into the table (the rollup triggers see it), its id stamped at its time. */
  const insertLog = async (createdAt: Date, fields: { id?: string; model?: string; cost?: number } = {}) => {
    const id = fields.id ?? uuidv7(createdAt.getTime());
    await query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens, model, provider)
       values ($1, 'partitions', $2, 'chat.completions', 200, 120, $3, 10, 5, $4, 'openai')`,
      [id, createdAt, fields.cost ?? 0.001, fields.model ?? 'gpt-4o-mini'],
    );
    return id;
  };
  const partitions = async () =>
    (
      await query<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'request_logs'::regclass order by 1`,
      )
    ).map((row) => row.name);
  const compact = () => query('select request_log_rollups_compact(100000)');
  const rollups = () =>
    query(
      `select period, bucket, dimension, name, value, api_key_id, requests, errors, prompt_tokens, completion_tokens, cost_usd::text, latency_bins, latency_counts from request_log_rollups order by 1, 2, 3, 4, 5, 6`,
    );
  const maintainer = (env: Partial<Environment>) =>
    new LogPartitionMaintainer(gateway.dataSource, gateway.app.get(PartStore), { get: (name: keyof Environment) => env[name] } as unknown as ConfigService<
      Environment,
      true
    >);

  beforeAll(async () => {
    gateway = await startTestGateway();
    await gateway.app.get(LogPartitionMaintainer).run(); // the start-up pass, joined
    // The rollups are compacted by the tests (compact), so that they compare them at will.
    await gateway.app.get(LogRollupCompactor).beforeApplicationShutdown();
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('has the partitions of today and the next days from the start, and makes more as days pass', async () => {
    const now = Date.now();
    const ahead = Array.from({ length: PARTITION_DAYS_AHEAD + 1 }, (_, i) => partitionOf(dayOf(new Date(now + i * DAY_MS))));
    expect(await partitions()).toEqual(expect.arrayContaining([...ahead, 'request_logs_default']));

    const report = await maintainer({}).run(new Date(now + 2 * DAY_MS));
    expect(report?.created).toEqual([dayOf(new Date(now + (PARTITION_DAYS_AHEAD + 1) * DAY_MS)), dayOf(new Date(now + (PARTITION_DAYS_AHEAD + 2) * DAY_MS))]);
    expect(await partitions()).toContain(partitionOf(dayOf(new Date(now + (PARTITION_DAYS_AHEAD + 2) * DAY_MS))));
  });

  it("gives every partition's GIN indexes (bodies' words, part hashes) a 128 kB pending list, those made as days pass too", async () => {
    const newest = partitionOf(dayOf(new Date(Date.now() + (PARTITION_DAYS_AHEAD + 5) * DAY_MS)));
    await maintainer({}).run(new Date(Date.now() + 5 * DAY_MS));
    const ginIndexes = await query<{ partition: string; settings: string[] | null }>(
      `select i.indrelid::regclass::text as partition, c.reloptions as settings
       from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am am on am.oid = c.relam join pg_inherits h on h.inhrelid = i.indrelid
       where h.inhparent = 'request_logs'::regclass and am.amname = 'gin'`,
    );
    expect(ginIndexes.map((index) => index.partition)).toEqual(expect.arrayContaining([newest, partitionOf(dayOf(new Date())), 'request_logs_default']));
    expect(ginIndexes.length).toBeGreaterThanOrEqual(2 * 3);
    for (const index of ginIndexes) expect(index.settings).toEqual(['gin_pending_list_limit=128']);
  });

  it('runs on one instance at a time: a pass while another holds the lock does nothing', async () => {
    const other = new Client({ connectionString: gateway.databaseUrl });
    await other.connect();
    try {
      await other.query('select pg_advisory_lock(7305118002)');
      expect(await maintainer({}).run(new Date(Date.now() + 30 * DAY_MS))).toBeNull();
      expect(await partitions()).not.toContain(partitionOf(dayOf(new Date(Date.now() + 30 * DAY_MS))));
    } finally {
      await other.end();
    }
  });

  it('the migration moves rows of several days into their partitions, keeps the rollups, and reverts', async () => {
    const migration = new PartitionRequestLogs1764001500000();
    const migrate = async (step: 'up' | 'down') => {
      const runner = gateway.dataSource.createQueryRunner();
      try {
        await runner.startTransaction();
        await migration[step](runner);
        await runner.commitTransaction();
      } finally {
        await runner.release();
      }
    };
    const indexes = async () =>
      (await query<{ name: string }>(`select indexname as name from pg_indexes where tablename = 'request_logs' order by 1`)).map((row) => row.name);
    const indexesBefore = await indexes();
    await migrate('down');
    expect(await query(`select relkind from pg_class where relname = 'request_logs'`)).toEqual([{ relkind: 'r' }]);
    expect(await indexes()).toEqual(indexesBefore);

    const now = Date.now();
    const times = [40, 12, 3, 1, 0].map((days) => new Date(now - days * DAY_MS - 60_000));
    const ids = [];
    for (const time of times) ids.push(await insertLog(time), await insertLog(time, { model: 'gpt-4o' }));
    await compact();
    await insertLog(new Date(now - 2 * DAY_MS)); // still queued for the rollups while migrating
    const [{ rows: rowsBefore }] = await query<{ rows: number }>('select count(*)::int as rows from request_logs');
    const rollupsBefore = await rollups();
    const [{ queued }] = await query<{ queued: number }>('select count(*)::int as queued from request_log_rollup_queue');
    expect(queued).toBe(1);

    await migrate('up');
    expect(await query(`select relkind from pg_class where relname = 'request_logs'`)).toEqual([{ relkind: 'p' }]);
    expect(await query<{ rows: number }>('select count(*)::int as rows from request_logs')).toEqual([{ rows: rowsBefore }]);
    const misplaced = await query(
      `select id from request_logs where tableoid::regclass::text <> 'request_logs_p' || to_char(created_at at time zone 'UTC', 'YYYYMMDD')`,
    );
    expect(misplaced).toEqual([]);
    for (const time of times) expect(await partitions()).toContain(partitionOf(dayOf(time)));
    expect(await rollups()).toEqual(rollupsBefore);
    expect(await query('select count(*)::int as queued from request_log_rollup_queue')).toEqual([{ queued }]);
    expect(await indexes()).toEqual(indexesBefore);
    expect(
      await query(
        `select a.attname as column from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey) where i.indrelid = 'request_logs'::regclass and i.indisprimary order by 1`,
      ),
    ).toEqual([{ column: 'created_at' }, { column: 'id' }]);

    // The triggers came along: a new row is queued for the rollups, a deleted one leaves them.
    const fresh = await insertLog(new Date());
    expect(await query('select count(*)::int as queued from request_log_rollup_queue where id = $1', [fresh])).toEqual([{ queued: 1 }]);
    await query('delete from request_logs where id = $1', [fresh]);
    expect(await query('select count(*)::int as queued from request_log_rollup_queue where id = $1', [fresh])).toEqual([{ queued: 0 }]);

    // And back, and forth again, losing nothing.
    await migrate('down');
    await migrate('up');
    expect(await query<{ rows: number }>('select count(*)::int as rows from request_logs')).toEqual([{ rows: rowsBefore }]);
    expect(await rollups()).toEqual(rollupsBefore);
    const { status, body } = await admin(gateway, 'GET', `/v1/logs/${ids[0]}`);
    expect(status).toBe(200);
    expect(body.created_at).toBe(times[0].toISOString());
  });

  it('keeps a row of a day without a partition in the default partition, then moves it into the day made for it', async () => {
    const far = new Date('2099-06-15T08:00:00Z');
    const id = await insertLog(far);
    expect(await query('select tableoid::regclass::text as partition from request_logs where id = $1', [id])).toEqual([{ partition: 'request_logs_default' }]);
    await compact();
    const rollupsBefore = await rollups();

    const report = await maintainer({}).run();
    expect(report?.created).toContain('2099-06-15');
    expect(await query('select tableoid::regclass::text as partition from request_logs where id = $1', [id])).toEqual([
      { partition: 'request_logs_p20990615' },
    ]);
    expect(await query('select count(*)::int as n from request_logs_default')).toEqual([{ n: 0 }]);
    expect(await rollups()).toEqual(rollupsBefore);
    expect((await admin(gateway, 'GET', `/v1/logs/${id}`)).body.created_at).toBe(far.toISOString());
  });

  it('the log writer stores a record replayed twice once, also in the default partition', async () => {
    const writer = gateway.app.get(LogWriter);
    for (const createdAt of [new Date(), new Date('2098-01-01T00:00:00Z')]) {
      const model = `replayed-${randomUUID()}`;
      const record = {
        id: uuidv7(createdAt.getTime()),
        traceId: 'replayed',
        createdAt,
        operation: 'chat.completions',
        model,
        statusCode: 200,
        isStream: false,
        latencyMs: 5,
        costUsd: 0.5,
        metadata: {},
        retryCount: 0,
      };
      writer.enqueue(record);
      await writer.flush();
      writer.enqueue(record);
      await writer.flush();
      expect(await query('select count(*)::int as n from request_logs where id = $1', [record.id])).toEqual([{ n: 1 }]);
      await compact();
      expect(
        await query(`select sum(requests)::int as n from request_log_rollups where period = 'day' and dimension = 'model' and value = $1`, [model]),
      ).toEqual([{ n: 1 }]);
    }
  });

  it('reads the log and analytics across partitions; a log is found by id whatever its id says of its time', async () => {
    const now = new Date();
    const yesterday = new Date(now.getTime() - DAY_MS);
    const model = `across-${randomUUID()}`;
    const ids = [await insertLog(yesterday, { model, cost: 1 }), await insertLog(now, { model, cost: 2 })];
    const notV7 = await insertLog(new Date(now.getTime() - 2 * DAY_MS), { model, cost: 4, id: randomUUID() });
    expect(
      new Set(
        (await query<{ partition: string }>('select tableoid::regclass::text as partition from request_logs where model = $1', [model])).map(
          (row) => row.partition,
        ),
      ).size,
    ).toBe(3);

    // Newest id first, a page across partitions, then the next page from the cursor.
    const byId = [...ids, notV7].sort().reverse();
    const list = await admin(gateway, 'GET', `/v1/logs?model=${model}&limit=2`);
    expect(list.body.data.map((row: { id: string }) => row.id)).toEqual(byId.slice(0, 2));
    const next = await admin(gateway, 'GET', `/v1/logs?model=${model}&limit=2&cursor=${list.body.next_cursor}`);
    expect(next.body.data.map((row: { id: string }) => row.id)).toEqual(byId.slice(2));
    for (const id of [...ids, notV7]) expect((await admin(gateway, 'GET', `/v1/logs/${id}`)).body.id).toBe(id);
    expect((await admin(gateway, 'GET', `/v1/logs/${uuidv7()}`)).status).toBe(404);

    const from = new Date(now.getTime() - DAY_MS - 3_600_000).toISOString();
    const to = new Date(now.getTime() + 60_000).toISOString();
    const summary = await admin(gateway, 'GET', `/v1/analytics/summary?group_by=model&from=${from}&to=${to}`);
    expect(summary.body.data.find((row: { key: string }) => row.key === model)).toMatchObject({ requests: 2, cost_usd: 3 });
    const long = await admin(gateway, 'GET', `/v1/analytics/summary?group_by=model&from=${new Date(now.getTime() - 10 * DAY_MS).toISOString()}&to=${to}`);
    expect(long.body.data.find((row: { key: string }) => row.key === model)).toMatchObject({ requests: 3, cost_usd: 7 });
  });

  it('retention drops the partitions past LOG_RETENTION_DAYS and the rollups past ROLLUP_RETENTION_DAYS; analytics keep the rollups', async () => {
    const now = new Date();
    const model = `retained-${randomUUID()}`;
    const ages = [1, 5, 10, 20, 45];
    for (const days of ages) await insertLog(new Date(now.getTime() - days * DAY_MS), { model, cost: days });
    await compact();
    await maintainer({}).run(now); // their days' partitions
    const retention = maintainer({ LOG_RETENTION_DAYS: 7, ROLLUP_RETENTION_DAYS: 30 });

    // A reader holding the partition of 10 days ago: the drop gives up at once and waits for the next pass.
    const reader = new Client({ connectionString: gateway.databaseUrl });
    await reader.connect();
    const tenDaysAgo = dayOf(new Date(now.getTime() - 10 * DAY_MS));
    await reader.query('begin');
    await reader.query(`select count(*) from ${partitionOf(tenDaysAgo)}`);
    const started = Date.now();
    const first = await retention.run(now);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(first?.dropped).toEqual(expect.arrayContaining([dayOf(new Date(now.getTime() - 45 * DAY_MS)), dayOf(new Date(now.getTime() - 20 * DAY_MS))]));
    expect(first?.dropped).not.toContain(tenDaysAgo);
    await reader.query('rollback');
    await reader.end();
    const second = await retention.run(now);
    expect(second?.dropped).toEqual([tenDaysAgo]);

    const kept = await query<{ days: number }>(
      `select round(extract(epoch from $1::timestamptz - created_at) / 86400)::int as days from request_logs where model = $2 order by 1`,
      [now, model],
    );
    expect(kept.map((row) => row.days)).toEqual([1, 5]);
    const oldestKept = dayOf(new Date(now.getTime() - 7 * DAY_MS));
    expect((await partitions()).filter((name) => /^request_logs_p\d{8}$/.test(name) && name < partitionOf(oldestKept))).toEqual([]);
    expect(first!.rollupRowsDeleted).toBeGreaterThan(0);
    const [{ oldRollups }] = await query<{ oldRollups: number }>(
      `select count(*)::int as "oldRollups" from request_log_rollups where bucket + ('1 ' || period)::interval <= $1::timestamptz - interval '30 days'`,
      [now],
    );
    expect(oldRollups).toBe(0);
    const byDay = await query<{ period: string; requests: number }>(
      `select period, sum(requests)::int as requests from request_log_rollups where dimension = 'model' and value = $1 group by 1 order by 1`,
      [model],
    );
    expect(byDay.find((row) => row.period === 'day')?.requests).toBe(4); // 45 days ago is gone, 20 and 10 days ago stay

    // Whole days of the dropped partitions still count in analytics, from the rollups.
    const from = new Date(Math.floor((now.getTime() - 25 * DAY_MS) / DAY_MS) * DAY_MS).toISOString();
    const summary = await admin(gateway, 'GET', `/v1/analytics/summary?group_by=model&from=${from}&to=${now.toISOString()}`);
    expect(summary.body.data.find((row: { key: string }) => row.key === model)).toMatchObject({ requests: 4, cost_usd: 1 + 5 + 10 + 20 });
  });
});
