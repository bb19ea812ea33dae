/**
 * `/metrics` tells cost by provider and model, error codes and request counts: not for
 * anyone who can reach the gateway (CONTRACT section 15, issue 32 item 9). With neither
 * METRICS_TOKEN nor METRICS_PORT it is not served; with the token it needs
 * `Authorization: Bearer`; with METRICS_PORT it is served on that listener only
 * (loopback by default), in a cluster by the primary, summed over the workers.
 * `/docs` stays public unless DOCS_ENABLED=false.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { createVirtualKey, waitFor } from '../support/e2e-helpers';
import { freePort, GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { fetchMetrics, startTestGateway, TEST_ADMIN_KEY, TEST_METRICS_TOKEN, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

const withAuthorization = (url: string, authorization: string) => fetch(`${url}/metrics`, { headers: { authorization } });

async function expectError(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(((await response.json()) as { error: unknown }).error).toMatchObject({ code, message: expect.any(String), type: expect.any(String) });
}

describe('/metrics access', () => {
  const gateways: TestGateway[] = [];
  const start = async (env: Record<string, string>) => {
    const gateway = await startTestGateway(env);
    gateways.push(gateway);
    return gateway;
  };
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
  });

  it('with neither METRICS_TOKEN nor METRICS_PORT: 404 as for an unknown route, with or without a token', async () => {
    const gateway = await start({ METRICS_TOKEN: '' });
    await expectError(await fetch(`${gateway.url}/metrics`), 404, 'route_not_found');
    await expectError(await fetchMetrics(gateway.url), 404, 'route_not_found');
  });

  it('with METRICS_TOKEN: 401 in the OpenAI shape without it or with a wrong one, 200 with it', async () => {
    const gateway = await start({ METRICS_TOKEN: TEST_METRICS_TOKEN });
    const missing = await fetch(`${gateway.url}/metrics`);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    await expectError(missing, 401, 'invalid_metrics_token');
    await expectError(await fetchMetrics(gateway.url, `${TEST_METRICS_TOKEN}x`), 401, 'invalid_metrics_token');
    await expectError(await fetchMetrics(gateway.url, TEST_METRICS_TOKEN.slice(0, -1)), 401, 'invalid_metrics_token');
    await expectError(await withAuthorization(gateway.url, `Basic ${Buffer.from(`x:${TEST_METRICS_TOKEN}`).toString('base64')}`), 401, 'invalid_metrics_token');
    // The gateway's admin key is not the metrics token.
    await expectError(await fetchMetrics(gateway.url, TEST_ADMIN_KEY), 401, 'invalid_metrics_token');

    const allowed = await withAuthorization(gateway.url, `bearer ${TEST_METRICS_TOKEN}`);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await allowed.text()).toContain('gateway_requests_total');
  });

  it('with METRICS_PORT: served on its own loopback listener only; the main port answers 404', async () => {
    const port = await freePort();
    const gateway = await start({ METRICS_TOKEN: '', METRICS_PORT: String(port) });
    const metricsUrl = `http://127.0.0.1:${port}`;
    const served = await fetch(`${metricsUrl}/metrics`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await served.text()).toContain('process_cpu_seconds_total');
    await expectError(await fetch(`${gateway.url}/metrics`), 404, 'route_not_found');
    // The listener serves /metrics and nothing else of the gateway.
    await expectError(await fetch(`${metricsUrl}/health`), 404, 'route_not_found');
    await expectError(await fetch(`${metricsUrl}/v1/models`), 404, 'route_not_found');
    await expectError(await fetch(`${metricsUrl}/metrics`, { method: 'POST' }), 404, 'route_not_found');
  });

  it('with METRICS_PORT and METRICS_TOKEN: the listener needs the token; the main port answers 404 even with it', async () => {
    const port = await freePort();
    const gateway = await start({ METRICS_TOKEN: TEST_METRICS_TOKEN, METRICS_PORT: String(port) });
    const metricsUrl = `http://127.0.0.1:${port}`;
    await expectError(await fetch(`${metricsUrl}/metrics`), 401, 'invalid_metrics_token');
    await expectError(await fetchMetrics(metricsUrl, 'wrong-token-0123456789'), 401, 'invalid_metrics_token');
    expect((await fetchMetrics(metricsUrl)).status).toBe(200);
    await expectError(await fetchMetrics(gateway.url), 404, 'route_not_found');
  });

  it('the listener closes with the gateway', async () => {
    const port = await freePort();
    const gateway = await startTestGateway({ METRICS_TOKEN: '', METRICS_PORT: String(port) });
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await gateway.close();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('/docs stays public unless DOCS_ENABLED=false', async () => {
    const open = await start({});
    expect((await fetch(`${open.url}/docs-json`)).status).toBe(200);
    const closed = await start({ DOCS_ENABLED: 'false' });
    await expectError(await fetch(`${closed.url}/docs-json`), 404, 'route_not_found');
    expect((await fetch(`${closed.url}/docs`)).status).toBe(404);
  });
});

describe('/metrics on METRICS_PORT with WORKERS=2', () => {
  let observer: TestGateway;
  let mock: MockUpstream;
  let cluster: GatewayProcess;
  let metricsUrl: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const encryptionKey = randomBytes(32).toString('hex');
    // Owns the test database; the cluster's workers use it too.
    observer = await startTestGateway({ GATEWAY_ENCRYPTION_KEY: encryptionKey });
    await createVirtualKey(observer, { slug: 'openai-prod', key: 'sk-metrics', custom_host: `${mock.url}/v1` });
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}`;
    cluster = await startGatewayProcess(
      {
        DATABASE_URL: observer.databaseUrl,
        GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
        GATEWAY_ENCRYPTION_KEY: encryptionKey,
        WORKERS: '2',
        METRICS_PORT: String(port),
        METRICS_TOKEN: TEST_METRICS_TOKEN,
      },
      60_000,
    );
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop(5_000);
    await observer?.close();
    await mock?.close();
  });

  it("the primary serves it, counting every worker's requests; no worker serves it on the main port", async () => {
    const served = async () => {
      const text = await (await fetchMetrics(metricsUrl)).text();
      const line = text.split('\n').find((l) => l.startsWith('gateway_requests_total{operation="chat.completions",provider="openai",status="200"}'));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    // A connection per request: the primary hands connections, not requests, to the workers in turn.
    const send = async () => {
      const response = await request(`${cluster.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-virtual-key': 'openai-prod', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
        reset: true,
      });
      await response.body.text();
      expect(response.statusCode).toBe(200);
      return response.headers['x-gateway-worker'];
    };
    const workers = new Set<unknown>();
    let sent = 0;
    // The second worker may still be starting: requests go on until both have answered.
    await waitFor(async () => {
      workers.add(await send());
      sent++;
      return workers.size === 2 || null;
    }, 20_000);
    // The rows (and so the metrics) are counted once each response has closed.
    await waitFor(async () => (await served()) === sent || null, 10_000);
    await expectError(await fetch(`${metricsUrl}/metrics`), 401, 'invalid_metrics_token');
    for (let i = 0; i < 4; i++) await expectError(await fetchMetrics(cluster.url), 404, 'route_not_found');
  });
});
