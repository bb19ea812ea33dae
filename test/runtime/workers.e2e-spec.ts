/**
 * WORKERS=2 (src/cluster.ts): two worker processes on one port behave as one gateway
 * (rate limits across them, `/metrics` summed over both), a worker killed with
 * SIGKILL is replaced and its log journal replayed, SIGTERM ends them all with exit 0.
 * And UPSTREAM_MAX_CONNECTIONS: a request past the limit shows in the metrics.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { createApiKey, createVirtualKey, waitFor, LOGGED_TEXT_SQL } from '../support/e2e-helpers';
import { GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTcpProxy, TcpProxy } from '../support/tcp-proxy';
import { fetchMetrics, startTestGateway, TEST_ADMIN_KEY, TEST_METRICS_TOKEN, TestGateway } from '../support/test-gateway';

const chatBody = (content: string, model = 'gpt-4o-mini', stream = false) =>
  JSON.stringify({ model, messages: [{ role: 'user', content }], ...(stream ? { stream } : {}) });

/** The sum of a metric's samples whose labels include `labels` (e.g. `provider="openai"`). */
function metricSum(text: string, name: string, labels = ''): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('WORKERS=2', () => {
  let proxy: TcpProxy;
  let observer: TestGateway;
  let mock: MockUpstream;
  let journalDir: string;
  let gateway: GatewayProcess;
  const encryptionKey = randomBytes(32).toString('hex');

  beforeAll(async () => {
    const admin = new URL(process.env.TEST_PG_ADMIN_URL!);
    proxy = await startTcpProxy(admin.hostname, Number(admin.port || 5432));
    mock = await startMockUpstream();
    // Owns the test database; the workers reach it through the proxy.
    observer = await startTestGateway({ GATEWAY_ENCRYPTION_KEY: encryptionKey });
    await createVirtualKey(observer, { slug: 'openai-prod', key: 'sk-workers', custom_host: `${mock.url}/v1` });
    journalDir = mkdtempSync(join(tmpdir(), 'gateway-workers-journal-'));
    const url = new URL(observer.databaseUrl);
    url.host = proxy.address;
    gateway = await startGatewayProcess(
      {
        DATABASE_URL: url.toString(),
        GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
        GATEWAY_ENCRYPTION_KEY: encryptionKey,
        LOG_JOURNAL_DIR: journalDir,
        WORKERS: '2',
        SHUTDOWN_DELAY_MS: '0',
        METRICS_TOKEN: TEST_METRICS_TOKEN,
      },
      60_000,
    );
  }, 90_000);

  afterAll(async () => {
    await proxy?.restore();
    await gateway?.stop(5_000);
    await observer?.close();
    await proxy?.close();
    await mock?.close();
    rmSync(journalDir, { recursive: true, force: true });
  });

  /** A connection per request (`connection: close`): the primary hands connections, not requests, to the workers in turn. */
  const send = async (body: string, apiKey = TEST_ADMIN_KEY) => {
    const response = await request(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headersTimeout: 10_000,
      headers: { 'x-gateway-api-key': apiKey, 'x-gateway-virtual-key': 'openai-prod', 'content-type': 'application/json' },
      body,
      reset: true,
    });
    return { status: response.statusCode, worker: Number(response.headers['x-gateway-worker']), text: await response.body.text() };
  };
  const rows = async (text: string) =>
    Number((await observer.dataSource.query(`select count(*)::int as n from request_logs where ${LOGGED_TEXT_SQL} like $1`, [`%${text}%`]))[0].n);
  const metrics = async () => (await fetchMetrics(gateway.url)).text();

  it('serves from both workers, and /metrics counts the requests of both', async () => {
    const workers = new Set<number>();
    let served = 0;
    // The second worker may still be starting: requests go on until both have answered.
    await waitFor(async () => {
      const response = await send(chatBody('both workers'));
      expect(response.status).toBe(200);
      served++;
      workers.add(response.worker);
      return workers.size === 2 || null;
    }, 30_000);
    expect([...workers].every((pid) => pid > 0 && pid !== gateway.child.pid)).toBe(true);

    // Each worker counts its own; whichever answers /metrics reports the sum.
    await waitFor(async () => metricSum(await metrics(), 'gateway_requests_total', 'provider="openai"') === served || null, 10_000);
    await waitFor(async () => (await rows('both workers')) === served || null, 10_000);
  }, 60_000);

  it('holds a rate limit across the workers', async () => {
    const key = await createApiKey(observer, { role: 'user', rate_limits: [{ type: 'requests', unit: 'rpm', value: 3 }] });
    const results: { status: number; worker: number }[] = [];
    for (let i = 0; i < 6; i++) {
      const { status, worker } = await send(chatBody('rate limited'), key.key);
      results.push({ status, worker });
    }
    expect(results.map((result) => result.status)).toEqual([200, 200, 200, 429, 429, 429]);
    expect(new Set(results.map((result) => result.worker)).size).toBe(2);
  });

  it('replaces a worker killed with SIGKILL and replays its journal', async () => {
    await proxy.cut();
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(chatBody('before the kill'))));
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const victim = answers[0].worker;
    expect(new Set(answers.map((answer) => answer.worker)).size).toBe(2);
    await new Promise((r) => setTimeout(r, 100)); // the journal is written at the end of each tick
    expect(readdirSync(journalDir).some((name) => name.includes(`-${victim}-`))).toBe(true);
    process.kill(victim, 'SIGKILL');
    await proxy.restore();

    // A new worker answers, every row reaches the database (the victim's from its journal), and no file is left.
    await waitFor(async () => {
      const response = await send(chatBody('after the kill')).catch(() => null); // a connection the victim held
      return (response?.status === 200 && !answers.some((answer) => answer.worker === response.worker)) || null;
    }, 30_000);
    await waitFor(async () => (await rows('before the kill')) === 20 || null, 20_000);
    await waitFor(() => !readdirSync(journalDir).some((name) => name.includes(`-${victim}-`)) || null, 10_000);
  }, 90_000);

  it('ends every worker on SIGTERM and exits 0', async () => {
    expect(await gateway.stop(30_000)).toBe(0);
    expect(gateway.output()).not.toMatch(/exit code [1-9]/);
  }, 40_000);
});

describe('UPSTREAM_MAX_CONNECTIONS', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ UPSTREAM_MAX_CONNECTIONS: '1' });
    await createVirtualKey(gateway, { slug: 'one-connection', key: 'sk-one', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it('shows a request waiting for a connection in gateway_upstream_waiting_requests', async () => {
    const send = (body: string) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'one-connection', 'content-type': 'application/json' },
        body,
      }).then(async (response) => ({ status: response.status, text: await response.text() }));
    const waitingFor = async () => metricSum(await (await fetchMetrics(gateway.url)).text(), 'gateway_upstream_waiting_requests', 'provider="openai"');

    expect(await waitingFor()).toBe(0);
    // A slow stream holds the only connection; the second request waits behind it.
    const first = send(chatBody('holds the connection', 'mock-slow-400', true));
    await waitFor(() => mock.requests.length === 1 || null, 5_000);
    const second = send(chatBody('waits'));
    await waitFor(async () => (await waitingFor()) === 1 || null, 5_000);
    expect(mock.requests.length).toBe(1);

    const [firstAnswer, secondAnswer] = await Promise.all([first, second]);
    expect(firstAnswer.status).toBe(200);
    expect(firstAnswer.text).toContain('data: [DONE]');
    expect(secondAnswer.status).toBe(200);
    expect(mock.requests.length).toBe(2);
    expect(await waitingFor()).toBe(0);
  });
});
