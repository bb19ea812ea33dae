/**
 * Budgets on API keys and virtual keys: reserved before anything is sent, settled by the
 * log rows, refused with 402 once spent, holding under 50 concurrent requests (even when
 * the provider answers past max_tokens: reservations learn the key's real costs); with the
 * counters in PostgreSQL, and in Redis when the machine has one (TEST_REDIS_URL).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { call, createApiKey, createVirtualKey, waitFor } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

// 4,000 characters: the mock counts 1,000 prompt tokens; the answer "Hello from mock" is 3.
const LONG = [{ role: 'user', content: 'x'.repeat(4000) }];
// gpt-4o-mini at $0.15 / $0.60 per million tokens.
const COST = (1000 * 0.15 + 3 * 0.6) / 1e6; // $0.0001518
// Limits are stored to 6 decimals: the tests pick ones just under a number of requests' cost.
const BODY = { model: 'gpt-4o-mini', messages: LONG, max_tokens: 3 };

/** A counter as the store holds it: spend and reservations in USD, or tokens used in a window. */
interface CounterReader {
  budget(scopeId: string): Promise<{ spent: number; reserved: number } | undefined>;
  tokens(scope: string, scopeId: string, limitKey: string): Promise<number | undefined>;
  close(): Promise<void>;
}

function postgresCounters(gateway: TestGateway): CounterReader {
  return {
    budget: async (scopeId) =>
      (
        await gateway.dataSource.query('select spent_usd::float8 as spent, reserved_usd::float8 as reserved from budget_counters where scope_id = $1', [
          scopeId,
        ])
      )[0],
    tokens: async (scope, scopeId, limitKey) =>
      (
        await gateway.dataSource.query('select used::int as used from rate_counters where scope = $1 and scope_id = $2 and limit_key = $3', [
          scope,
          scopeId,
          limitKey,
        ])
      )[0]?.used,
    close: async () => undefined,
  };
}

function redisCounters(url: string): CounterReader {
  const redis = new Redis(url);
  const only = async (pattern: string) => {
    const keys = await redis.keys(pattern);
    expect(keys.length).toBeLessThanOrEqual(1);
    return keys[0];
  };
  return {
    budget: async (scopeId) => {
      const key = await only(`gateway:budget:*:${scopeId}:*`);
      if (!key) return undefined;
      const { spent, reserved } = await redis.hgetall(key);
      return { spent: Number(spent) / 1e9, reserved: Number(reserved) / 1e9 };
    },
    tokens: async (scope, scopeId, limitKey) => {
      const key = await only(`gateway:rate:${scope}:${scopeId}:${limitKey}:*`);
      return key ? Number(await redis.get(key)) : undefined;
    },
    close: async () => void (await redis.quit()),
  };
}

const REDIS_URL = process.env.TEST_REDIS_URL;
const STORES: [string, Record<string, string>][] = [['PostgreSQL', {}], ...(REDIS_URL ? [['Redis', { REDIS_URL }] as [string, Record<string, string>]] : [])];

