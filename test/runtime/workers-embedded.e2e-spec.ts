/**
 * WORKERS=2 on a fresh machine (no DATABASE_URL): the primary starts the embedded
 * PostgreSQL once and runs the migrations, both workers serve and log into it through
 * the URL it hands them, and SIGTERM ends the workers, then the database, with exit 0.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { waitFor } from '../support/e2e-helpers';
import { GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { TEST_ADMIN_KEY } from '../support/test-gateway';

describe('WORKERS=2 with the embedded PostgreSQL', () => {
  let mock: MockUpstream;
  let dataDir: string;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    mock = await startMockUpstream();
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-workers-embedded-'));
    // Reachable for the postgres OS user (run as root), so the cluster lives in this folder.
    chmodSync(dataDir, 0o755);
  });

  afterAll(async () => {
    await gateway?.stop(20_000);
    await mock?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = async (path: string, init: { method?: string; body?: unknown } = {}) => {
    const response = await request(`${gateway!.url}${path}`, {
      method: (init.method ?? 'GET') as 'GET',
      headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      reset: true, // a connection per request: the primary hands connections to the workers in turn
    });
    return { status: response.statusCode, worker: Number(response.headers['x-gateway-worker']), body: (await response.body.json()) as any };
  };

  it('starts the database once, serves and logs from both workers, and stops everything on SIGTERM', async () => {
    gateway = await startGatewayProcess(
      { WORKERS: '2', DATA_DIR: dataDir, GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY, LOG_JOURNAL_DIR: join(dataDir, 'journal') },
      120_000,
    );
    const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
    expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    expect(existsSync(pidFile)).toBe(true);

    expect(
      (
        await call('/v1/virtual-keys', {
          method: 'POST',
          body: { name: 'mock', slug: 'openai-prod', provider: 'openai', key: 'sk-embedded', custom_host: `${mock.url}/v1` },
        })
      ).status,
    ).toBe(201);
    const workers = new Set<number>();
    const sent: string[] = [];
    await waitFor(async () => {
      const content = `embedded ${sent.length}`;
      const response = await request(`${gateway!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-virtual-key': 'openai-prod', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
        reset: true,
      });
      await response.body.text();
      expect(response.statusCode).toBe(200);
      sent.push(content);
      workers.add(Number(response.headers['x-gateway-worker']));
      return workers.size === 2 || null;
    }, 30_000);
    expect(workers.has(gateway.child.pid!)).toBe(false);

    // Every request's row is in the one database, whichever worker wrote it.
    await waitFor(async () => {
      const logs = await call('/v1/logs?operation=chat.completions&limit=500');
      return logs.body.data.length === sent.length || null;
    }, 15_000);

    expect(await gateway.stop(30_000)).toBe(0);
    gateway = undefined;
    // The primary stopped the database it started.
    expect(existsSync(pidFile)).toBe(false);
  }, 180_000);
});
