/**
 * Analytics over ranges longer than two days read the log rollups (migration LogRollups),
 * the rows queued for them and not compacted yet, and the log rows of the partial edge days
 * and hours. The answers must not depend on how far compaction got. Every figure is
 * checked against the same aggregate computed straight from the log rows: counts, tokens
 * and cost exactly; p50/p95 come from latency histograms, so within a bin (9%) of the exact
 * percentile_cont.
 */
import { LogRollups1764000700000 } from '../../src/database/migrations/1764000700000-LogRollups';
import { LogRollupsUnpriced1764001600000 } from '../../src/database/migrations/1764001600000-LogRollupsUnpriced';
import { LogRequestKinds1764002700000 } from '../../src/database/migrations/1764002700000-LogRequestKinds';
// The exact path's figures (checked against hand-counted rows in analytics*.e2e-spec.ts) are the reference.
import { ROW_AGGREGATES } from '../../src/modules/logging/analytics.service';
import { call, createApiKey, createVirtualKey } from '../support/e2e-helpers';
import { startTestGateway, TestGateway } from '../support/test-gateway';

// Nineteen and a half days: partial first and last days and hours, two whole weeks (from
// Monday 4 and 11 March), whole days around them. Rows are seeded from a day before to after.
const FROM = '2024-03-01T06:30:00.000Z';
const TO = '2024-03-20T18:45:00.000Z';
const GROUPINGS = ['user', 'model', 'provider', 'operation', 'api_key', 'virtual_key', 'metadata.team', 'metadata.note'];

/** What the summary computes, from the log rows themselves (percentile_cont: exact). */
const EXACT_GROUP: Record<string, string> = {
  user: 'log.end_user as key',
  model: 'log.model as key',
  provider: 'log.provider as key',
  operation: 'log.operation as key',
  api_key: 'log.api_key_id::text as key',
  // Grouped by id, named by slug.
  virtual_key: 'coalesce(vk.slug, log.virtual_key_id::text) as key, log.virtual_key_id::text as virtual_key_id',
  'metadata.team': `log.metadata ->> 'team' as key`,
  'metadata.note': `left(log.metadata ->> 'note', 512) as key`,
};
/** The widest histogram bin, high / low: 2^(1/8). */
const BIN_RATIO = 2 ** (1 / 8);

type Figures = Record<string, number | string | null>;

