/**
 * `GET /v1/analytics/timeseries`: the request log in minute, hour or day buckets (UTC)
 * with requests, errors, tokens, cost and latency percentiles, every bucket of the range
 * present; the same scoping as the summary (a user-role key sees its own rows).
 */
import { call, createApiKey, createVirtualKey } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

describe('analytics timeseries', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let userKey: { id: string; key: string };

  /** A log row written straight into the table, at a chosen time. */
  const insertLog = (
    createdAt: string,
    fields: {
      latency: number;
      status?: number;
      cost?: number | null;
      prompt?: number;
      completion?: number;
      apiKeyId?: string;
      kind?: string;
      failedAttempts?: number;
    },
  ) =>
    gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens, api_key_id, model, provider,
                                 kind, failed_attempts)
       values (gen_random_uuid(), 'seeded', $1, 'chat.completions', $2, $3, $4, $5, $6, $7, 'gpt-4o-mini', 'openai', $8, $9)`,
      [
        createdAt,
        fields.status ?? 200,
        fields.latency,
        fields.cost === undefined ? 0.001 : fields.cost,
        fields.prompt ?? 10,
        fields.completion ?? 5,
        fields.apiKeyId ?? null,
        fields.kind ?? 'request',
        fields.failedAttempts ?? 0,
      ],
    );

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-ts', key: 'sk-timeseries', custom_host: `${mock.url}/v1` });
    userKey = await createApiKey(gateway, { role: 'user' });
    const send = (model: string, apiKey?: string) =>
      call(gateway, '/v1/chat/completions', {
        headers: { 'x-gateway-virtual-key': 'openai-ts' },
        body: { model, messages: [{ role: 'user', content: 'Say hello' }] },
        apiKey,
      });
    expect((await send('gpt-4o-mini')).status).toBe(200);
    expect((await send('gpt-4o')).status).toBe(200);
    expect((await send('mock-error-500')).status).toBe(500);
    expect((await send('gpt-4o-mini', userKey.key)).status).toBe(200);
    await gateway.flushLogs();

    // A fixed past morning: two requests at 10:xx, one at 11:30 that a fallback recovered (its failed try
    // a row of its own: tokens and cost, not a request, an error or a latency), none at 12:xx.
    await insertLog('2025-01-01T10:05:00Z', { latency: 100, cost: 0.002, prompt: 10, completion: 4 });
    await insertLog('2025-01-01T10:20:00Z', { latency: 300, status: 502, cost: null, prompt: 20, completion: 0 });
    await insertLog('2025-01-01T11:30:00Z', { latency: 50, cost: 0.001, apiKeyId: userKey.id, failedAttempts: 1 });
    await insertLog('2025-01-01T11:30:00.100Z', { latency: 900, status: 503, cost: 0.0005, prompt: 7, completion: 0, kind: 'attempt' });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const timeseries = async (query: string, apiKey?: string) => {
    const response = await call(gateway, `/v1/analytics/timeseries?${query}`, { apiKey });
    expect(response.status).toBe(200);
    return response.body;
  };

  it('defaults to the last 24 hours in hourly buckets, counting the requests just sent', async () => {
    const body = await timeseries('');
    expect(body).toMatchObject({ object: 'analytics.timeseries', interval: 'hour' });
    expect(Date.parse(body.to) - Date.parse(body.from)).toBe(86_400_000);
    // 24 hours starting mid-hour cover 25 hour buckets (24 when `from` falls on the hour).
    const firstBucket = Math.floor(Date.parse(body.from) / 3_600_000) * 3_600_000;
    expect(body.data).toHaveLength(Math.ceil((Date.parse(body.to) - firstBucket) / 3_600_000));
    expect(body.data[0].bucket).toBe(new Date(firstBucket).toISOString());
    const total = body.data.reduce((sum: number, row: any) => sum + row.requests, 0);
    const errors = body.data.reduce((sum: number, row: any) => sum + row.errors, 0);
    expect(total).toBe(4);
    expect(errors).toBe(1);
    const last = body.data.filter((row: any) => row.requests > 0).at(-1);
    expect(last.prompt_tokens).toBeGreaterThan(0);
    expect(last.latency_p95_ms).toBeGreaterThanOrEqual(last.latency_p50_ms);
  });

  it('buckets by the days of the time zone asked for (tz), each bucket named by the instant it starts', async () => {
    // 23:30 in Los Angeles on 28 February (07:30 UTC on 1 March), and 00:30 on 1 March there.
    await insertLog('2025-03-01T07:30:00Z', { latency: 10 });
    await insertLog('2025-03-01T08:30:00Z', { latency: 20 });
    const figures = (body: { data: { bucket: string; requests: number }[] }) => body.data.map(({ bucket, requests }) => [bucket, requests]);
    const la = await timeseries('from=2025-02-28T08:00:00Z&to=2025-03-02T08:00:00Z&interval=day&tz=America/Los_Angeles');
    expect(la.tz).toBe('America/Los_Angeles');
    expect(figures(la)).toEqual([
      ['2025-02-28T08:00:00.000Z', 1],
      ['2025-03-01T08:00:00.000Z', 1],
    ]);
    const utc = await timeseries('from=2025-02-28T00:00:00Z&to=2025-03-02T00:00:00Z&interval=day');
    expect(utc.tz).toBe('UTC');
    expect(figures(utc)).toEqual([
      ['2025-02-28T00:00:00.000Z', 0],
      ['2025-03-01T00:00:00.000Z', 2],
    ]);
    // Daylight saving: 9 March 2025 is 23 hours long in Los Angeles.
    const dst = await timeseries('from=2025-03-08T08:00:00Z&to=2025-03-11T07:00:00Z&interval=day&tz=America/Los_Angeles');
    expect(dst.data.map((row: { bucket: string }) => row.bucket)).toEqual(['2025-03-08T08:00:00.000Z', '2025-03-09T08:00:00.000Z', '2025-03-10T07:00:00.000Z']);
  });

  it('refuses a time zone it does not know, or that is not a name', async () => {
    for (const tz of ['Mars/Olympus_Mons', "UTC'; select 1 --", 'EST5EDT,M3.2.0']) {
      const response = await call(gateway, `/v1/analytics/timeseries?tz=${encodeURIComponent(tz)}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param: 'tz' });
    }
  });

  it('lays the rows over every bucket of the range, empty ones with zeros and null latency', async () => {
    const body = await timeseries('from=2025-01-01T10:00:00Z&to=2025-01-01T13:00:00Z&interval=hour');
    expect(body).toMatchObject({ interval: 'hour', from: '2025-01-01T10:00:00.000Z', to: '2025-01-01T13:00:00.000Z' });
    expect(body.data).toEqual([
      {
        bucket: '2025-01-01T10:00:00.000Z',
        requests: 2,
        errors: 1,
        prompt_tokens: 30,
        completion_tokens: 4,
        cost_usd: 0.002, // the unpriced row adds nothing, it is not counted as 0 either: it is counted apart
        unpriced_requests: 1,
        recovered: 0,
        latency_p50_ms: 200,
        latency_p95_ms: 290,
      },
      {
        bucket: '2025-01-01T11:00:00.000Z',
        requests: 1,
        errors: 0,
        recovered: 1,
        prompt_tokens: 17,
        completion_tokens: 5,
        cost_usd: 0.0015,
        unpriced_requests: 0,
        latency_p50_ms: 50,
        latency_p95_ms: 50,
      },
      {
        bucket: '2025-01-01T12:00:00.000Z',
        requests: 0,
        errors: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cost_usd: 0,
        unpriced_requests: 0,
        recovered: 0,
        latency_p50_ms: null,
        latency_p95_ms: null,
      },
    ]);
  });

  it('gives a bucket whose requests have no price an unknown cost (null), never 0; a failure that used nothing is not unpriced', async () => {
    await insertLog('2025-01-02T09:10:00Z', { latency: 80, cost: null, prompt: 12, completion: 3 });
    // A guardrail denial: never sent, no tokens, no cost.
    await gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, model, provider, error)
       values (gen_random_uuid(), 'seeded', '2025-01-02T10:10:00Z', 'chat.completions', 446, 3, null, 'gpt-4o-mini', 'openai', '{"type": "guardrail_denied"}')`,
    );
    const body = await timeseries('from=2025-01-02T09:00:00Z&to=2025-01-02T11:00:00Z&interval=hour');
    expect(
      body.data.map(({ bucket, requests, cost_usd, unpriced_requests }: Record<string, unknown>) => ({ bucket, requests, cost_usd, unpriced_requests })),
    ).toEqual([
      { bucket: '2025-01-02T09:00:00.000Z', requests: 1, cost_usd: null, unpriced_requests: 1 },
      { bucket: '2025-01-02T10:00:00.000Z', requests: 1, cost_usd: 0, unpriced_requests: 0 },
    ]);
  });

  it('chooses minutes for a short range and days for a long one', async () => {
    const minutes = await timeseries('from=2025-01-01T10:00:00Z&to=2025-01-01T11:00:00Z');
    expect(minutes.interval).toBe('minute');
    expect(minutes.data).toHaveLength(60);
    expect(minutes.data[5]).toMatchObject({ bucket: '2025-01-01T10:05:00.000Z', requests: 1 });
    expect(minutes.data[20]).toMatchObject({ bucket: '2025-01-01T10:20:00.000Z', requests: 1, errors: 1 });

    const days = await timeseries('from=2024-12-01T00:00:00Z&to=2025-01-31T00:00:00Z');
    expect(days.interval).toBe('day');
    expect(days.data).toHaveLength(61);
    expect(days.data.find((row: any) => row.bucket === '2025-01-01T00:00:00.000Z')).toMatchObject({ requests: 3, errors: 1 });
  });

  it('starts the first bucket at the interval boundary before `from` and counts only rows inside the range', async () => {
    const body = await timeseries('from=2025-01-01T10:10:00Z&to=2025-01-01T11:45:00Z&interval=hour');
    expect(body.data.map((row: any) => [row.bucket, row.requests])).toEqual([
      ['2025-01-01T10:00:00.000Z', 1], // 10:05 is before `from`
      ['2025-01-01T11:00:00.000Z', 1],
    ]);
  });

  it('a user-role key sees only its own requests', async () => {
    const past = await timeseries('from=2025-01-01T10:00:00Z&to=2025-01-01T13:00:00Z&interval=hour', userKey.key);
    expect(past.data.map((row: any) => row.requests)).toEqual([0, 1, 0]);
    const recent = await timeseries('', userKey.key);
    expect(recent.data.reduce((sum: number, row: any) => sum + row.requests, 0)).toBe(1);
  });

  it('needs an API key', async () => {
    expect((await call(gateway, '/v1/analytics/timeseries', { apiKey: null })).status).toBe(401);
  });

  it.each([
    ['interval=week', 'interval', /interval must be one of minute, hour, day/],
    ['from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from', /from must be before to/],
    ['from=2025-01-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from', /from must be before to/],
    ['from=yesterday', 'from', /from/],
    ['from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z&interval=minute', 'interval', /44640 minute buckets, more than 1500/],
  ])('%s is a 400 naming the field', async (query, param, message) => {
    const response = await call(gateway, `/v1/analytics/timeseries?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(response.body.error.message).toMatch(message);
  });
});
