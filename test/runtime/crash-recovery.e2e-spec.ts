/**
 * `kill -9` of a gateway process whose log rows are waiting (its database is
 * unreachable at that moment): the next process on the same journal directory
 * replays them at start, so every request served has its row; and SIGTERM lets an
 * open stream finish, writes the logs, and exits 0.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createVirtualKey, waitFor, LOGGED_TEXT_SQL } from '../support/e2e-helpers';
import { GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTcpProxy, TcpProxy } from '../support/tcp-proxy';
import { startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });

describe('a gateway process that crashes or is stopped', () => {
  let proxy: TcpProxy;
  let observer: TestGateway;
  let mock: MockUpstream;
  let journalDir: string;
  const processes: GatewayProcess[] = [];
  const encryptionKey = randomBytes(32).toString('hex');

  beforeAll(async () => {
    const admin = new URL(process.env.TEST_PG_ADMIN_URL!);
    proxy = await startTcpProxy(admin.hostname, Number(admin.port || 5432));
    mock = await startMockUpstream();
    // Owns the test database; the processes reach it through the proxy.
    observer = await startTestGateway({ GATEWAY_ENCRYPTION_KEY: encryptionKey });
    await createVirtualKey(observer, { slug: 'openai-prod', key: 'sk-crash', custom_host: `${mock.url}/v1` });
    journalDir = mkdtempSync(join(tmpdir(), 'gateway-crash-journal-'));
  });

  afterAll(async () => {
    await proxy?.restore();
    for (const child of processes) await child.stop(2_000);
    await observer?.close();
    await proxy?.close();
    await mock?.close();
    rmSync(journalDir, { recursive: true, force: true });
  });

  const start = async (env: Record<string, string> = {}) => {
    const url = new URL(observer.databaseUrl);
    url.host = proxy.address;
    const child = await startGatewayProcess({
      DATABASE_URL: url.toString(),
      GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
      GATEWAY_ENCRYPTION_KEY: encryptionKey,
      LOG_JOURNAL_DIR: journalDir,
      ...env,
    });
    processes.push(child);
    return child;
  };
  const send = (child: GatewayProcess, body = CHAT) =>
    fetch(`${child.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-virtual-key': 'openai-prod', 'content-type': 'application/json' },
      body,
    });
  const rows = async (text: string) =>
    Number((await observer.dataSource.query(`select count(*)::int as n from request_logs where ${LOGGED_TEXT_SQL} like $1`, [`%${text}%`]))[0].n);

  it('kill -9 loses no log row that was journaled: the next process replays them at start', async () => {
    const first = await start();
    expect((await send(first)).status).toBe(200); // keys now cached

    await proxy.cut();
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'before the crash' }] });
    const statuses = await Promise.all(Array.from({ length: 40 }, () => send(first, body).then((r) => r.status)));
    expect(statuses).toEqual(Array(40).fill(200));
    await new Promise((r) => setTimeout(r, 100)); // the journal is written at the end of each tick
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(readdirSync(journalDir).length).toBeGreaterThan(0);
    expect(await rows('before the crash')).toBe(0);

    await proxy.restore();
    await start();
    await waitFor(async () => (await rows('before the crash')) === 40 || null, 15_000);
    await waitFor(() => readdirSync(journalDir).length === 0 || null, 5_000);
  });

  it('SIGTERM lets an open stream finish, writes its log row, and exits 0', async () => {
    const child = await start();
    // mock-slow-200: the mock sends its chunks 200 ms apart.
    const body = JSON.stringify({ model: 'mock-slow-200', stream: true, messages: [{ role: 'user', content: 'stream during shutdown' }] });
    const response = await send(child, body);
    expect(response.status).toBe(200);
    child.child.kill('SIGTERM');
    const text = await response.text();
    expect(text).toContain('data: [DONE]');
    expect(await child.exited).toBe(0);
    expect(await rows('stream during shutdown')).toBe(1);
    await expect(fetch(`${child.url}/health`)).rejects.toThrow();
  });

  it('SIGTERM ends a stream that outlives SHUTDOWN_GRACE_MS with an error event, still writes its row, and exits 0', async () => {
    const child = await start({ SHUTDOWN_GRACE_MS: '300' });
    // mock-slow-1000: a chunk a second, far longer than the grace period.
    const body = JSON.stringify({ model: 'mock-slow-1000', stream: true, messages: [{ role: 'user', content: 'stream past the grace period' }] });
    const response = await send(child, body);
    expect(response.status).toBe(200);
    const stoppedAt = Date.now();
    child.child.kill('SIGTERM');
    expect(await response.text()).toContain('"code":"shutting_down"');
    expect(await child.exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(3_000);
    const [row] = await observer.dataSource.query(`select error from request_logs where ${LOGGED_TEXT_SQL} like '%stream past the grace period%'`);
    expect(row.error).toMatchObject({ code: 'shutting_down' });
  });
});
