/**
 * GET /v1/logs/export (issue 25): the filtered log as CSV or JSON, every matching row
 * (past the 1,000-row batches it is read in), newest first, scoped like the list, with
 * cells a spreadsheet would run as formulas defused; a bad filter is a 400 before any byte.
 */
import { uuidv7 } from '../../src/common/ids';
import { call, chat, createApiKey, createVirtualKey, expectError, parseCsv } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

describe('log export', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let member: { id: string; key: string };

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'export', key: 'sk-export', custom_host: `${mock.url}/v1` });
    member = await createApiKey(gateway, { name: 'member', role: 'member' });
    expect((await chat(gateway, { 'x-gateway-virtual-key': 'export' }, { user: '=HYPERLINK("http://evil")' }, member.key)).status).toBe(200);
    expect((await chat(gateway, { 'x-gateway-virtual-key': 'export' }, { user: 'plain, "quoted"\nuser' })).status).toBe(200);
    await gateway.flushLogs();
    // 2,500 older rows (no key: the default workspace), straight into the table: more than two export batches.
    for (let start = 0; start < 2500; start += 500) {
      const values = Array.from({ length: 500 }, (_, i) => {
        const n = start + i;
        const at = Date.now() - 3_600_000 - n;
        return `('${uuidv7(at)}', 'bulk', to_timestamp(${at / 1000}), 'chat.completions', ${n % 10 === 0 ? 500 : 200}, 5, 'bulk-model', 'openai', 'bulk-user')`;
      });
      await gateway.dataSource.query(
        `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, model, provider, end_user) values ${values.join(',')}`,
      );
    }
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it('CSV: every matching row past the batch size, newest first, a header naming the columns, a download name', async () => {
    const response = await call(gateway, '/v1/logs/export?format=csv&model=bulk-model');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="request-logs-[\dT-]+\.csv"$/);
    const [header, ...rows] = parseCsv(response.text);
    expect(header.slice(0, 3)).toEqual(['id', 'created_at', 'trace_id']);
    expect(header).not.toContain('request_body');
    expect(rows).toHaveLength(2500);
    const ids = rows.map((row) => row[0]);
    expect(new Set(ids).size).toBe(2500);
    expect([...ids].sort().reverse()).toEqual(ids);
    const status = header.indexOf('status_code');
    expect(rows.filter((row) => row[status] === '500')).toHaveLength(250);
  });

  it('JSON: one array of log rows with the same filters (status class, bodies on request)', async () => {
    const response = await call(gateway, '/v1/logs/export?format=json&model=bulk-model&status=5xx');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.body).toHaveLength(250);
    expect(response.body[0]).toMatchObject({ object: 'request_log', model: 'bulk-model', status_code: 500 });
    expect(response.body[0]).not.toHaveProperty('request_body');

    const withBodies = await call(gateway, '/v1/logs/export?format=json&include_bodies=true&model=gpt-4o-mini');
    expect(withBodies.body).toHaveLength(2);
    expect(withBodies.body[0].request_body).toMatchObject({ model: 'gpt-4o-mini' });
    expect(await call(gateway, '/v1/logs/export?format=json&model=none').then((r) => r.body)).toEqual([]);
  });

  it('keeps CSV cells safe: quotes, commas and new lines escaped, a formula defused', async () => {
    const csv = parseCsv((await call(gateway, '/v1/logs/export?model=gpt-4o-mini')).text);
    const users = csv.slice(1).map((row) => row[csv[0].indexOf('user')]);
    expect(users.sort()).toEqual([`'=HYPERLINK("http://evil")`, 'plain, "quoted"\nuser']);
  });

  it('scopes like the list: a member exports only its own requests', async () => {
    const own = await call(gateway, '/v1/logs/export?format=json', { apiKey: member.key });
    expect(own.status).toBe(200);
    expect(own.body.map((row: any) => row.api_key_id)).toEqual([member.id]);
  });

  it('refuses a bad filter or format with a 400 before any byte, and needs a key', async () => {
    expectError(await call(gateway, '/v1/logs/export?format=xlsx'), 400, { type: 'invalid_request_error', param: 'format' });
    expectError(await call(gateway, '/v1/logs/export?status=abc'), 400, { type: 'invalid_request_error', param: 'status' });
    expectError(await call(gateway, '/v1/logs/export?cursor=nope'), 400, { type: 'invalid_request_error', param: 'cursor' });
    expect((await call(gateway, '/v1/logs/export', { apiKey: null })).status).toBe(401);
  });
  it('analytics tables as CSV: the summary by model and the time series, the same numbers as their JSON', async () => {
    const json = await call(gateway, '/v1/analytics/summary?group_by=model&from=2020-01-01T00:00:00Z');
    const csv = await call(gateway, '/v1/analytics/summary?group_by=model&from=2020-01-01T00:00:00Z&format=csv');
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="analytics-by-model.csv"');
    const [header, ...rows] = parseCsv(csv.text);
    expect(header).toEqual([
      'key',
      'virtual_key_id',
      'requests',
      'errors',
      'prompt_tokens',
      'completion_tokens',
      'cost_usd',
      'unpriced_requests',
      'latency_p50_ms',
      'latency_p95_ms',
    ]);
    expect(rows.map((row) => [row[0], Number(row[2]), Number(row[3])])).toEqual(json.body.data.map((row: any) => [row.key, row.requests, row.errors]));
    expect(rows.find((row) => row[0] === 'bulk-model')?.slice(2, 4)).toEqual(['2500', '250']);

    const series = parseCsv((await call(gateway, '/v1/analytics/timeseries?interval=hour&format=csv')).text);
    expect(series[0][0]).toBe('bucket');
    expect(series.slice(1).reduce((sum, row) => sum + Number(row[1]), 0)).toBe(2502);
    expectError(await call(gateway, '/v1/analytics/summary?group_by=model&format=xlsx'), 400, { type: 'invalid_request_error', param: 'format' });
  });

  it('a breakdown as CSV: a row per group and bucket, the same numbers as its JSON series', async () => {
    const query = '/v1/analytics/timeseries?interval=hour&group_by=model&top=1';
    const json = (await call(gateway, query)).body;
    // The top model (by cost, then requests) and the other one.
    expect(json.series.map((s: any) => s.other)).toEqual([false, true]);
    const csv = await call(gateway, `${query}&format=csv`);
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="analytics-per-hour-by-model.csv"');
    const [header, ...rows] = parseCsv(csv.text);
    expect(header).toEqual([
      'bucket',
      'key',
      'virtual_key_id',
      'other',
      'requests',
      'errors',
      'prompt_tokens',
      'completion_tokens',
      'cost_usd',
      'unpriced_requests',
    ]);
    const expected = json.series.flatMap((s: any) =>
      s.data.map((point: any) => [point.bucket, s.key ?? '', String(s.other), String(point.requests), String(point.errors)]),
    );
    expect(rows.map((row) => [row[0], row[1], row[3], row[4], row[5]])).toEqual(expected);
    // The groups add up to every request of the period.
    expect(rows.reduce((sum, row) => sum + Number(row[4]), 0)).toBe(2502);
  });
});
