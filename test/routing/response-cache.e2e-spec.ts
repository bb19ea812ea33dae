import { DynamicModule } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { validateEnvironment } from '../../src/config/environment';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { ResponseCache1763900000000 } from '../../src/database/migrations/1763900000000-ResponseCache';
import { ResponseCacheModule } from '../../src/modules/cache/cache.module';
import { PostgresResponseCache } from '../../src/modules/cache/postgres-response-cache';
import { REDIS_CACHE_PREFIX, RedisResponseCache } from '../../src/modules/cache/redis-response-cache';
import { CachedResponse, ResponseCache } from '../../src/modules/cache/response-cache';
import { chat } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

// Redis is optional on a developer's machine; CI and this repo's dev box export TEST_REDIS_URL.
const describeRedis = process.env.TEST_REDIS_URL ? describe : describe.skip;
const MAX_ENTRY_BYTES = 2048;

const runId = randomBytes(6).toString('hex');
let sequence = 0;
/** Keys unique to this run, so a shared Redis is never touched outside them. */
const newKey = (): string => `test-${runId}-${++sequence}`;

function jsonEntry(content = 'Hello!'): CachedResponse {
  const responseBody = { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content } }] };
  return {
    kind: 'json',
    status: 200,
    body: JSON.stringify(responseBody),
    provider: 'openai',
    model: 'gpt-4o-mini',
    servedModel: 'gpt-4o-mini-2024-07-18',
    usage: { promptTokens: 9, completionTokens: 2, totalTokens: 11, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    responseBody,
  };
}

function sseEntry(): CachedResponse {
  return {
    ...jsonEntry(),
    kind: 'sse',
    body: undefined,
    frames: ['data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n', 'data: {"choices":[{"delta":{"content":"lo!"}}]}\n\n', 'data: [DONE]\n\n'],
  };
}

/** `jsonEntry` padded to the largest size that fits in `bytes`; `extra` characters more go over it. */
function entryOfBytes(bytes: number, extra = 0): CachedResponse {
  const base = Buffer.byteLength(JSON.stringify(jsonEntry('')));
  // The content appears twice: in `body` and in `responseBody`.
  return jsonEntry('x'.repeat(Math.floor((bytes - base) / 2) + extra));
}

class TestDatabase {}

/** The real module, configured as the app configures it, on the given DataSource. */
async function openCache(env: Record<string, string>, dataSource: DataSource): Promise<{ cache: ResponseCache; close(): Promise<void> }> {
  const database: DynamicModule = { module: TestDatabase, global: true, providers: [{ provide: DataSource, useValue: dataSource }], exports: [DataSource] };
  const moduleRef = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, skipProcessEnv: true, load: [() => ({ ...validateEnvironment(env) })] }),
      database,
      ResponseCacheModule,
    ],
  }).compile();
  await moduleRef.init();
  return { cache: moduleRef.get(ResponseCache), close: () => moduleRef.close() };
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await work;
  return { value, ms: performance.now() - start };
}

/** What both stores must do: round-trip JSON and SSE entries, and forget them after max_age. */
function itKeepsEntriesForMaxAge(store: () => ResponseCache): void {
  it('misses, stores, then hits a JSON and an SSE entry unchanged', async () => {
    for (const entry of [jsonEntry(), sseEntry()]) {
      const key = newKey();
      expect(await store().get(key)).toBeNull();
      await store().set(key, entry, 60);
      expect(await store().get(key)).toEqual(JSON.parse(JSON.stringify(entry)));
    }
  });

  it('stops answering an entry once max_age has passed', async () => {
    const key = newKey();
    await store().set(key, jsonEntry(), 1);
    expect(await store().get(key)).not.toBeNull();
    await sleep(1100);
    expect(await store().get(key)).toBeNull();
  });
}

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

