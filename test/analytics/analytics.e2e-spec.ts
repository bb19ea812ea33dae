/**
 * `GET /v1/analytics/summary`: the request log grouped by user, model, virtual key, API
 * key or a metadata key, with errors, tokens, cost and latency percentiles.
 */
import { call, createApiKey, createVirtualKey, waitFor } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

describe('analytics summary', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let userKey: { id: string; key: string };

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ ROLLUP_COMPACT_INTERVAL_MS: '200' });
    await createVirtualKey(gateway, { slug: 'openai-prod', key: 'sk-analytics', custom_host: `${mock.url}/v1` });
    userKey = await createApiKey(gateway, { role: 'user' });
    const send = (user: string, team: string, model: string, apiKey?: string) =>
      call(gateway, '/v1/chat/completions', {
        headers: { 'x-gateway-virtual-key': 'openai-prod', 'x-gateway-metadata': JSON.stringify({ team }) },
        body: { model, messages: [{ role: 'user', content: 'Say hello' }], user },
        apiKey,
      });
    for (const [user, team, model] of [
      ['alice', 'search', 'gpt-4o-mini'],
      ['alice', 'search', 'gpt-4o-mini'],
      ['bob', 'ads', 'gpt-4o'],
      ['bob', 'ads', 'mock-error-500'],
      // A model the gateway has no price for: its cost is unknown.
      ['dave', 'ops', 'house-model-7b'],
    ]) {
      await send(user, team, model);
    }
    await send('carol', 'ads', 'gpt-4o-mini', userKey.key);
    await gateway.flushLogs();
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const summary = async (query: string, apiKey?: string) => {
    const response = await call(gateway, `/v1/analytics/summary?${query}`, { apiKey });
    expect(response.status).toBe(200);
    return response.body;
  };
  const byKey = (rows: any[]) => Object.fromEntries(rows.map((row) => [row.key, row]));
  const loggedCost = async (where: string, params: unknown[]) =>
    (await gateway.dataSource.query(`select coalesce(sum(cost_usd), 0)::float8 as cost from request_logs where ${where}`, params))[0].cost;

  it('groups by user: requests, errors, tokens, cost and latency percentiles', async () => {
    const body = await summary('group_by=user');
    expect(body).toMatchObject({ object: 'analytics.summary', group_by: 'user' });
    const rows = byKey(body.data);
    expect(rows.alice).toMatchObject({ requests: 2, errors: 0, completion_tokens: 6 });
    expect(rows.alice.prompt_tokens).toBeGreaterThan(0);
    expect(rows.alice.cost_usd).toBeCloseTo(await loggedCost(`end_user = 'alice'`, []), 12);
    expect(rows.bob).toMatchObject({ requests: 2, errors: 1 });
    expect(rows.bob.latency_p95_ms).toBeGreaterThanOrEqual(rows.bob.latency_p50_ms);
    expect(rows.carol.requests).toBe(1);
  });

  it('groups by model, metadata key, virtual key slug and API key', async () => {
    expect(byKey((await summary('group_by=model')).data)['gpt-4o-mini'].requests).toBe(3);
    const teams = byKey((await summary('group_by=metadata.team')).data);
    expect(teams.search.requests).toBe(2);
    expect(teams.ads.requests).toBe(3);
    expect(byKey((await summary('group_by=virtual_key')).data)['openai-prod'].requests).toBe(6);
    const keys = byKey((await summary('group_by=api_key')).data);
    expect(keys[userKey.id]).toMatchObject({ requests: 1 });
    expect(keys[userKey.id].cost_usd).toBeCloseTo(await loggedCost('api_key_id = $1', [userKey.id]), 12);
  });

  it('counts the requests without a price per group, and gives a group of only those a null cost, never 0', async () => {
    const models = byKey((await summary('group_by=model')).data);
    expect(models['house-model-7b']).toMatchObject({ requests: 1, unpriced_requests: 1, cost_usd: null });
    expect(models['gpt-4o-mini']).toMatchObject({ unpriced_requests: 0 });
    expect(models['gpt-4o-mini'].cost_usd).toBeGreaterThan(0);
    // The error that used nothing is neither priced nor unpriced: it cost nothing.
    expect(models['mock-error-500']).toMatchObject({ requests: 1, unpriced_requests: 0, cost_usd: 0 });
    const slugs = byKey((await summary('group_by=virtual_key')).data);
    expect(slugs['openai-prod'].unpriced_requests).toBe(1);
    expect(slugs['openai-prod'].cost_usd).toBeCloseTo(await loggedCost('virtual_key_id is not null', []), 12);
  });

  it('a user-role key sees only its own requests', async () => {
    const rows = (await summary('group_by=user', userKey.key)).data;
    expect(rows.map((row: any) => row.key)).toEqual(['carol']);
  });

  it('honours the time range', async () => {
    expect((await summary(`group_by=user&to=${new Date(Date.now() - 3_600_000).toISOString()}`)).data).toEqual([]);
  });

  it('folds the logged rows into the rollups on its own, and answers the same from them', async () => {
    const before = byKey((await summary('group_by=user')).data);
    // The gateway of this file compacts every 200 ms (ROLLUP_COMPACT_INTERVAL_MS).
    await waitFor(async () => (await gateway.dataSource.query('select count(*)::int as n from request_log_rollup_queue'))[0].n === 0);
    const [{ rolled }] = await gateway.dataSource.query(
      `select coalesce(sum(requests), 0)::int as rolled from request_log_rollups where period = 'day' and dimension = 'all'`,
    );
    expect(rolled).toBe(6);
    const after = byKey((await summary('group_by=user')).data);
    expect(after.dave).toMatchObject({ unpriced_requests: 1, cost_usd: null });
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const user of Object.keys(before)) {
      const { requests, errors, prompt_tokens, unpriced_requests } = before[user];
      expect(after[user]).toMatchObject({ requests, errors, prompt_tokens, unpriced_requests });
      if (before[user].cost_usd === null) expect(after[user].cost_usd).toBeNull();
      else expect(after[user].cost_usd).toBeCloseTo(before[user].cost_usd, 12);
    }
  });

  it.each([
    ['group_by=colour', 'group_by'],
    ['group_by=user&from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
  ])('%s is a 400 naming the field', async (query, param) => {
    const response = await call(gateway, `/v1/analytics/summary?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe(param);
  });

  it('keeps a deleted virtual key apart from a new key given its slug, over a day and over a month', async () => {
    const sendThrough = (virtualKey: string) =>
      call(gateway, '/v1/chat/completions', {
        headers: { 'x-gateway-virtual-key': virtualKey },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      });
    const old = await createVirtualKey(gateway, { slug: 'rotated', key: 'sk-old', custom_host: `${mock.url}/v1` });
    for (let i = 0; i < 2; i++) expect((await sendThrough('rotated')).status).toBe(200);
    expect((await call(gateway, '/v1/virtual-keys/rotated', { method: 'DELETE' })).status).toBe(200);
    const renewed = await createVirtualKey(gateway, { slug: 'rotated', key: 'sk-new', custom_host: `${mock.url}/v1` });
    expect((await sendThrough('rotated')).status).toBe(200);
    await gateway.flushLogs();

    const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString();
    for (const query of ['group_by=virtual_key', `group_by=virtual_key&from=${monthAgo}`]) {
      const rotated = (await summary(query)).data.filter((row: any) => row.key === 'rotated');
      expect(rotated.map((row: any) => [row.virtual_key_id, row.requests]).sort()).toEqual(
        [
          [old.id, 2],
          [renewed.id, 1],
        ].sort(),
      );
    }
    // The id is what the dashboard links to: it finds exactly that group's rows in the log.
    expect((await call(gateway, `/v1/logs?virtual_key=${old.id}`)).body.data).toHaveLength(2);
  });
});
