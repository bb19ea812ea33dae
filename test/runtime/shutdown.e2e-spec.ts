/**
 * Deploying without dropping anything (CONTRACT section 11, "Readiness" / "Shutdown"):
 * a real gateway process gets SIGTERM with streams in flight. /health/ready says 503 at
 * once, new requests are still served for SHUTDOWN_DELAY_MS, then new connections are
 * refused; a stream that ends within SHUTDOWN_GRACE_MS completes, one that does not ends
 * with an error event; every row is written and the process exits 0.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { createVirtualKey, waitFor, LOGGED_TEXT_SQL } from '../support/e2e-helpers';
import { GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

const DELAY_MS = 800;
const GRACE_MS = 4_000;

describe('a gateway process stopped with SIGTERM', () => {
  let observer: TestGateway;
  let mock: MockUpstream;
  const processes: GatewayProcess[] = [];
  const encryptionKey = randomBytes(32).toString('hex');

  beforeAll(async () => {
    mock = await startMockUpstream();
    // Owns the test database, which the processes share.
    observer = await startTestGateway({ GATEWAY_ENCRYPTION_KEY: encryptionKey });
    await createVirtualKey(observer, { slug: 'openai-prod', key: 'sk-shutdown', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    for (const child of processes) await child.stop(2_000);
    await observer?.close();
    await mock?.close();
  });

  const start = async (env: Record<string, string>) => {
    const child = await startGatewayProcess({
      DATABASE_URL: observer.databaseUrl,
      GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
      GATEWAY_ENCRYPTION_KEY: encryptionKey,
      ...env,
    });
    processes.push(child);
    return child;
  };
  /** A chat request; `model` mock-slow-<ms> streams its chunks (one per word of the echoed text) that far apart. */
  const send = (child: GatewayProcess, content: string, model = 'gpt-4o-mini', stream = false) =>
    fetch(`${child.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-virtual-key': 'openai-prod', 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content }] }),
    });
  const rowOf = async (marker: string): Promise<{ status_code: number; error: { code?: string } | null } | undefined> =>
    (await observer.dataSource.query(`select status_code, error from request_logs where ${LOGGED_TEXT_SQL} like $1`, [`%${marker}%`]))[0];
  /** Resolves with the error code of a new TCP connection to the process, or 'connected'. */
  const tryConnect = (child: GatewayProcess) =>
    new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(child.url).port), '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });

  it('answers /health/ready 503 at once, serves new requests for SHUTDOWN_DELAY_MS, then refuses connections; streams finish or end with an error event; every row is written; exit 0', async () => {
    const child = await start({ SHUTDOWN_DELAY_MS: String(DELAY_MS), SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    const ready = await fetch(`${child.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });

    // About 3 s (ten events 300 ms apart): ends within the grace period.
    const finishing = await send(child, 'echo: finishing stream one two three four five six seven', 'mock-slow-300', true);
    // About 20 s: still open at the grace deadline.
    const overlong = await send(child, `echo: overlong stream ${'word '.repeat(20)}`, 'mock-slow-1000', true);
    expect([finishing.status, overlong.status]).toEqual([200, 200]);
    const finishingText = finishing.text();
    const overlongText = overlong.text();
    // A plain request whose provider never answers: still waiting at the grace deadline.
    const waiting = send(child, 'never answered before the deadline', 'mock-hang');

    const signalledAt = Date.now();
    child.child.kill('SIGTERM');
    await waitFor(() => child.output().includes('SIGTERM: /health/ready answers 503'), 2_000);

    const notReady = await fetch(`${child.url}/health/ready`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({
      error: { message: expect.stringContaining('shutting down'), type: 'service_unavailable', param: null, code: 'shutting_down' },
    });
    expect((await fetch(`${child.url}/health`)).status).toBe(200); // still alive

    // A load balancer that has not noticed yet: still served, and told to reconnect.
    const late = await send(child, 'sent during the shutdown delay');
    expect(late.status).toBe(200);
    expect(late.headers.get('connection')).toBe('close');

    // Past the delay the listener is closed (the streams go on).
    await new Promise((r) => setTimeout(r, signalledAt + DELAY_MS - Date.now()));
    await waitFor(async () => (await tryConnect(child)) === 'ECONNREFUSED', 2_000);

    const finished = await finishingText;
    expect(finished).toContain('data: [DONE]');
    expect(finished).not.toContain('shutting_down');
    const cut = await overlongText;
    expect(cut).not.toContain('[DONE]');
    expect(cut).toMatch(/data: \{"error":\{"message":"[^"]+","type":"service_unavailable","param":null,"code":"shutting_down"\}\}\n\n$/);
    // It gets a 503 it can retry on another instance, not a connection closed under it.
    const unanswered = await waiting;
    expect(unanswered.status).toBe(503);
    expect(((await unanswered.json()) as { error: unknown }).error).toMatchObject({
      type: 'service_unavailable',
      code: 'shutting_down',
      message: expect.stringContaining('before the provider answered'),
    });

    expect(await child.exited).toBe(0);
    const stoppedAfter = Date.now() - signalledAt;
    expect(stoppedAfter).toBeGreaterThanOrEqual(GRACE_MS - 100);
    expect(stoppedAfter).toBeLessThan(GRACE_MS + 2_500);

    // Written before the exit: no waiting here.
    expect(await rowOf('finishing stream')).toEqual({ status_code: 200, error: null });
    expect(await rowOf('overlong stream')).toMatchObject({ status_code: 200, error: { code: 'shutting_down' } });
    expect(await rowOf('sent during the shutdown delay')).toEqual({ status_code: 200, error: null });
    expect(await rowOf('never answered before the deadline')).toMatchObject({ status_code: 503, error: { code: 'shutting_down' } });
  }, 90_000); // the first process start builds the gateway when dist/ is stale

  it('a second SIGTERM or a SIGINT during the wait still lets the stream finish and its row be written', async () => {
    const child = await start({ SHUTDOWN_GRACE_MS: '5000' });
    const response = await send(child, 'echo: second signal stream one two three', 'mock-slow-200', true);
    expect(response.status).toBe(200);
    const text = response.text();
    child.child.kill('SIGTERM');
    await waitFor(() => child.output().includes('SIGTERM: /health/ready answers 503'), 2_000);
    child.child.kill('SIGTERM');
    child.child.kill('SIGINT');
    await waitFor(() => child.output().includes('SIGINT: already shutting down'), 2_000);
    expect(await text).toContain('data: [DONE]');
    expect(await child.exited).toBe(0);
    expect(await rowOf('second signal stream')).toEqual({ status_code: 200, error: null });
  });
});