describe('PostgreSQL response cache', () => {
  let cache: PostgresResponseCache;
  let close: () => Promise<void>;

  const row = async (key: string): Promise<{ expires_in: number } | undefined> =>
    (await gateway.dataSource.query(`select extract(epoch from expires_at - now())::float8 as expires_in from response_cache where key = $1`, [key]))[0];

  beforeAll(async () => {
    const opened = await openCache({ CACHE_MAX_ENTRY_BYTES: String(MAX_ENTRY_BYTES) }, gateway.dataSource);
    close = opened.close;
    expect(opened.cache).toBeInstanceOf(PostgresResponseCache);
    cache = opened.cache as PostgresResponseCache;
  });

  afterAll(async () => {
    await close?.();
  });

  itKeepsEntriesForMaxAge(() => cache);

  it('overwrites an entry, value and expiry', async () => {
    const key = newKey();
    await cache.set(key, jsonEntry('first'), 60);
    await cache.set(key, jsonEntry('second'), 3600);
    expect((await cache.get(key))?.body).toContain('second');
    expect((await row(key))?.expires_in).toBeGreaterThan(3500);
  });

  it('does not store an entry whose JSON is larger than CACHE_MAX_ENTRY_BYTES (counted in bytes)', async () => {
    const [fits, tooBig, multiByte] = [newKey(), newKey(), newKey()];
    const [fitting, over] = [entryOfBytes(MAX_ENTRY_BYTES), entryOfBytes(MAX_ENTRY_BYTES, 1)];
    expect(Buffer.byteLength(JSON.stringify(fitting))).toBeGreaterThanOrEqual(MAX_ENTRY_BYTES - 1);
    expect(Buffer.byteLength(JSON.stringify(over))).toBeGreaterThan(MAX_ENTRY_BYTES);
    await cache.set(fits, fitting, 60);
    await cache.set(tooBig, over, 60);
    // Fewer characters than the limit, more bytes.
    const accented = jsonEntry('é'.repeat(700));
    expect(JSON.stringify(accented).length).toBeLessThan(MAX_ENTRY_BYTES);
    await cache.set(multiByte, accented, 60);

    expect(await cache.get(fits)).not.toBeNull();
    expect(await row(tooBig)).toBeUndefined();
    expect(await row(multiByte)).toBeUndefined();
  });

  it('purges expired rows, in batches, and keeps live ones', async () => {
    const [expired, live] = [newKey(), newKey()];
    await cache.set(expired, jsonEntry(), 60);
    await cache.set(live, jsonEntry(), 60);
    await gateway.dataSource.query(`update response_cache set expires_at = now() - interval '1 minute' where key = $1`, [expired]);
    // More than one purge batch (1000) of expired rows.
    await gateway.dataSource.query(
      `insert into response_cache (key, value, expires_at) select 'bulk-' || i, '{}'::jsonb, now() - interval '1 hour' from generate_series(1, 2500) i`,
    );

    expect(await cache.purgeExpired()).toBeGreaterThanOrEqual(2501);
    const [{ count }] = await gateway.dataSource.query(`select count(*)::int as count from response_cache where expires_at < now()`);
    expect(count).toBe(0);
    expect(await row(expired)).toBeUndefined();
    expect(await cache.get(live)).not.toBeNull();
  });

  it('answers a miss after about 500 ms when the table is locked', async () => {
    const key = newKey();
    await cache.set(key, jsonEntry(), 60);
    const locker = new Client({ connectionString: gateway.databaseUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table response_cache in access exclusive mode');
      const { value, ms } = await timed(cache.get(key));
      expect(value).toBeNull();
      expect(ms).toBeGreaterThanOrEqual(450);
      expect(ms).toBeLessThan(1500);
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
  });

  it('never rejects when the database is gone: misses, and writes are dropped', async () => {
    const gone = new DataSource(dataSourceOptions(gateway.databaseUrl));
    await gone.initialize();
    await gone.destroy();
    const broken = await openCache({}, gone);
    try {
      expect(await broken.cache.get(newKey())).toBeNull();
      await expect(broken.cache.set(newKey(), jsonEntry(), 60)).resolves.toBeUndefined();
      await expect((broken.cache as PostgresResponseCache).purgeExpired()).resolves.toBe(0);
    } finally {
      await broken.close();
    }
  });

  it('has a migration that can be reverted and applied again', async () => {
    const runner = gateway.dataSource.createQueryRunner();
    const exists = async (): Promise<boolean> => (await runner.query(`select to_regclass('response_cache') is not null as exists`))[0].exists;
    await runner.startTransaction();
    try {
      await new ResponseCache1763900000000().down(runner);
      expect(await exists()).toBe(false);
      await new ResponseCache1763900000000().up(runner);
      expect(await exists()).toBe(true);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});

describe('Redis response cache, Redis unreachable', () => {
  it('is chosen when REDIS_URL is set, misses quickly, drops writes and closes', async () => {
    const { cache, close } = await openCache({ REDIS_URL: 'redis://127.0.0.1:1' }, gateway.dataSource);
    expect(cache).toBeInstanceOf(RedisResponseCache);

    const first = await timed(cache.get(newKey()));
    expect(first.value).toBeNull();
    expect(first.ms).toBeLessThan(200);
    await sleep(300); // now between reconnect attempts
    const later = await timed(cache.get(newKey()));
    expect(later.value).toBeNull();
    expect(later.ms).toBeLessThan(200);
    await expect(cache.set(newKey(), jsonEntry(), 60)).resolves.toBeUndefined();

    expect((await timed(close())).ms).toBeLessThan(1000);
  });
});

describeRedis('Redis response cache', () => {
  let cache: ResponseCache;
  let close: () => Promise<void>;
  let redis: Redis;

  beforeAll(async () => {
    const opened = await openCache({ REDIS_URL: process.env.TEST_REDIS_URL!, CACHE_MAX_ENTRY_BYTES: String(MAX_ENTRY_BYTES) }, gateway.dataSource);
    ({ cache, close } = opened);
    expect(cache).toBeInstanceOf(RedisResponseCache);
    redis = new Redis(process.env.TEST_REDIS_URL!);
    // The store connects in the background and misses until it has.
    const probe = newKey();
    for (let tries = 0; tries < 50 && !(await cache.get(probe)); tries++) {
      await cache.set(probe, jsonEntry(), 60);
      await sleep(20);
    }
  });

  afterAll(async () => {
    const keys = await redis.keys(`${REDIS_CACHE_PREFIX}test-${runId}-*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
    await close?.();
  });

  itKeepsEntriesForMaxAge(() => cache);

  it('stores under the gateway:cache: prefix with a millisecond expiry', async () => {
    const key = newKey();
    await cache.set(key, jsonEntry(), 60);
    const ttl = await redis.pttl(`gateway:cache:${key}`);
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('overwrites an entry, value and expiry', async () => {
    const key = newKey();
    await cache.set(key, jsonEntry('first'), 60);
    await cache.set(key, jsonEntry('second'), 3600);
    expect((await cache.get(key))?.body).toContain('second');
    expect(await redis.pttl(REDIS_CACHE_PREFIX + key)).toBeGreaterThan(3_500_000);
  });

  it('does not store an entry whose JSON is larger than CACHE_MAX_ENTRY_BYTES', async () => {
    const [fits, tooBig] = [newKey(), newKey()];
    await cache.set(fits, entryOfBytes(MAX_ENTRY_BYTES), 60);
    await cache.set(tooBig, entryOfBytes(MAX_ENTRY_BYTES, 1), 60);
    expect(await redis.exists(REDIS_CACHE_PREFIX + fits)).toBe(1);
    expect(await redis.exists(REDIS_CACHE_PREFIX + tooBig)).toBe(0);
  });

  it('treats an entry it cannot parse as a miss', async () => {
    const key = newKey();
    await redis.set(REDIS_CACHE_PREFIX + key, 'not json', 'PX', 60_000);
    expect(await cache.get(key)).toBeNull();
  });

  it('answers a miss after about 500 ms when Redis stops answering', async () => {
    const key = newKey();
    await cache.set(key, jsonEntry(), 60);
    // Every client of this Redis waits for 1 s: kept short, the server may be shared.
    await redis.call('client', 'pause', '1000', 'all');
    const { value, ms } = await timed(cache.get(key));
    expect(value).toBeNull();
    expect(ms).toBeGreaterThanOrEqual(450);
    expect(ms).toBeLessThan(1000);
    await sleep(600); // the pause is over
    expect(await cache.get(key)).not.toBeNull();
  });
});

describeRedis('a gateway with REDIS_URL keeps its response cache in Redis', () => {
  let redisGateway: TestGateway;
  let mock: MockUpstream;
  let redis: Redis;

  beforeAll(async () => {
    mock = await startMockUpstream();
    redisGateway = await startTestGateway({ REDIS_URL: process.env.TEST_REDIS_URL! });
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });

  afterAll(async () => {
    await redis?.quit();
    await redisGateway?.close();
    await mock?.close();
  });

  it('MISS then HIT through the gateway, the entry in Redis and none in PostgreSQL', async () => {
    const config = JSON.stringify({ provider: 'openai', api_key: 'sk-redis', custom_host: `${mock.url}/v1`, cache: { mode: 'simple', max_age: 60 } });
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `echo: redis ${runId}` }] };
    const before = (await redis.keys(`${REDIS_CACHE_PREFIX}*`)).length;

    const miss = await chat(redisGateway, { 'x-gateway-config': config }, body);
    // The store connects in the background: until it has, requests are plain misses.
    let hit = await chat(redisGateway, { 'x-gateway-config': config }, body);
    for (let tries = 0; tries < 20 && hit.headers.get('x-gateway-cache-status') !== 'HIT'; tries++) {
      await sleep(50);
      hit = await chat(redisGateway, { 'x-gateway-config': config }, body);
    }
    expect(miss.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(hit.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(hit.body).toEqual(miss.body);
    expect((await redis.keys(`${REDIS_CACHE_PREFIX}*`)).length).toBeGreaterThan(before);
    expect(await redisGateway.dataSource.query('select count(*)::int as n from response_cache')).toEqual([{ n: 0 }]);
    const cachedKeys = await redis.keys(`${REDIS_CACHE_PREFIX}*`);
    const stored = await Promise.all(cachedKeys.map((key) => redis.get(key)));
    expect(stored.some((value) => value?.includes(`redis ${runId}`))).toBe(true);
    expect(stored.some((value) => value?.includes('sk-redis'))).toBe(false);
  });
});
