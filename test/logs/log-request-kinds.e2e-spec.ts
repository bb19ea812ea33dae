/**
 * Requests as clients saw them (issue 36, migration LogRequestKinds): a failed try that a
 * fallback or retry followed is a row of its own, `kind: attempt`, nested under the request's
 * row (`parent_id`); the request's row counts its failed tries (`failed_attempts`) and its
 * nested rows. The log list filters by kind and parent; a request's detail adds up its
 * nested rows (`totals`); analytics count the clients' requests and errors, and the
 * recovered ones apart, while tokens and cost add up every row.
 */
import OpenAI from 'openai';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';
import { call, createApiKey, expectError } from '../support/e2e-helpers';

type Row = Record<string, any>;

describe('log rows: requests and what is nested under them', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let key: { id: string; key: string };

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    // A key of its own, so that analytics filtered by it see only this file's requests.
    key = await createApiKey(gateway, { role: 'admin', name: 'request-kinds' });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const on = (model: string, extra: Record<string, unknown> = {}) => ({
    provider: 'openai',
    api_key: 'sk-test',
    custom_host: `${mock.url}/v1`,
    override_params: { model },
    ...extra,
  });
  const client = (config: unknown) =>
    new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': key.key, 'x-gateway-config': JSON.stringify(config) },
    });
  const send = (config: unknown, content: string) =>
    client(config)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })
      .withResponse();
  const logs = async (query: string): Promise<Row[]> => {
    const response = await call(gateway, `/v1/logs?${query}`);
    expect(response.status).toBe(200);
    return response.body.data;
  };

  it('a fallback that recovered: the failed try nested under the request, which counts it', async () => {
    const { response } = await send({ strategy: { mode: 'fallback' }, targets: [on('mock-error-503'), on('gpt-4o-mini')] }, 'fallback');
    const requestId = response.headers.get('x-gateway-request-id')!;
    const traceId = response.headers.get('x-gateway-trace-id')!;
    await gateway.flushLogs();

    const trace = await logs(`trace_id=${traceId}`);
    expect(trace).toHaveLength(2);
    const own = trace.find((row) => row.id === requestId)!;
    const attempt = trace.find((row) => row.id !== requestId)!;
    expect(own).toMatchObject({ kind: 'request', parent_id: null, failed_attempts: 1, nested_rows: 1, status_code: 200, model: 'gpt-4o-mini' });
    expect(attempt).toMatchObject({ kind: 'attempt', parent_id: requestId, status_code: 503, model: 'mock-error-503', target_index: '0' });

    // The list of requests leaves the attempt out; the parent filter lists it.
    expect((await logs(`trace_id=${traceId}&kind=request`)).map((row) => row.id)).toEqual([requestId]);
    expect((await logs(`parent_id=${requestId}`)).map((row) => row.id)).toEqual([attempt.id]);
    expect((await logs(`trace_id=${traceId}&kind=attempt,tool_round`)).map((row) => row.id)).toEqual([attempt.id]);

    // The detail adds the nested row's tokens and cost to the request's own.
    const detail = (await call(gateway, `/v1/logs/${requestId}`)).body;
    expect(detail.totals).toEqual({
      rows: 2,
      prompt_tokens: own.prompt_tokens + (attempt.prompt_tokens ?? 0),
      completion_tokens: own.completion_tokens + (attempt.completion_tokens ?? 0),
      total_tokens: own.total_tokens + (attempt.total_tokens ?? 0),
      cost_usd: expect.any(Number),
      unpriced_rows: 0,
    });
    expect(detail.totals.cost_usd).toBeCloseTo(own.cost_usd + (attempt.cost_usd ?? 0), 12);
    // A nested row has no totals of its own.
    expect((await call(gateway, `/v1/logs/${attempt.id}`)).body.totals).toBeUndefined();
  });

  it('retries: each failed try is an attempt of the same target, counted on the request', async () => {
    const { response } = await send(on('mock-flaky-2-503', { retry: { attempts: 3 } }), 'retried twice');
    const requestId = response.headers.get('x-gateway-request-id')!;
    await gateway.flushLogs();
    const nested = await logs(`parent_id=${requestId}`);
    expect(nested.map((row) => [row.kind, row.status_code, row.retry_count]).sort()).toEqual([
      ['attempt', 503, 0],
      ['attempt', 503, 1],
    ]);
    expect((await call(gateway, `/v1/logs/${requestId}`)).body).toMatchObject({ kind: 'request', failed_attempts: 2, nested_rows: 2, retry_count: 2 });
  });

  it('analytics count what the clients saw: requests, errors, recovered, latency; tokens and cost of every row', async () => {
    // A failure the client saw (every target failed), beside the two recovered requests above.
    const failed = await send({ strategy: { mode: 'fallback' }, targets: [on('mock-error-500'), on('mock-error-503')] }, 'all fail').catch(
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    await gateway.flushLogs();

    const rows: Row[] = await gateway.dataSource.query(`select * from request_logs where api_key_id = $1`, [key.id]);
    const requests = rows.filter((row) => row.kind === 'request');
    expect(rows).toHaveLength(3 + 4); // three requests; 1 + 2 + 1 failed tries before their answers
    expect(requests).toHaveLength(3);

    // The last hour: read from the rows, percentiles exact (the rollups' answers are checked against these in analytics-rollups).
    const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
    const summary = await call(gateway, `/v1/analytics/summary?group_by=api_key&api_key_id=${key.id}&${range}`);
    expect(summary.status).toBe(200);
    expect(summary.body.latency_percentiles).toBe('exact');
    const [group] = summary.body.data;
    expect(group).toMatchObject({ key: key.id, requests: 3, errors: 1, recovered: 2 });
    const sum = (column: string) => rows.reduce((total, row) => total + Number(row[column] ?? 0), 0);
    expect(group.prompt_tokens).toBe(sum('prompt_tokens'));
    expect(group.cost_usd).toBeCloseTo(sum('cost_usd'), 10);
    // Latency percentiles are the requests' own, not the failed tries'.
    const latencies = requests.map((row) => row.latency_ms).sort((a, b) => a - b);
    expect(group.latency_p50_ms).toBe(latencies[1]);

    const series = await call(gateway, `/v1/analytics/timeseries?api_key_id=${key.id}&${range}`);
    const total = (column: string) => series.body.data.reduce((acc: number, bucket: Row) => acc + bucket[column], 0);
    expect([total('requests'), total('errors'), total('recovered')]).toEqual([3, 1, 2]);
  });

  it('refuses an unknown kind or a parent that is not an id', async () => {
    expectError(await call(gateway, '/v1/logs?kind=request,retry'), 400, { type: 'invalid_request_error', param: 'kind', message: /kind must be row kinds/ });
    expectError(await call(gateway, '/v1/logs?parent_id=abc'), 400, { type: 'invalid_request_error', param: 'parent_id' });
  });
});