describe.each(STORES)('budgets, counters in %s', (_store, env) => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let counters: CounterReader;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway(env);
    counters = env.REDIS_URL ? redisCounters(env.REDIS_URL) : postgresCounters(gateway);
    await createVirtualKey(gateway, { slug: 'openai-prod', key: 'sk-budget', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await counters?.close();
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const loggedCost = async (column: string, id: string) => {
    const [row] = await gateway.dataSource.query(
      `select coalesce(sum(cost_usd), 0)::float8 as total, count(*)::int as n from request_logs where ${column} = $1`,
      [id],
    );
    return row as { total: number; n: number };
  };
  const counter = (scopeId: string) => counters.budget(scopeId);

  it('50 concurrent requests against an API key whose budget covers 5: 5 served, the rest 402 before reaching the provider', async () => {
    const key = await createApiKey(gateway, { role: 'user', budget_limit_usd: 0.000759 }); // 5 × COST exactly
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body: BODY, apiKey: key.key }),
      ),
    );
    const served = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 402);
    expect(served.length + refused.length).toBe(50);
    expect(served).toHaveLength(5);
    expect(refused[0].body.error).toMatchObject({ code: 'budget_exceeded', type: 'budget_exceeded', message: expect.stringContaining('API key') });
    expect(mock.requests).toHaveLength(5);

    await gateway.flushLogs();
    const logged = await loggedCost('api_key_id', key.id);
    expect(logged.n).toBe(50);
    expect(logged.total).toBeCloseTo(5 * COST, 12);
    const read = await admin(gateway, 'GET', `/v1/api-keys/${key.id}`);
    expect(read.body.spent_usd).toBeCloseTo(logged.total, 12);
    expect(read.body.budget_remaining_usd).toBeCloseTo(Math.max(0, read.body.budget_limit_usd - logged.total), 12);
    expect(await counter(key.id)).toEqual({ spent: expect.closeTo(logged.total, 12), reserved: 0 });
  });

  it("a virtual key's budget (just under 2 requests' cost): 402 once spent, and a fallback config moves on to the next target", async () => {
    const vk = await createVirtualKey(gateway, {
      slug: 'small-vk',
      key: 'sk-small',
      custom_host: `${mock.url}/v1`,
      budget_limit_usd: 0.000303,
      budget_period: 'daily',
    });
    const headers = { 'x-gateway-virtual-key': 'small-vk' };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(gateway, '/v1/chat/completions', { headers, body: BODY })).status);
    expect(statuses).toEqual([200, 200, 402, 402]);
    expect(mock.requests).toHaveLength(2);

    mock.reset();
    const config = { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'small-vk' }, { virtual_key: 'openai-prod' }] };
    const fellBack = await call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-config': JSON.stringify(config) }, body: BODY });
    expect(fellBack.status).toBe(200);
    expect(fellBack.headers.get('x-gateway-target-index')).toBe('1');
    expect(mock.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-budget']);

    await gateway.flushLogs();
    const read = await admin(gateway, 'GET', '/v1/virtual-keys/small-vk');
    expect(read.body).toMatchObject({ budget_period: 'daily', budget_remaining_usd: expect.any(Number) });
    expect(read.body.spent_usd).toBeCloseTo(2 * COST, 12);
    expect(read.body.budget_period_start).toBe(new Date(new Date().setUTCHours(0, 0, 0, 0)).toISOString());
    expect((await counter(vk.id))?.spent).toBeCloseTo(2 * COST, 12);
  });

  it('a request that fails releases its reservation once logged; a cache hit needs no budget', async () => {
    await createVirtualKey(gateway, { slug: 'dead-host', key: 'sk-dead', custom_host: 'http://127.0.0.1:9/v1' });
    const key = await createApiKey(gateway, { role: 'user', budget_limit_usd: 0.000151 }); // just under 1 × COST
    const failed = await call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'dead-host' }, body: BODY, apiKey: key.key });
    expect(failed.status).toBe(502);
    await gateway.flushLogs();
    expect(await counter(key.id)).toEqual({ spent: 0, reserved: 0 });

    const config = JSON.stringify({ virtual_key: 'openai-prod', cache: { mode: 'simple' } });
    const send = () => call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-config': config }, body: BODY, apiKey: key.key });
    expect((await send()).status).toBe(200);
    const hit = await send();
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-gateway-cache-status')).toBe('HIT');
    const other = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-virtual-key': 'openai-prod' },
      body: { ...BODY, messages: [{ role: 'user', content: 'another question' }] },
      apiKey: key.key,
    });
    expect(other.status).toBe(402);
  });

  it('keys without a budget never touch the counters', async () => {
    const key = await createApiKey(gateway, { role: 'user' });
    expect((await call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body: BODY, apiKey: key.key })).status).toBe(
      200,
    );
    await gateway.flushLogs();
    expect(await counter(key.id)).toBeUndefined();
  });

  it('counts requests at a model without a price apart (unpriced_requests), never as $0 spent', async () => {
    const key = await createApiKey(gateway, { name: 'unpriced-spender' });
    const ask = (model: string) =>
      call(gateway, '/v1/chat/completions', { apiKey: key.key, headers: { 'x-gateway-virtual-key': 'openai-prod' }, body: { ...BODY, model } });
    expect((await ask('house-model-without-price')).status).toBe(200);
    expect((await ask('house-model-without-price')).status).toBe(200);
    expect((await ask('gpt-4o-mini')).status).toBe(200);
    await gateway.flushLogs();
    const read = await admin(gateway, 'GET', `/v1/api-keys/${key.id}`);
    expect(read.body.spent_usd).toBeCloseTo(COST, 12);
    expect(read.body.unpriced_requests).toBe(2);
    const listed = await admin(gateway, 'GET', '/v1/api-keys?limit=100');
    expect(listed.body.data.find((row: any) => row.id === key.id)).toMatchObject({ unpriced_requests: 2 });
  });

  it('end users (the `user` field) have budgets managed like keys', async () => {
    const created = await admin(gateway, 'POST', '/v1/end-users', {
      user: 'dave@example.com',
      budget_limit_usd: 0.000303,
      budget_period: 'monthly',
      metadata: { plan: 'free' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'end_user',
      user: 'dave@example.com',
      budget_limit_usd: 0.000303,
      spent_usd: 0,
      budget_remaining_usd: 0.000303,
    });
    expect((await admin(gateway, 'POST', '/v1/end-users', { user: 'dave@example.com' })).status).toBe(409);

    const ask = (user: string) => call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body: { ...BODY, user } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await ask('dave@example.com')).status);
    expect(statuses).toEqual([200, 200, 402]);
    const refused = await ask('dave@example.com');
    expect(refused.body.error.message).toMatch(/end user/);
    expect((await ask('erin@example.com')).status).toBe(200);

    await gateway.flushLogs();
    const read = await admin(gateway, 'GET', `/v1/end-users/${encodeURIComponent('dave@example.com')}`);
    expect(read.body.spent_usd).toBeCloseTo(2 * COST, 12);
    expect((await admin(gateway, 'GET', `/v1/end-users/${created.body.id}`)).body.user).toBe('dave@example.com');

    // A raised budget applies at once (the look-up cache is invalidated).
    expect((await admin(gateway, 'PATCH', `/v1/end-users/${created.body.id}`, { budget_limit_usd: 1 })).status).toBe(200);
    expect((await ask('dave@example.com')).status).toBe(200);
    expect((await admin(gateway, 'DELETE', `/v1/end-users/${created.body.id}`)).body).toMatchObject({ deleted: true });
    expect((await admin(gateway, 'GET', '/v1/end-users/dave@example.com')).status).toBe(404);
  });

  describe('a provider that answers past max_tokens (CONTRACT section 15)', () => {
    // The mock ignores max_tokens and echoes 400 words: 400 output tokens, 502 prompt tokens.
    const LONG_ANSWER = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `echo: ${'word '.repeat(400).trim()}` }], max_tokens: 1 };
    const REAL_COST = (502 * 0.15 + 400 * 0.6) / 1e6; // $0.0003153
    const LIMIT = 0.002;

    it('50 concurrent requests with max_tokens 1 overshoot the budget by about one request at most, once the key has seen one', async () => {
      const key = await createApiKey(gateway, { role: 'user', budget_limit_usd: LIMIT });
      const send = () => call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body: LONG_ANSWER, apiKey: key.key });
      const first = await send();
      expect(first.status).toBe(200);
      expect(first.body.usage).toMatchObject({ prompt_tokens: 502, completion_tokens: 400 });
      await gateway.flushLogs();

      const responses = await Promise.all(Array.from({ length: 50 }, send));
      const served = responses.filter((r) => r.status === 200).length;
      expect(served + responses.filter((r) => r.status === 402).length).toBe(50);
      await gateway.flushLogs();
      const logged = await loggedCost('api_key_id', key.id);
      expect(logged.total).toBeCloseTo((served + 1) * REAL_COST, 12);
      // Trusting max_tokens: 1, all 50 went through (51 × $0.000315 = 8 × the budget).
      expect(logged.total).toBeLessThanOrEqual(LIMIT + REAL_COST + 1e-9);
      expect(served).toBeGreaterThanOrEqual(Math.floor((LIMIT - REAL_COST) / REAL_COST));
      expect(await counter(key.id)).toEqual({ spent: expect.closeTo(logged.total, 12), reserved: 0 });
    });

    it('`n: 5` reserves five answers', async () => {
      // A provider that holds every request until told to answer: the reservation can be read meanwhile.
      const held: http.ServerResponse[] = [];
      const holding = http.createServer((_req, res) => held.push(res));
      await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
      await createVirtualKey(gateway, { slug: 'holding', key: 'sk-holding', custom_host: `http://127.0.0.1:${(holding.address() as AddressInfo).port}/v1` });
      const key = await createApiKey(gateway, { role: 'user', budget_limit_usd: 1 });
      const body = { model: 'gpt-4o-mini', messages: LONG, max_tokens: 100, n: 5 };
      const pending = call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'holding' }, body, apiKey: key.key });
      try {
        await waitFor(() => held.length === 1 || null, 5_000);
        const promptTokens = Math.ceil(JSON.stringify(LONG).length / 4);
        expect((await counter(key.id))?.reserved).toBeCloseTo((promptTokens * 0.15 + 5 * 100 * 0.6) / 1e6, 9);
      } finally {
        held.forEach((res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"done","type":"server_error"}}'));
        await pending;
        holding.closeAllConnections();
        holding.close();
      }
      await gateway.flushLogs();
      expect(await counter(key.id)).toEqual({ spent: 0, reserved: 0 });
    });
  });

  describe('rate limits', () => {
    const chatWith = (
      apiKey: string,
      headers: Record<string, string> = { 'x-gateway-virtual-key': 'openai-prod' },
      body: Record<string, unknown> = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    ) => call(gateway, '/v1/chat/completions', { headers, body, apiKey });

    it('requests per minute: exactly the limit served under 20 concurrent requests, then 429 with Retry-After', async () => {
      const key = await createApiKey(gateway, { role: 'user', rate_limits: [{ type: 'requests', unit: 'rpm', value: 5 }] });
      const responses = await Promise.all(Array.from({ length: 20 }, () => chatWith(key.key)));
      expect(responses.filter((r) => r.status === 200)).toHaveLength(5);
      const limited = responses.filter((r) => r.status === 429);
      expect(limited).toHaveLength(15);
      expect(limited[0].body.error).toMatchObject({
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        message: expect.stringMatching(/5 requests per minute/),
      });
      const retryAfter = Number(limited[0].headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(mock.requests).toHaveLength(5);
    });

    it("tokens per minute on a virtual key: admitted while the window's logged tokens are under the limit", async () => {
      const vk = await createVirtualKey(gateway, {
        slug: 'token-limited',
        key: 'sk-tokens',
        custom_host: `${mock.url}/v1`,
        rate_limits: [{ type: 'tokens', unit: 'rpm', value: 1000 }],
      });
      const headers = { 'x-gateway-virtual-key': 'token-limited' };
      expect((await chatWith(gateway.adminKey, headers, BODY)).status).toBe(200); // 1,003 tokens
      await gateway.flushLogs();
      expect(await counters.tokens('virtual_key', vk.id, 'tokens:rpm')).toBe(1003);
      const limited = await chatWith(gateway.adminKey, headers, BODY);
      expect(limited.status).toBe(429);
      expect(limited.body.error.message).toMatch(/virtual key is limited to 1000 tokens per minute/);
      expect(mock.requests).toHaveLength(1);
    });
  });
});
