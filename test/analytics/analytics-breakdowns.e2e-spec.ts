/**
 * Breakdowns over time (issue 25): `GET /v1/analytics/timeseries?group_by=` answers, beside
 * the totals per bucket, one series per top group (by cost, then requests, over the range)
 * and one `other` series for the rest; they add up to the totals bucket by bucket. Both
 * analytics endpoints take the log's filters: from the rollups where they can answer (one
 * filtered column, the API key), else from the log rows (`filtered_from` says which). Every
 * figure is checked against the same sums computed straight from the log rows, over long
 * ranges (rollups, some rows compacted, some still queued) and short ones (rows), as an
 * owner, a workspace's admin and a member.
 */
import { call, createApiKey, createVirtualKey } from '../support/e2e-helpers';
import { startTestGateway, TestGateway } from '../support/test-gateway';

// Eight and a half days: partial first and last days, whole days between (rollups).
const FROM = '2024-03-01T06:30:00.000Z';
const TO = '2024-03-09T18:45:00.000Z';
const FAILED = '(log.status_code >= 400 or log.error is not null)';

type Point = {
  bucket: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number | null;
  unpriced_requests: number;
};
type Series = { key: string | null; other: boolean; groups?: number; virtual_key_id?: string | null; data: Point[] };

describe('analytics breakdowns over time and filters', () => {
  let gateway: TestGateway;
  let member: { id: string; key: string };
  let betaAdmin: { id: string; key: string };
  let betaId: string;
  let virtualKeyId: string;

  /** `count` rows from `start`, one every `stepSeconds`: several models, users, providers, teams, keys and workspaces. */
  const seed = (start: string, count: number, stepSeconds: number, firstIndex: number) =>
    gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens,
                                 api_key_id, workspace_id, virtual_key_id, model, provider, end_user, metadata)
       select gen_random_uuid(), 'seeded', $1::timestamptz + (i - $4) * make_interval(secs => $3),
              (array['chat.completions', 'embeddings'])[1 + i % 2],
              case when i % 13 = 0 then 500 else 200 end,
              40 + i % 900,
              case when i % 6 = 5 then null else ((i % 5) + 1) * 0.0007 + (i % 7) * 0.00001 end,
              10 + i % 50, i % 20,
              case when i % 4 = 0 then $5::uuid when i % 9 = 1 then $6::uuid end,
              case when i % 4 <> 0 and i % 9 = 1 then $7::uuid else '00000000-0000-4000-8000-000000000001'::uuid end,
              case when i % 5 = 0 then $8::uuid end,
              (array['gpt-4o', 'gpt-4o-mini', 'claude-sonnet', 'gemini-flash', 'mistral-small', 'llama-3'])[1 + i % 6],
              (array['openai', 'anthropic', 'google'])[1 + i % 3],
              case when i % 11 = 0 then null else 'user-' || i % 5 end,
              case when i % 3 = 0 then '{}'::jsonb else jsonb_build_object('team', (array['search', 'ads'])[1 + i % 2]) end
       from generate_series($4::int, $4::int + $2::int - 1) as i`,
      [start, count, stepSeconds, firstIndex, member.id, betaAdmin.id, betaId, virtualKeyId],
    );

  beforeAll(async () => {
    gateway = await startTestGateway({ ROLLUP_COMPACT_INTERVAL_MS: '600000' });
    const [{ id: defaultId }] = await gateway.dataSource.query(`select id from workspaces where slug = 'default'`);
    expect(defaultId).toBe('00000000-0000-4000-8000-000000000001');
    member = await createApiKey(gateway, { role: 'member' });
    const beta = await call(gateway, '/v1/workspaces', { body: { name: 'Team beta', slug: 'beta' } });
    expect(beta.status).toBe(201);
    betaId = beta.body.id;
    const made = await call(gateway, '/v1/api-keys', { body: { name: 'beta admin', role: 'admin', workspace: 'beta' } });
    expect(made.status).toBe(201);
    betaAdmin = made.body;
    virtualKeyId = (await createVirtualKey(gateway, { slug: 'breakdown-vk', provider: 'openai', key: 'sk-breakdowns' })).id;
    // A day before FROM to a day after TO, one row every 17 minutes; compacted, then more rows left queued.
    await seed('2024-02-29T00:00:00Z', 960, 17 * 60, 1);
    await gateway.dataSource.query('select request_log_rollups_compact(100000)');
    await seed('2024-02-29T00:05:00Z', 240, 61 * 60, 5000);
    const [{ n }] = await gateway.dataSource.query('select count(*)::int as n from request_log_rollup_queue');
    expect(n).toBe(240);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  const get = async (path: string, apiKey?: string) => {
    const response = await call(gateway, path, { apiKey });
    expect(response.status).toBe(200);
    return response.body;
  };

  /** The truth from the log rows: per bucket (UTC day unless said) and group, what the series must show, with each group's rank. */
  async function truth(groupExpr: string, where: string, params: unknown[], range = { from: FROM, to: TO }, interval = 'day') {
    const rows: (Point & { key: string | null; rank: number })[] = await gateway.dataSource.query(
      `with cells as (
         select to_char(date_trunc('${interval}', log.created_at at time zone 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS.000"Z"') as bucket, ${groupExpr} as key,
                count(*)::int as requests, (count(*) filter (where ${FAILED}))::int as errors,
                sum(log.prompt_tokens)::float8 as prompt_tokens, sum(log.completion_tokens)::float8 as completion_tokens,
                coalesce(sum(log.cost_usd), 0)::float8 as cost_usd
         from request_logs log
         where log.created_at >= $1 and log.created_at < $2 and ${where}
         group by 1, 2
       )
       select cells.*, dense_rank() over (order by g.cost desc, g.requests desc, cells.key nulls last)::int as rank
       from cells join (select key, sum(cost_usd) as cost, sum(requests) as requests from cells group by key) g on g.key is not distinct from cells.key`,
      [range.from, range.to, ...params],
    );
    return rows;
  }

  const sumOf = (points: Point[], measure: keyof Point) => points.reduce((sum, point) => sum + ((point[measure] as number) ?? 0), 0);

  /** The series against the truth: the top groups in rank order with their figures, `other` the rest, every series adding up to `data`. */
  function expectBreakdown(body: any, expected: Awaited<ReturnType<typeof truth>>, top: number) {
    const grouped = body.series !== undefined;
    const series: Series[] = body.series ?? [];
    const buckets = body.data.map((point: Point) => point.bucket);
    for (const s of series) expect(s.data.map((point) => point.bucket)).toEqual(buckets);
    const ranks = [...new Set(expected.map((row) => row.rank))].sort((a, b) => a - b);
    const topKeys = ranks.slice(0, top).map((rank) => expected.find((row) => row.rank === rank)!.key);
    if (grouped) {
      expect(series.filter((s) => !s.other).map((s) => s.key)).toEqual(topKeys);
      const other = series.find((s) => s.other);
      if (ranks.length > top) expect(other).toMatchObject({ key: null, other: true, groups: ranks.length - top });
      else expect(other).toBeUndefined();
      if (other) expect(series.at(-1)).toBe(other);
    }
    for (const [i, bucket] of buckets.entries()) {
      const rows = expected.filter((row) => row.bucket === bucket);
      const totals = body.data[i];
      // The stacked series add up to the totals, and the totals to the log.
      for (const measure of grouped ? (['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'unpriced_requests'] as const) : []) {
        expect(series.reduce((sum, s) => sum + s.data[i][measure], 0)).toBe(totals[measure]);
      }
      if (grouped) expect(series.reduce((sum, s) => sum + (s.data[i].cost_usd ?? 0), 0)).toBeCloseTo(totals.cost_usd ?? 0, 10);
      expect(totals.requests).toBe(rows.reduce((sum, row) => sum + row.requests, 0));
      expect(totals.cost_usd ?? 0).toBeCloseTo(
        rows.reduce((sum, row) => sum + (row.cost_usd ?? 0), 0),
        10,
      );
      for (const s of series) {
        const mine = s.other ? rows.filter((row) => row.rank > top) : rows.filter((row) => row.key === s.key);
        expect({ key: s.key, bucket, requests: s.data[i].requests, errors: s.data[i].errors, prompt_tokens: s.data[i].prompt_tokens }).toEqual({
          key: s.key,
          bucket,
          requests: mine.reduce((sum, row) => sum + row.requests, 0),
          errors: mine.reduce((sum, row) => sum + row.errors, 0),
          prompt_tokens: mine.reduce((sum, row) => sum + row.prompt_tokens, 0),
        });
        expect(s.data[i].cost_usd ?? 0).toBeCloseTo(
          mine.reduce((sum, row) => sum + (row.cost_usd ?? 0), 0),
          10,
        );
      }
    }
    expect(sumOf(body.data, 'requests')).toBeGreaterThan(0);
  }

  describe('breakdowns', () => {
    it.each([
      ['model', 'log.model'],
      ['user', 'log.end_user'],
      ['provider', 'log.provider'],
      ['api_key', 'log.api_key_id::text'],
      ['metadata.team', `log.metadata ->> 'team'`],
    ])('by %s over a long range (rollups): top 3 and other, adding up to the totals per day', async (groupBy, expr) => {
      const body = await get(`/v1/analytics/timeseries?group_by=${groupBy}&top=3&interval=day&from=${FROM}&to=${TO}`);
      expect(body).toMatchObject({ object: 'analytics.timeseries', interval: 'day', group_by: groupBy, top: 3, latency_percentiles: 'approximate' });
      expect(body.filtered_from).toBeUndefined();
      expect(body.data).toHaveLength(9);
      expectBreakdown(body, await truth(expr, 'true', []), 3);
    });

    it('names virtual keys by slug, the id alongside; the default top is 8 (every group here, so no other)', async () => {
      const body = await get(`/v1/analytics/timeseries?group_by=virtual_key&interval=day&from=${FROM}&to=${TO}`);
      expect(body.top).toBe(8);
      const named = body.series.find((s: Series) => s.virtual_key_id === virtualKeyId);
      expect(named).toMatchObject({ key: 'breakdown-vk', other: false });
      expect(body.series.find((s: Series) => s.virtual_key_id === null)).toMatchObject({ key: null, other: false });
      expect(body.series.some((s: Series) => s.other)).toBe(false);
      const expected = await truth('log.virtual_key_id::text', 'true', []);
      expectBreakdown({ ...body, series: body.series.map((s: Series) => ({ ...s, key: s.virtual_key_id })) }, expected, 8);
    });

    it('by model per hour over a long range reads the log rows (no hourly rollups per model) and still adds up', async () => {
      const range = { from: '2024-03-02T00:00:00.000Z', to: '2024-03-05T00:00:00.000Z' };
      const body = await get(`/v1/analytics/timeseries?group_by=model&top=2&interval=hour&from=${range.from}&to=${range.to}`);
      expect(body.latency_percentiles).toBe('exact');
      expect(body.data).toHaveLength(72);
      expectBreakdown(body, await truth('log.model', 'true', [], range, 'hour'), 2);
    });

    it('by API key per hour over a long range still comes from the (hourly, per key) rollups', async () => {
      const range = { from: '2024-03-02T05:30:00.000Z', to: '2024-03-05T00:00:00.000Z' };
      const body = await get(`/v1/analytics/timeseries?group_by=api_key&top=1&interval=hour&from=${range.from}&to=${range.to}`);
      expect(body.latency_percentiles).toBe('approximate');
      expectBreakdown(body, await truth('log.api_key_id::text', 'true', [], range, 'hour'), 1);
    });

    it('agrees between a short range (log rows) and the same days inside a long one (rollups)', async () => {
      const short = await get(`/v1/analytics/timeseries?group_by=model&top=4&interval=day&from=2024-03-03T00:00:00.000Z&to=2024-03-05T00:00:00.000Z`);
      expect(short.latency_percentiles).toBe('exact');
      const long = await get(`/v1/analytics/timeseries?group_by=model&top=4&interval=day&from=${FROM}&to=${TO}`);
      const day = (body: any, key: string, bucket: string) => body.series.find((s: Series) => s.key === key)?.data.find((p: Point) => p.bucket === bucket);
      for (const bucket of ['2024-03-03T00:00:00.000Z', '2024-03-04T00:00:00.000Z']) {
        expect(short.data.find((p: Point) => p.bucket === bucket).requests).toBe(long.data.find((p: Point) => p.bucket === bucket).requests);
        for (const model of ['gpt-4o', 'claude-sonnet', 'llama-3']) {
          const [a, b] = [day(short, model, bucket), day(long, model, bucket)];
          // The top 4 of two days may differ from the top 4 of eight: compare where both draw the model.
          if (a && b) {
            expect(a.requests).toBe(b.requests);
            expect(a.cost_usd ?? 0).toBeCloseTo(b.cost_usd ?? 0, 10);
          }
        }
      }
      expectBreakdown(short, await truth('log.model', 'true', [], { from: '2024-03-03T00:00:00.000Z', to: '2024-03-05T00:00:00.000Z' }), 4);
    });

    it('leaves the answer as it was without group_by, and refuses a bad group_by or top', async () => {
      const body = await get(`/v1/analytics/timeseries?interval=day&from=${FROM}&to=${TO}`);
      expect(body.series).toBeUndefined();
      expect(body.group_by).toBeUndefined();
      for (const query of ['group_by=colour', 'group_by=model&top=21', 'group_by=model&top=0', 'group_by=model&top=two', 'api_key_id=nope']) {
        const response = await call(gateway, `/v1/analytics/timeseries?${query}`);
        expect(response.status).toBe(400);
        expect(response.body.error.type).toBe('invalid_request_error');
      }
    });
  });

  describe('filters', () => {
    const series = (query: string, apiKey?: string) => get(`/v1/analytics/timeseries?interval=day&from=${FROM}&to=${TO}&${query}`, apiKey);

    it('one filtered column comes from the rollups; two from the log rows; both match the log', async () => {
      const byModel = await series('model=gpt-4o,claude-sonnet&group_by=user&top=2');
      // A grouping by another column than the one filtered cannot be read from the rollups.
      expect(byModel.filtered_from).toBe('rows');
      expectBreakdown(byModel, await truth('log.end_user', `log.model = any($3)`, [['gpt-4o', 'claude-sonnet']]), 2);

      const sameColumn = await series('model=gpt-4o,claude-sonnet&group_by=model');
      expect(sameColumn.filtered_from).toBe('rollups');
      expectBreakdown(sameColumn, await truth('log.model', `log.model = any($3)`, [['gpt-4o', 'claude-sonnet']]), 8);

      const totalsOnly = await series('provider=openai');
      expect(totalsOnly).toMatchObject({ filtered_from: 'rollups', latency_percentiles: 'approximate' });
      expectBreakdown(totalsOnly, await truth(`'all'`, `log.provider = 'openai'`, []), 0);

      const twoColumns = await series('provider=openai&operation=embeddings&group_by=api_key');
      expect(twoColumns.filtered_from).toBe('rows');
      expectBreakdown(twoColumns, await truth('log.api_key_id::text', `log.provider = 'openai' and log.operation = 'embeddings'`, []), 8);
    });

    it('filters by metadata, API key and virtual key (by slug), grouped by API key from the rollups', async () => {
      const team = await series('metadata.team=ads&group_by=api_key');
      expect(team.filtered_from).toBe('rollups');
      expectBreakdown(team, await truth('log.api_key_id::text', `log.metadata @> '{"team":"ads"}'`, []), 8);

      const key = await series(`api_key_id=${member.id}&user=user-1,user-2&group_by=user`);
      expect(key.filtered_from).toBe('rollups');
      expectBreakdown(key, await truth('log.end_user', `log.api_key_id = $3 and log.end_user = any($4)`, [member.id, ['user-1', 'user-2']]), 8);

      const sameKey = await series('metadata.team=ads&group_by=metadata.team');
      expect(sameKey.filtered_from).toBe('rollups');
      expect(sameKey.series.map((s: Series) => s.key)).toEqual(['ads']);
      expectBreakdown(sameKey, await truth(`log.metadata ->> 'team'`, `log.metadata @> '{"team":"ads"}'`, []), 8);

      const vk = await series('virtual_key=breakdown-vk&group_by=metadata.team');
      expect(vk.filtered_from).toBe('rows');
      expectBreakdown(vk, await truth(`log.metadata ->> 'team'`, `log.virtual_key_id = $3`, [virtualKeyId]), 8);

      const unknown = await series('virtual_key=no-such-key');
      expect(sumOf(unknown.data, 'requests')).toBe(0);
    });

    it('filters the summary too, over long and short ranges alike', async () => {
      const exact = await truth(`'all'`, `log.model = 'gpt-4o'`, []);
      const long = await get(`/v1/analytics/summary?group_by=api_key&model=gpt-4o&from=${FROM}&to=${TO}`);
      expect(long).toMatchObject({ filtered_from: 'rollups', latency_percentiles: 'approximate' });
      expect(long.data.reduce((sum: number, row: any) => sum + row.requests, 0)).toBe(exact.reduce((sum, row) => sum + row.requests, 0));
      const [{ m }] = await gateway.dataSource.query(
        `select count(*)::int as m from request_logs where model = 'gpt-4o' and api_key_id = $3 and created_at >= $1 and created_at < $2`,
        [FROM, TO, member.id],
      );
      expect(long.data.find((row: any) => row.key === member.id).requests).toBe(m);
      // Grouped by another column than the one filtered: the log rows.
      const byProvider = await get(`/v1/analytics/summary?group_by=provider&model=gpt-4o&from=${FROM}&to=${TO}`);
      expect(byProvider).toMatchObject({ filtered_from: 'rows', latency_percentiles: 'exact' });
      const [{ n }] = await gateway.dataSource.query(
        `select count(*)::int as n from request_logs where model = 'gpt-4o' and provider = 'openai' and created_at >= $1 and created_at < $2`,
        [FROM, TO],
      );
      expect(byProvider.data.find((row: any) => row.key === 'openai').requests).toBe(n);

      const crossed = await get(`/v1/analytics/summary?group_by=user&model=gpt-4o&provider=openai&from=${FROM}&to=${TO}`);
      expect(crossed).toMatchObject({ filtered_from: 'rows', latency_percentiles: 'exact' });
      expect(crossed.data.reduce((sum: number, row: any) => sum + row.requests, 0)).toBe(n);

      const short = await get(`/v1/analytics/summary?group_by=model&model=gpt-4o&from=2024-03-03T00:00:00.000Z&to=2024-03-04T00:00:00.000Z`);
      expect(short.filtered_from).toBe('rows');
      const [{ day }] = await gateway.dataSource.query(
        `select count(*)::int as day from request_logs where model = 'gpt-4o' and created_at >= '2024-03-03' and created_at < '2024-03-04'`,
      );
      expect(short.data).toEqual([expect.objectContaining({ key: 'gpt-4o', requests: day })]);
      const unfiltered = await get(`/v1/analytics/summary?group_by=model&from=${FROM}&to=${TO}`);
      expect(unfiltered.filtered_from).toBeUndefined();
    });
  });

  describe('scoping', () => {
    it("a member sees only its own rows, in the totals and every series; another key's filter finds nothing", async () => {
      const body = await get(`/v1/analytics/timeseries?group_by=model&top=3&interval=day&from=${FROM}&to=${TO}`, member.key);
      expectBreakdown(body, await truth('log.model', 'log.api_key_id = $3', [member.id]), 3);
      const other = await get(`/v1/analytics/timeseries?group_by=model&interval=day&from=${FROM}&to=${TO}&api_key_id=${betaAdmin.id}`, member.key);
      expect(sumOf(other.data, 'requests')).toBe(0);
      expect(other.series).toEqual([]);
      const short = await get(`/v1/analytics/timeseries?group_by=user&interval=hour&from=2024-03-03T00:00:00.000Z&to=2024-03-04T00:00:00.000Z`, member.key);
      expectBreakdown(
        short,
        await truth('log.end_user', 'log.api_key_id = $3', [member.id], { from: '2024-03-03T00:00:00.000Z', to: '2024-03-04T00:00:00.000Z' }, 'hour'),
        8,
      );
    });

    it("a workspace's admin sees its workspace's rows; the owner every workspace's", async () => {
      const beta = await get(`/v1/analytics/timeseries?group_by=provider&top=2&interval=day&from=${FROM}&to=${TO}&metadata.team=search`, betaAdmin.key);
      expect(beta.filtered_from).toBe('rows');
      expectBreakdown(beta, await truth('log.provider', `log.workspace_id = $3 and log.metadata @> '{"team":"search"}'`, [betaId]), 2);
      const betaByKey = await get(`/v1/analytics/timeseries?group_by=api_key&interval=day&from=${FROM}&to=${TO}`, betaAdmin.key);
      expect(betaByKey.series.map((s: Series) => s.key)).toEqual([betaAdmin.id]);
      const owner = await get(`/v1/analytics/timeseries?group_by=api_key&interval=day&from=${FROM}&to=${TO}`);
      expect(new Set(owner.series.map((s: Series) => s.key))).toEqual(new Set([betaAdmin.id, member.id, null]));
    });
  });
});
