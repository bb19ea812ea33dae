import { uuidv7 } from '../../src/common/ids';
import { LogsService } from '../../src/modules/logging/logs.service';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';
import { call, chat, createApiKey, createConfig, createVirtualKey, expectError, sleep } from '../support/e2e-helpers';

/** GET /v1/logs: filters, paging, per-key visibility, metadata, spend and cost (CONTRACT sections 4 and 6). */
describe('request logs', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let userA: any;
  let userB: any;
  let vkA: any;
  let vkB: any;
  /** Request ids of the six logged requests, oldest first. */
  const ids: string[] = [];
  const rows: Record<string, any> = {};

  const list = async (query: string, apiKey?: string) => {
    const response = await call(gateway, `/v1/logs${query}`, { apiKey });
    expect(response.status).toBe(200);
    return response.body;
  };
  const listIds = async (query: string, apiKey?: string) => (await list(query, apiKey)).data.map((row: any) => row.id);
  /** Request ids by index, newest first (the order of the log list). */
  const newestFirst = (...indexes: number[]) => indexes.sort((a, b) => b - a).map((i) => ids[i]);

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    userA = await createApiKey(gateway, { name: 'user A', metadata: { dept: 'sales', region: 'eu' } });
    userB = await createApiKey(gateway, { name: 'user B' });
    vkA = await createVirtualKey(gateway, { slug: 'logs-a', key: 'sk-logs-a-secret-000000', custom_host: `${mock.url}/v1` });
    vkB = await createVirtualKey(gateway, { slug: 'logs-b', key: 'sk-logs-b-secret-000000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'logs-groq', provider: 'groq', key: 'gsk-logs-000000', custom_host: `${mock.url}/openai/v1` });
    await createVirtualKey(gateway, { slug: 'logs-custom', provider: 'openai-compatible', custom_host: `${mock.url}/v1` });

    const meta = (m: Record<string, string>) => JSON.stringify(m);
    const requests: [Record<string, string>, Record<string, unknown>, string | undefined][] = [
      /* 0 */ [
        { 'x-gateway-virtual-key': 'logs-a', 'x-gateway-metadata': meta({ team: 'x' }), 'x-gateway-trace-id': 't-alpha' },
        { user: 'u-alpha' },
        undefined,
      ],
      /* 1 */ [
        { 'x-gateway-virtual-key': 'logs-b', 'x-gateway-metadata': meta({ team: 'y' }), 'x-gateway-trace-id': 't-beta' },
        { user: 'u-beta', model: 'gpt-4o' },
        userA.key,
      ],
      /* 2 */ [{ 'x-gateway-virtual-key': 'logs-a', 'x-gateway-trace-id': 't-429' }, { model: 'mock-error-429' }, undefined],
      /* 3 */ [{ 'x-gateway-virtual-key': 'logs-groq', 'x-gateway-metadata': meta({ _user: 'u-gamma' }) }, { model: 'llama-3.1-8b-instant' }, userB.key],
      /* 4 */ [{ 'x-gateway-virtual-key': 'logs-custom' }, { model: 'my-custom-llama' }, userA.key],
      /* 5 */ [{ 'x-gateway-virtual-key': 'logs-a', 'x-gateway-metadata': meta({ team: 'y' }) }, { user: 'u-alpha', stream: true }, undefined],
    ];
    for (const [headers, body, apiKey] of requests) {
      const response = await chat(gateway, headers, body, apiKey);
      expect(response.status).toBe(body.model === 'mock-error-429' ? 429 : 200);
      ids.push(response.headers.get('x-gateway-request-id')!);
      await sleep(5); // distinct created_at values for the from/to filters
    }
    await gateway.flushLogs();
    for (const row of (await list('?limit=500')).data) rows[row.id] = row;
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it('logs one row per request, newest first', async () => {
    expect(await listIds('')).toEqual(newestFirst(0, 1, 2, 3, 4, 5));
    expect(rows[ids[3]]).toMatchObject({ user: 'u-gamma', provider: 'groq', metadata: { _user: 'u-gamma' } });
    expect(rows[ids[5]]).toMatchObject({ is_stream: true, user: 'u-alpha', status_code: 200, completion_tokens: 3 });
  });

  it.each([
    ['user', '?user=u-alpha', [0, 5]],
    ['user from metadata _user', '?user=u-gamma', [3]],
    ['model', '?model=gpt-4o', [1]],
    ['provider', '?provider=groq', [3]],
    ['provider openai', '?provider=openai', [0, 1, 2, 5]],
    ['status', '?status=429', [2]],
    ['trace_id', '?trace_id=t-beta', [1]],
    ['metadata', '?metadata.team=x', [0]],
    ['metadata and user', '?metadata.team=y&user=u-alpha', [5]],
    ['virtual_key slug', '?virtual_key=logs-a', [0, 2, 5]],
    ['unknown virtual_key', '?virtual_key=no-such-key', []],
    ['several models', '?model=gpt-4o,my-custom-llama', [1, 4]],
    ['several providers', '?provider=groq,openai-compatible', [3, 4]],
    ['a part of the model name, any case', '?model_contains=LLAMA', [3, 4]],
    ['a model part with a LIKE wildcard in it, taken literally', '?model_contains=gpt_4o', []],
    ['several status codes', '?status=200,429', [0, 1, 2, 3, 4, 5]],
    ['a status class', '?status=4xx', [2]],
    ['errors only', '?status=error', [2]],
    ['successes by class and a user', '?status=2xx&user=u-alpha', [0, 5]],
    ['full-text search in the request bodies', '?q=u-beta', [1]],
    ['full-text search, two words anywhere', '?q=llama%20instant', [3]],
    ['full-text search of a phrase in the answers', '?q=%22hello%20from%20mock%22', [0, 1, 3, 4, 5]],
    ['full-text search excluding a word', '?q=%22hello%20from%20mock%22%20-llama', [0, 1, 5]],
    // Words match as prefixes: "instan" finds "instant", "hel fro" the phrase's words.
    ["full-text search by a word's beginning", '?q=instan', [3]],
    ['full-text search by the beginnings of two words', '?q=llam%20insta', [3]],
  ])('filter by %s', async (_, query, expected) => {
    expect(await listIds(query)).toEqual(newestFirst(...expected));
  });

  it("gives a search's rows a snippet: the words found in their bodies, marked; none without a search", async () => {
    const found = await list('?q=instan');
    expect(found.data).toHaveLength(1);
    const snippet = found.data[0].snippet;
    expect(snippet.in).toBe('request');
    expect(snippet.highlights.map(([start, end]: [number, number]) => snippet.text.slice(start, end).toLowerCase())).toEqual(['instan']);
    expect((await list('?limit=1')).data[0].snippet).toBeUndefined();
  });

  it('filters by api_key_id and virtual key id', async () => {
    expect(await listIds(`?api_key_id=${userA.id}`)).toEqual(newestFirst(1, 4));
    expect(await listIds(`?virtual_key=${vkB.id}`)).toEqual(newestFirst(1));
    expect(await listIds(`?virtual_key=${vkA.id}&status=200`)).toEqual(newestFirst(0, 5));
  });

  it('filters by from (inclusive) and to (exclusive)', async () => {
    const at = (i: number) => encodeURIComponent(rows[ids[i]].created_at);
    expect(await listIds(`?from=${at(2)}`)).toEqual(newestFirst(2, 3, 4, 5));
    expect(await listIds(`?to=${at(2)}`)).toEqual(newestFirst(0, 1));
    expect(await listIds(`?from=${at(1)}&to=${at(4)}`)).toEqual(newestFirst(1, 2, 3));
  });

  it('pages with limit and next_cursor, newest first, without duplicates', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.object).toBe('list');
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((row: any) => row.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst(0, 1, 2, 3, 4, 5));
    const times = seen.map((id) => Date.parse(rows[id].created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(await listIds(`?limit=2&status=200&cursor=${encodeURIComponent(ids[5])}`)).toEqual(newestFirst(3, 4));
  });

  it('a user-role key sees only its own logs, in the list and by id', async () => {
    expect(await listIds('', userA.key)).toEqual(newestFirst(1, 4));
    const other = await list(`?api_key_id=${userB.id}`, userA.key);
    expect(other.data.every((row: any) => row.api_key_id === userA.id)).toBe(true);
    expect(await listIds('', userB.key)).toEqual(newestFirst(3));

    expect((await call(gateway, `/v1/logs/${ids[4]}`, { apiKey: userA.key })).body.id).toBe(ids[4]);
    for (const i of [0, 3]) {
      expectError(await call(gateway, `/v1/logs/${ids[i]}`, { apiKey: userA.key }), 404, { type: 'not_found_error', code: 'log_not_found' });
    }
  });

  it("merges the API key's metadata into its logs", () => {
    expect(rows[ids[1]].metadata).toEqual({ team: 'y', dept: 'sales', region: 'eu' });
    expect(rows[ids[4]].metadata).toEqual({ dept: 'sales', region: 'eu' });
    expect(rows[ids[0]].metadata).toEqual({ team: 'x' });
  });

  it('prices known models from the reported usage, stream included', () => {
    const cost = (row: any, input: number, output: number) => (row.prompt_tokens * input + row.completion_tokens * output) / 1e6;
    for (const i of [0, 5]) {
      expect(rows[ids[i]].prompt_tokens).toBeGreaterThan(0);
      expect(rows[ids[i]].cost_usd).toBeCloseTo(cost(rows[ids[i]], 0.15, 0.6), 12);
    }
    expect(rows[ids[1]].cost_usd).toBeCloseTo(cost(rows[ids[1]], 2.5, 10), 12);
    expect(rows[ids[3]].cost_usd).toBeCloseTo(cost(rows[ids[3]], 0.05, 0.08), 12);
  });

  it('cost is null, never 0, for a model without a price and for an upstream error', () => {
    expect(rows[ids[4]]).toMatchObject({ provider: 'openai-compatible', model: 'my-custom-llama', completion_tokens: 3, cost_usd: null });
    expect(rows[ids[4]].prompt_tokens).toBeGreaterThan(0);
    expect(rows[ids[2]]).toMatchObject({ status_code: 429, cost_usd: null, prompt_tokens: null });
  });

  it('spent_usd of an API key and a virtual key is the sum of their logged cost', async () => {
    const sum = (indexes: number[]) => indexes.reduce((total, i) => total + (rows[ids[i]].cost_usd ?? 0), 0);
    const keyA = await admin(gateway, 'GET', `/v1/api-keys/${userA.id}`);
    expect(keyA.body.spent_usd).toBeGreaterThan(0);
    expect(keyA.body.spent_usd).toBeCloseTo(sum([1, 4]), 10);
    const virtualA = await admin(gateway, 'GET', '/v1/virtual-keys/logs-a');
    expect(virtualA.body.spent_usd).toBeGreaterThan(0);
    expect(virtualA.body.spent_usd).toBeCloseTo(sum([0, 2, 5]), 10);
    const listed = (await admin(gateway, 'GET', '/v1/virtual-keys')).body.data.find((k: any) => k.slug === 'logs-b');
    expect(listed.spent_usd).toBeCloseTo(sum([1]), 10);
  });

  it('include_bodies=false leaves bodies and headers out; the default keeps them', async () => {
    const bare = await list('?include_bodies=false&trace_id=t-alpha');
    expect(bare.data).toHaveLength(1);
    for (const field of ['request_body', 'response_body', 'request_headers']) expect(bare.data[0]).not.toHaveProperty(field);
    expect(bare.data[0]).toMatchObject({ id: ids[0], status_code: 200, model: 'gpt-4o-mini', user: 'u-alpha' });
    const full = (await list('?trace_id=t-alpha')).data[0];
    expect(full.request_body).toMatchObject({ model: 'gpt-4o-mini', user: 'u-alpha' });
    expect(full.response_body.choices[0].message.content).toBe('Hello from mock');
    expect(full.request_headers['x-gateway-virtual-key']).toBe('logs-a');
  });

  it('rejects bad filter values with a 400 naming the parameter', async () => {
    expectError(await call(gateway, '/v1/logs?status=abc'), 400, { type: 'invalid_request_error', param: 'status' });
    expectError(await call(gateway, '/v1/logs?status=4xx,'), 400, { type: 'invalid_request_error', param: 'status' });
    expectError(await call(gateway, `/v1/logs?q=${'x'.repeat(501)}`), 400, { type: 'invalid_request_error', param: 'q' });
    expectError(await call(gateway, '/v1/logs?limit=0'), 400, { type: 'invalid_request_error', param: 'limit' });
    expectError(await call(gateway, '/v1/logs?from=yesterday'), 400, { type: 'invalid_request_error', param: 'from' });
    expectError(await call(gateway, '/v1/logs?cursor=abc'), 400, { type: 'invalid_request_error', param: 'cursor' });
  });
  it('a search read from the index window by window (a day, a week, the rest) pages newest first as the walk does', async () => {
    const logs = gateway.app.get(LogsService);
    const hours = [2, 5, 30, 72, 200, 300, 500, 700, 900];
    for (const [i, hoursAgo] of hours.entries()) {
      const at = Date.now() - hoursAgo * 3_600_000;
      await gateway.dataSource.query(
        `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, model, provider, request_body)
         values ($1, 'needles', $2, 'chat.completions', 200, 5, 'needle-model', 'openai', $3)`,
        [uuidv7(at), new Date(at), { messages: [{ role: 'user', content: `find the haystack needle number ${i}` }] }],
      );
      await gateway.dataSource.query(
        `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, model, provider, request_body)
         values ($1, 'hay', $2, 'chat.completions', 200, 5, 'hay-model', 'openai', '{"messages": [{"role": "user", "content": "only hay"}]}')`,
        [uuidv7(at + 1), new Date(at + 1)],
      );
    }
    const pages = async () => {
      const ids: string[][] = [];
      let cursor = '';
      do {
        const page = await list(`?q=needle&limit=4${cursor ? `&cursor=${cursor}` : ''}`);
        ids.push(page.data.map((row: any) => row.id));
        cursor = page.next_cursor ?? '';
      } while (cursor);
      return ids;
    };
    const walked = await pages();
    logs.searchWalkMs = 0; // straight to the index
    try {
      const indexed = await pages();
      expect(indexed).toEqual(walked);
      expect(indexed.map((page) => page.length)).toEqual([4, 4, 1]);
      const all = indexed.flat();
      expect([...all].sort().reverse()).toEqual(all);
    } finally {
      logs.searchWalkMs = 100;
    }
  });

  it('filters by config and by prompt, each by slug or id (the dashboard picks them by name)', async () => {
    const config = await createConfig(gateway, 'logs-config', { virtual_key: 'logs-b' });
    const prompt = (
      await admin(gateway, 'POST', '/v1/prompts', {
        name: 'Logs prompt',
        slug: 'logs-prompt',
        virtual_key: 'logs-a',
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hi {{who}}' }],
      })
    ).body;
    const viaConfig = await chat(gateway, { 'x-gateway-config': 'logs-config' }, {});
    expect(viaConfig.status).toBe(200);
    const viaPrompt = await call(gateway, '/v1/prompts/logs-prompt/completions', { body: { variables: { who: 'there' } } });
    expect(viaPrompt.status).toBe(200);
    await gateway.flushLogs();
    const configRow = viaConfig.headers.get('x-gateway-request-id');
    const promptRow = viaPrompt.headers.get('x-gateway-request-id');
    expect(await listIds('?config=logs-config')).toEqual([configRow]);
    expect(await listIds(`?config=${config.id}`)).toEqual([configRow]);
    expect(await listIds('?prompt=logs-prompt')).toEqual([promptRow]);
    expect(await listIds(`?prompt=${prompt.id}`)).toEqual([promptRow]);
    expect(await listIds('?config=no-such-config')).toEqual([]);
    expect(await listIds('?prompt=logs-config')).toEqual([]);
  });
});
