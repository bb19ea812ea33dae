import { Client } from 'pg';
import { LogWriter } from '../../src/modules/logging/log-writer';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';
import { chat, createApiKey, createVirtualKey, sleep } from '../support/e2e-helpers';

/**
 * `last_used_at` on API keys and virtual keys (issue 25): set by the log writer per stored
 * batch, never on the request path, and never at the cost of a log row.
 */
describe('last used on keys', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let apiKey: { id: string; key: string };
  let virtualKeyId: string;

  // The writer flushes only when told: each flushLogs() is one batch of everything queued.
  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ LOG_FLUSH_INTERVAL_MS: '60000', LOG_BATCH_SIZE: '500' });
    apiKey = await createApiKey(gateway, { name: 'used key' });
    virtualKeyId = (await createVirtualKey(gateway, { slug: 'used-vk', key: 'sk-last-used-000000', custom_host: `${mock.url}/v1` })).id;
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const request = async () => {
    const response = await chat(gateway, { 'x-gateway-virtual-key': 'used-vk' }, {}, apiKey.key);
    expect(response.status).toBe(200);
    return response.headers.get('x-gateway-request-id')!;
  };
  const lastUsed = async () => {
    const key = await admin(gateway, 'GET', `/v1/api-keys/${apiKey.id}`);
    const vk = await admin(gateway, 'GET', `/v1/virtual-keys/${virtualKeyId}`);
    const listedKey = (await admin(gateway, 'GET', '/v1/api-keys')).body.data.find((k: any) => k.id === apiKey.id);
    const listedVk = (await admin(gateway, 'GET', '/v1/virtual-keys')).body.data.find((k: any) => k.id === virtualKeyId);
    expect(listedKey.last_used_at).toBe(key.body.last_used_at);
    expect(listedVk.last_used_at).toBe(vk.body.last_used_at);
    return { apiKey: key.body.last_used_at as string | null, virtualKey: vk.body.last_used_at as string | null };
  };
  const newestRow = async (): Promise<string> => {
    const [row] = await gateway.dataSource.query(`select max(created_at) as at from request_logs where api_key_id = $1 and virtual_key_id = $2`, [
      apiKey.id,
      virtualKeyId,
    ]);
    return new Date(row.at).toISOString();
  };
  const rowCount = async (id: string): Promise<number> =>
    Number((await gateway.dataSource.query(`select count(*) as n from request_logs where id = $1`, [id]))[0].n);

  it('is null before the key is used', async () => {
    expect(await lastUsed()).toEqual({ apiKey: null, virtualKey: null });
  });

  it('is the time of the request once its log row is stored, and later after a later request', async () => {
    await request();
    expect(await lastUsed()).toEqual({ apiKey: null, virtualKey: null }); // queued, not stored yet: nothing on the request path
    await gateway.flushLogs();
    const first = await lastUsed();
    expect(first.apiKey).toBe(await newestRow());
    expect(first.virtualKey).toBe(first.apiKey);

    await sleep(5);
    await request();
    await gateway.flushLogs();
    const second = await lastUsed();
    expect(second.apiKey).toBe(await newestRow());
    expect(Date.parse(second.apiKey!)).toBeGreaterThan(Date.parse(first.apiKey!));
    expect(second.virtualKey).toBe(second.apiKey);
  });

  it('takes the newest of many rows of one key in one batch', async () => {
    const before = (await lastUsed()).apiKey!;
    const ids = await Promise.all(Array.from({ length: 25 }, () => request()));
    expect(gateway.app.get(LogWriter).pending()).toBeGreaterThanOrEqual(25);
    await gateway.flushLogs();
    const [{ n }] = await gateway.dataSource.query(`select count(*)::int as n from request_logs where id = any($1::uuid[])`, [ids]);
    expect(n).toBe(25);
    const after = await lastUsed();
    expect(after.apiKey).toBe(await newestRow());
    expect(Date.parse(after.apiKey!)).toBeGreaterThan(Date.parse(before));
    expect(after.virtualKey).toBe(after.apiKey);
  });

  it('a locked key row neither blocks nor loses log rows; the next batch sets it', async () => {
    const before = await lastUsed();
    const locker = new Client({ connectionString: gateway.databaseUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('select 1 from api_keys where id = $1 for update', [apiKey.id]);
      const id = await request();
      const flushed = await Promise.race([gateway.flushLogs().then(() => 'flushed'), sleep(5000).then(() => 'blocked')]);
      expect(flushed).toBe('flushed');
      expect(await rowCount(id)).toBe(1);
      const during = await lastUsed();
      expect(during.apiKey).toBe(before.apiKey); // skipped, not waited for
      expect(during.virtualKey).toBe(await newestRow()); // the other key of the batch is still set
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    await request();
    await gateway.flushLogs();
    expect((await lastUsed()).apiKey).toBe(await newestRow());
  });

  it('when the update fails the log rows are still stored and nothing stays queued', async () => {
    // On this test file's own throwaway database: any change of last_used_at raises.
    await gateway.dataSource.query(
      `create function refuse_last_used() returns trigger language plpgsql as $$ begin raise exception 'last_used_at refused'; end $$`,
    );
    await gateway.dataSource.query(
      `create trigger refuse_last_used before update of last_used_at on api_keys for each row execute function refuse_last_used()`,
    );
    const before = await lastUsed();
    const ids = await Promise.all(Array.from({ length: 3 }, () => request()));
    await gateway.flushLogs();
    for (const id of ids) expect(await rowCount(id)).toBe(1);
    const writer = gateway.app.get(LogWriter);
    expect(writer.pending()).toBe(0);
    expect((await lastUsed()).apiKey).toBe(before.apiKey);
    // The writer goes on with the next batch as usual.
    await gateway.dataSource.query('drop trigger refuse_last_used on api_keys');
    const next = await request();
    await gateway.flushLogs();
    expect(await rowCount(next)).toBe(1);
    expect((await lastUsed()).apiKey).toBe(await newestRow());
  });
});
