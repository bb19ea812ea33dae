/**
 * Budget and rate counters in Redis (REDIS_URL): shared by two gateway processes,
 * settled exactly once per log row even when a settlement is retried, rebuilt from the
 * log when Redis loses them, and refusing (503) rather than spending uncounted when
 * Redis is unreachable. budgets.e2e-spec.ts runs the budget suite itself on Redis too.
 */
import { Redis } from 'ioredis';
import { randomBytes, randomUUID } from 'node:crypto';
import { RedisCounterStore } from '../../src/modules/budgets/redis-counter-store';
import { call, createApiKey, createVirtualKey, sleep, waitFor } from '../support/e2e-helpers';
import { GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

// Redis is optional on a developer's machine; CI and this repo's dev box export TEST_REDIS_URL.
const REDIS_URL = process.env.TEST_REDIS_URL;
const describeRedis = REDIS_URL ? describe : describe.skip;

// 1,000 prompt tokens and 3 completion tokens of gpt-4o-mini: $0.0001518 a request.
const BODY = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(4000) }], max_tokens: 3 };
const COST = (1000 * 0.15 + 3 * 0.6) / 1e6;

describeRedis('budget and rate counters in Redis', () => {
  let first: TestGateway;
  let second: GatewayProcess;
  let secondUrl: string;
  let mock: MockUpstream;
  let redis: Redis;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const encryptionKey = randomBytes(32).toString('hex');
    first = await startTestGateway({ REDIS_URL: REDIS_URL!, GATEWAY_ENCRYPTION_KEY: encryptionKey });
    second = await startGatewayProcess({
      DATABASE_URL: first.databaseUrl,
      GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
      GATEWAY_ENCRYPTION_KEY: encryptionKey,
      REDIS_URL: REDIS_URL!,
      LOG_FLUSH_INTERVAL_MS: '20',
    });
    secondUrl = second.url;
    redis = new Redis(REDIS_URL!);
    await createVirtualKey(first, { slug: 'openai-prod', key: 'sk-redis', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await redis?.quit();
    await second?.stop();
    await first?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const send = (url: string, apiKey: string, body: object = BODY) =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': apiKey, 'x-gateway-virtual-key': 'openai-prod', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.status);
  const budgetKey = async (scopeId: string) => {
    const keys = await redis.keys(`gateway:budget:*:${scopeId}:*`);
    expect(keys).toHaveLength(1);
    return keys[0];
  };
  const spentInRedis = async (scopeId: string) => Number(await redis.hget(await budgetKey(scopeId), 'spent')) / 1e9;

  it("holds an API key's budget across both processes, and PostgreSQL's counter tables stay empty", async () => {
    const key = await createApiKey(first, { role: 'user', budget_limit_usd: 0.000759 }); // 5 requests
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => send(i % 2 ? secondUrl : first.url, key.key)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(35);
    expect(mock.requests).toHaveLength(5);

    await first.flushLogs();
    // The other process stores its rows, and settles them in Redis, within its flush interval.
    const logged = async () =>
      (await first.dataSource.query('select count(*)::int as n, sum(cost_usd)::float8 as total from request_logs where api_key_id = $1', [key.id]))[0];
    await waitFor(async () => (await logged()).n === 40 || null);
    await waitFor(async () => Number(await redis.hget(await budgetKey(key.id), 'reserved')) === 0 || null);
    expect(await spentInRedis(key.id)).toBeCloseTo(5 * COST, 9);
    expect(await spentInRedis(key.id)).toBeCloseTo((await logged()).total, 9);
    const [tables] = await first.dataSource.query(
      'select (select count(*) from budget_counters)::int as budgets, (select count(*) from rate_counters)::int as rates',
    );
    expect(tables).toEqual({ budgets: 0, rates: 0 });
  });

  it('holds a requests-per-minute limit across both processes', async () => {
    const key = await createApiKey(first, { role: 'user', rate_limits: [{ type: 'requests', unit: 'rpm', value: 7 }] });
    const small = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => send(i % 2 ? secondUrl : first.url, key.key, small)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 429)).toHaveLength(23);
  });

  it('a counter Redis lost is rebuilt from the request log: the spent budget stays spent', async () => {
    const key = await createApiKey(first, { role: 'user', budget_limit_usd: 0.000303, budget_period: 'monthly' }); // 2 requests
    expect(await send(first.url, key.key)).toBe(200);
    expect(await send(first.url, key.key)).toBe(200);
    await first.flushLogs();
    await redis.del(await budgetKey(key.id));

    expect(await send(secondUrl, key.key)).toBe(402);
    expect(await spentInRedis(key.id)).toBeCloseTo(2 * COST, 9);
  });

  it('settles each log row exactly once, even when a timed-out settlement is retried', async () => {
    const store = new RedisCounterStore(REDIS_URL!);
    const scopeId = randomUUID();
    const periodStart = new Date(Date.UTC(2026, 10, 1));
    const hash = `gateway:budget:api_key:${scopeId}:${periodStart.getTime()}`;
    try {
      expect(await store.reserveBudget({ scope: 'api_key', scopeId, periodStart }, 0.5, 10, async () => 1.25)).toBe('held');
      expect(await redis.hgetall(hash)).toEqual({ spent: '1250000000', reserved: '500000000' });

      const rows = [
        {
          logId: randomUUID(),
          budgets: [{ scope: 'api_key' as const, scope_id: scopeId, period_start: periodStart.toISOString(), spend_usd: 0.2, release_usd: 0.5 }],
          tokens: [],
        },
      ];
      // Writes stall for longer than the store's 500 ms command timeout: the first attempt
      // times out on the client but still runs in Redis once the pause ends; the retry
      // that follows finds the row's marker and changes nothing.
      await redis.call('client', 'pause', '1200', 'write');
      await store.afterLogInsert(rows);
      expect(await redis.hgetall(hash)).toEqual({ spent: '1250000000', reserved: '500000000' }); // timed out, to be retried
      await sleep(2500);
      await store.afterLogInsert(rows); // the same rows again, as a retried log batch would
      expect(await redis.hgetall(hash)).toEqual({ spent: '1450000000', reserved: '0' });
    } finally {
      await store.onApplicationShutdown();
      await redis.del(hash);
    }
  });

  it('with Redis unreachable, keys with a budget or rate limit get 503 while other keys are served', async () => {
    const offline = await startTestGateway({ REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      await createVirtualKey(offline, { slug: 'openai-prod', key: 'sk-redis', custom_host: `${mock.url}/v1` });
      const budgeted = await createApiKey(offline, { role: 'user', budget_limit_usd: 1 });
      const limited = await createApiKey(offline, { role: 'user', rate_limits: [{ type: 'requests', unit: 'rpm', value: 100 }] });
      const free = await createApiKey(offline, { role: 'user' });
      const refused = await call(offline, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body: BODY, apiKey: budgeted.key });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({ type: 'service_unavailable', message: expect.stringMatching(/rate-limit store \(Redis\) cannot be reached/) });
      expect(await send(offline.url, limited.key)).toBe(503);
      expect(await send(offline.url, free.key)).toBe(200);
      expect(mock.requests).toHaveLength(1);
    } finally {
      await offline.close();
    }
  });
});