describe('analytics over long ranges (rollups)', () => {
  let gateway: TestGateway;
  let userKey: { id: string; key: string };
  let virtualKeyId: string;

  /** `count` log rows from `start`, one every `stepSeconds`, with varied groups, latencies, errors and costs. */
  const seed = (start: string, count: number, stepSeconds: number, firstIndex = 1) =>
    gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens,
                                 api_key_id, virtual_key_id, model, provider, end_user, metadata, error, kind, failed_attempts)
       select gen_random_uuid(), 'seeded', $1::timestamptz + (i - $5) * make_interval(secs => $3),
              (array['chat.completions', 'embeddings', 'responses'])[1 + i % 3],
              case when i % 23 = 0 then 500 when i % 31 = 0 then 429 else 200 end,
              case when i % 10 = 0 then 1 + i % 4 else 50 + (i * 7919) % 2950 end,
              case when i % 17 = 0 then null else (i % 97) * 0.0001 end,
              i % 500, i % 300,
              case when i % 4 = 0 then $4::uuid end,
              case when i % 5 = 0 then $6::uuid when i % 5 = 1 then '00000000-0000-4000-9000-0000000000aa'::uuid end,
              (array['gpt-4o', 'gpt-4o-mini', 'claude-sonnet', null])[1 + i % 4],
              (array['openai', 'anthropic'])[1 + i % 2],
              case when i % 11 = 0 then null else 'user-' || i % 7 end,
              case when i % 3 = 0 then '{}'::jsonb
                   else jsonb_build_object('team', (array['search', 'ads', 'support'])[1 + i % 3], 'note', repeat('n', 600) || (i % 2)) end,
              case when i % 29 = 0 then '{"type": "upstream_error", "message": "failed"}'::jsonb end,
              -- Rows nested under a request: they add tokens and cost, not requests, errors or latencies; tool calls are left out.
              case when i % 13 = 0 then 'attempt' when i % 19 = 0 then 'tool_round' when i % 37 = 0 then 'tool_call' else 'request' end,
              case when i % 6 = 0 then 1 else 0 end
       from generate_series($5::int, $5::int + $2::int - 1) as i`,
      [start, count, stepSeconds, userKey.id, firstIndex, virtualKeyId],
    );

  const summary = async (groupBy: string, apiKey?: string, range = { from: FROM, to: TO }) => {
    const response = await call(gateway, `/v1/analytics/summary?group_by=${groupBy}&from=${range.from}&to=${range.to}`, { apiKey });
    expect(response.status).toBe(200);
    return response.body;
  };

  const exactSummary = async (groupBy: string, apiKeyId?: string): Promise<Figures[]> =>
    gateway.dataSource.query(
      `select ${EXACT_GROUP[groupBy]}, ${ROW_AGGREGATES}
       from request_logs log left join virtual_keys vk on vk.id = log.virtual_key_id
       where log.created_at >= $1 and log.created_at < $2 and log.kind <> 'tool_call' ${apiKeyId ? 'and log.api_key_id = $3' : ''}
       group by ${groupBy === 'virtual_key' ? 'log.virtual_key_id, vk.slug' : '1'}`,
      apiKeyId ? [FROM, TO, apiKeyId] : [FROM, TO],
    );

  /** The approximate rows equal the exact ones in every count and sum, their percentiles within a bin of the exact ones. */
  const expectClose = (actual: Figures[], exact: Figures[], keyOf: (row: Figures) => unknown) => {
    expect(actual.map(keyOf).sort()).toEqual(exact.map(keyOf).sort());
    const byKey = new Map(exact.map((row) => [keyOf(row), row]));
    for (const row of actual) {
      const expected = byKey.get(keyOf(row))!;
      const { requests, errors, recovered, prompt_tokens, completion_tokens, unpriced_requests } = row;
      expect({ key: keyOf(row), requests, errors, recovered, prompt_tokens, completion_tokens, unpriced_requests }).toEqual({
        key: keyOf(row),
        requests: expected.requests,
        errors: expected.errors,
        recovered: expected.recovered,
        prompt_tokens: expected.prompt_tokens,
        completion_tokens: expected.completion_tokens,
        unpriced_requests: expected.unpriced_requests,
      });
      if (expected.cost_usd === null) expect(row.cost_usd).toBeNull();
      else expect(row.cost_usd as number).toBeCloseTo(expected.cost_usd as number, 9);
      for (const percentile of ['latency_p50_ms', 'latency_p95_ms']) {
        const [estimate, exact] = [row[percentile] as number, expected[percentile] as number];
        expect(estimate).toBeGreaterThanOrEqual(exact / BIN_RATIO - 0.1);
        expect(estimate).toBeLessThanOrEqual(exact * BIN_RATIO + 0.1);
      }
    }
  };

  /** A group's name, and for virtual keys its id (two keys can share a slug). */
  const groupOf = (row: Figures) => (row.virtual_key_id === undefined ? row.key : `${row.key} (${row.virtual_key_id})`);

  const expectSummaryMatches = async (groupBy: string) => {
    const body = await summary(groupBy);
    expect(body.latency_percentiles).toBe('approximate');
    expectClose(body.data, await exactSummary(groupBy), groupOf);
  };

  beforeAll(async () => {
    // Compaction when the tests say so (request_log_rollups_compact), not on a timer.
    gateway = await startTestGateway({ ROLLUP_COMPACT_INTERVAL_MS: '600000' });
    userKey = await createApiKey(gateway, { role: 'user' });
    virtualKeyId = (await createVirtualKey(gateway, { slug: 'rollup-vk', provider: 'openai', key: 'sk-rollups' })).id;
    // 4,000 rows, one every 500 s: from 2024-02-29 to 2024-03-23, past both ends of the range.
    await seed('2024-02-29T00:00:00Z', 4000, 500);
    // A model without a price: 60 rows over five days, all with tokens and no cost.
    await gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens, model, provider)
       select gen_random_uuid(), 'seeded', '2024-03-05T01:00:00Z'::timestamptz + i * interval '2 hours', 'chat.completions', 200, 40 + i, null, 10, 3, 'no-price-model', 'self-hosted'
       from generate_series(1, 60) as i`,
    );
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it.each(GROUPINGS)('summary by %s matches the log rows', async (groupBy) => {
    await expectSummaryMatches(groupBy);
  });

  it('counts the requests without a price and gives a group of only those an unknown cost, never 0', async () => {
    const rows: Figures[] = (await summary('model')).data;
    expect(rows.find((row) => row.key === 'no-price-model')).toMatchObject({ requests: 60, unpriced_requests: 60, cost_usd: null });
    // Priced groups keep their cost and count their rows without a price (cost null, tokens): i % 17 = 0.
    const mini = rows.find((row) => row.key === 'gpt-4o-mini')!;
    expect(mini.cost_usd).toEqual(expect.any(Number));
    expect(mini.unpriced_requests).toBeGreaterThan(0);
    // Unknown costs sort last.
    expect(rows[rows.length - 1].key).toBe('no-price-model');
    const total = rows.reduce((sum, row) => sum + (row.unpriced_requests as number), 0);
    const [{ n }] = await gateway.dataSource.query(
      `select count(*)::int as n from request_logs where created_at >= $1 and created_at < $2 and kind <> 'tool_call' and cost_usd is null and (prompt_tokens is not null or completion_tokens is not null)`,
      [FROM, TO],
    );
    expect(total).toBe(n);
  });

  it('gives a bucket of the timeseries with only unpriced requests an unknown cost', async () => {
    // Only the no-price model from 06:00 on 2024-03-22 (the seed ends before), by the day over a long range.
    await gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens, model, provider)
       select gen_random_uuid(), 'seeded', '2024-03-26T06:00:00Z'::timestamptz + i * interval '1 minute', 'chat.completions', 200, 40, null, 10, 3, 'no-price-model', 'self-hosted'
       from generate_series(1, 5) as i`,
    );
    const response = await call(gateway, '/v1/analytics/timeseries?interval=day&from=2024-03-20T00:00:00.000Z&to=2024-03-28T00:00:00.000Z');
    expect(response.body.latency_percentiles).toBe('approximate');
    const byDay = new Map((response.body.data as Figures[]).map((row) => [(row.bucket as string).slice(0, 10), row]));
    expect(byDay.get('2024-03-26')).toMatchObject({ requests: 5, unpriced_requests: 5, cost_usd: null });
    expect(byDay.get('2024-03-27')).toMatchObject({ requests: 0, unpriced_requests: 0, cost_usd: 0 });
    expect(byDay.get('2024-03-20')!.cost_usd).toEqual(expect.any(Number));
    await gateway.dataSource.query(`delete from request_logs where created_at >= '2024-03-26' and created_at < '2024-03-27'`);
  });

  it('keeps a range of two days or less exact, from the rows', async () => {
    const body = await summary('model', undefined, { from: '2024-03-02T00:00:00.000Z', to: '2024-03-04T00:00:00.000Z' });
    expect(body.latency_percentiles).toBe('exact');
    const [exact] = await gateway.dataSource.query(
      `select percentile_cont(0.95) within group (order by latency_ms)::float8 as p95 from request_logs
       where created_at >= '2024-03-02' and created_at < '2024-03-04' and model = 'gpt-4o' and kind = 'request'`,
    );
    expect(body.data.find((row: Figures) => row.key === 'gpt-4o').latency_p95_ms).toBe(exact.p95);
  });

  const compact = async () => (await gateway.dataSource.query('select request_log_rollups_compact(100000) as moved'))[0].moved as number;
  const queued = async () => (await gateway.dataSource.query('select count(*)::int as n from request_log_rollup_queue'))[0].n as number;

  const expectTimeseriesMatches = async (interval: string, tz = 'UTC', percentiles = 'approximate') => {
    const response = await call(gateway, `/v1/analytics/timeseries?interval=${interval}&from=${FROM}&to=${TO}&tz=${tz}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ latency_percentiles: percentiles, tz });
    // The zone's wall-clock buckets, each named by the instant it starts.
    const exact: Figures[] = await gateway.dataSource.query(
      `select to_char(date_trunc($3, log.created_at at time zone $4) at time zone $4 at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.000"Z"') as bucket, ${ROW_AGGREGATES}
       from request_logs log where log.created_at >= $1 and log.created_at < $2 and log.kind <> 'tool_call' group by 1`,
      [FROM, TO, interval, tz],
    );
    const data: Figures[] = response.body.data;
    if (tz === 'UTC') expect(data).toHaveLength(interval === 'hour' ? 24 * 19 + 13 : 20);
    expectClose(
      data.filter((row) => (row.requests as number) > 0),
      exact.filter((row) => (row.requests as number) > 0),
      (row) => row.bucket,
    );
  };

  it.each(['hour', 'day'])('timeseries by the %s matches the log rows, bucket by bucket', async (interval) => {
    await expectTimeseriesMatches(interval);
  });

  it.each([
    // Whole-hour offsets: the zone's days are UTC hours of the rollups added up.
    ['day', 'America/Los_Angeles', 'approximate'],
    ['hour', 'Europe/Paris', 'approximate'],
    // Half-hour offsets do not fall on the rollups' hours: read from the rows.
    ['day', 'Asia/Kolkata', 'exact'],
  ])('timeseries by the %s in %s matches the log rows bucketed in that zone', async (interval, tz, percentiles) => {
    await expectTimeseriesMatches(interval, tz, percentiles);
  });

  it('a user-role key sees only its own rows over a long range', async () => {
    for (const groupBy of ['model', 'metadata.team']) {
      const body = await summary(groupBy, userKey.key);
      expectClose(body.data, await exactSummary(groupBy, userKey.id), groupOf);
    }
    const series = await call(gateway, `/v1/analytics/timeseries?interval=day&from=${FROM}&to=${TO}`, { apiKey: userKey.key });
    const [{ n }] = await gateway.dataSource.query(
      `select count(*)::int as n from request_logs where created_at >= $1 and created_at < $2 and api_key_id = $3 and kind = 'request'`,
      [FROM, TO, userKey.id],
    );
    expect(series.body.data.reduce((sum: number, row: Figures) => sum + (row.requests as number), 0)).toBe(n);
  });

  it('counts the rows the log writer stores', async () => {
    const before = await summary('api_key', undefined, { from: '2024-01-01T00:00:00.000Z', to: new Date(Date.now() + 60_000).toISOString() });
    await createVirtualKey(gateway, { slug: 'unreachable', provider: 'openai', key: 'sk-unreachable', custom_host: 'http://127.0.0.1:9/v1' });
    const response = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-virtual-key': 'unreachable' },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.status).toBeGreaterThanOrEqual(500);
    await gateway.flushLogs();
    const after = await summary('api_key', undefined, { from: '2024-01-01T00:00:00.000Z', to: new Date(Date.now() + 60_000).toISOString() });
    const total = (body: { data: Figures[] }) => body.data.reduce((sum, row) => sum + (row.requests as number), 0);
    const errors = (body: { data: Figures[] }) => body.data.reduce((sum, row) => sum + (row.errors as number), 0);
    expect(total(after)).toBe(total(before) + 1);
    expect(errors(after)).toBe(errors(before) + 1);
  });

  it('gives the same answers once the queue is compacted into the rollups', async () => {
    // Every row seeded but the tool calls (1 in 37), which the rollups leave out.
    const [{ n }] = await gateway.dataSource.query(`select count(*)::int as n from request_logs where kind <> 'tool_call'`);
    expect(n).toBeGreaterThan(3900);
    expect(await queued()).toBe(n);
    expect(await compact()).toBe(n);
    expect(await queued()).toBe(0);
    for (const groupBy of GROUPINGS) await expectSummaryMatches(groupBy);
    for (const interval of ['hour', 'day']) await expectTimeseriesMatches(interval);
  });

  it('stays right when writers insert into the same groups while compaction runs (no deadlock, nothing counted twice)', async () => {
    // Eight statements of 300 rows each, all in the same hours of 2024-03-03 and the same groups.
    const writers = Array.from({ length: 8 }, (_, writer) => seed('2024-03-03T08:00:00Z', 300, 7, 100_000 + writer * 300));
    await Promise.all([...writers, compact(), compact()]);
    await expectSummaryMatches('user');
    await expectSummaryMatches('metadata.team');
  });

  it('follows rows deleted from the log (a retention job), compacted or still queued', async () => {
    await seed('2024-03-02T00:00:00Z', 500, 60, 200_000);
    expect(await queued()).toBeGreaterThanOrEqual(500);
    await gateway.dataSource.query(`delete from request_logs where created_at < '2024-03-04T12:00:00Z' and (end_user = 'user-3' or model = 'claude-sonnet')`);
    await expectSummaryMatches('user');
    await expectSummaryMatches('model');
    const [{ rollups }] = await gateway.dataSource.query(`select count(*)::int as rollups from request_log_rollups where log_rows <= 0`);
    expect(rollups).toBe(0);
  });

  it('fills the rollups from the rows already logged when the migration runs', async () => {
    const [rollups, unpriced, kinds] = [new LogRollups1764000700000(), new LogRollupsUnpriced1764001600000(), new LogRequestKinds1764002700000()];
    const runner = gateway.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await kinds.down(runner);
      await unpriced.down(runner);
      await rollups.down(runner);
      await rollups.up(runner);
      // The rollups filled before the price counts existed: the next migration rebuilds them with the counts.
      const [{ counted }] = await runner.query('select count(*)::int as counted from request_log_rollups');
      expect(counted).toBeGreaterThan(0);
      await unpriced.up(runner);
      await kinds.up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    for (const groupBy of ['user', 'model', 'virtual_key', 'metadata.team']) await expectSummaryMatches(groupBy);
    const series = await call(gateway, `/v1/analytics/timeseries?interval=day&from=${FROM}&to=${TO}`);
    const [{ n }] = await gateway.dataSource.query(
      `select count(*)::int as n from request_logs where created_at >= $1 and created_at < $2 and kind = 'request'`,
      [FROM, TO],
    );
    expect(series.body.data.reduce((sum: number, row: Figures) => sum + (row.requests as number), 0)).toBe(n);
  });

  it('empties the rollups with the log when it is truncated', async () => {
    await gateway.dataSource.query('truncate request_logs');
    expect((await summary('model')).data).toEqual([]);
    const [{ rollups }] = await gateway.dataSource.query('select count(*)::int as rollups from request_log_rollups');
    expect(rollups).toBe(0);
  });
});
