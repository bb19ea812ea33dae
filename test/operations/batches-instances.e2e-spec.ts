/**
 * A gateway-run batch across instances and restarts (CONTRACT section 17): gateway
 * processes sharing one database send each line once, at most BATCH_CONCURRENCY at a time
 * over all of them; a process stopped gracefully finishes its lines in flight; a process
 * killed mid-batch loses no line and repeats none (the lines it had in flight end as
 * `line_interrupted`, since the provider may have run them); a restarted one goes on.
 * The mock upstream counts what it received.
 */
import OpenAI, { toFile } from 'openai';
import { createVirtualKey, waitFor } from '../support/e2e-helpers';
import { GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

const ENCRYPTION_KEY = 'ab'.repeat(32);
const CONCURRENCY = 3;
// No yielding to interactive traffic here (BATCH_YIELD_UTILIZATION=1): on a loaded machine it would hold the batch to one line at a time.
const PROCESS_ENV = {
  BATCH_POLL_MS: '50',
  BATCH_CONCURRENCY: String(CONCURRENCY),
  BATCH_LEASE_SECONDS: '1',
  BATCH_YIELD_UTILIZATION: '1',
  GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
};

const lineText = (i: number) => `line ${i} of the batch`;
const jsonl = (count: number, model: string) =>
  Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      custom_id: `c-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model, messages: [{ role: 'user', content: `echo: ${lineText(i)}` }] },
    }),
  ).join('\n');

describe('Batches across instances and restarts (e2e)', () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  const processes: GatewayProcess[] = [];

  const start = async () => {
    const child = await startGatewayProcess({ DATABASE_URL: gateway.databaseUrl, GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY, ...PROCESS_ENV });
    processes.push(child);
    return child;
  };
  const clientOf = (url: string) =>
    new OpenAI({
      baseURL: `${url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-virtual-key': 'groq' },
    });
  /** How many times the mock received each line, by its text. */
  const received = () => {
    const counts = new Map<string, number>();
    for (const request of mock.requests) {
      const content = request.body?.messages?.[0]?.content;
      if (typeof content !== 'string') continue;
      const text = content.replace(/^echo: /, '');
      counts.set(text, (counts.get(text) ?? 0) + 1);
    }
    return counts;
  };
  async function createBatch(client: OpenAI, count: number, model: string): Promise<OpenAI.Batch> {
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(count, model)), 'lines.jsonl'), purpose: 'batch' });
    return client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  }
  async function finished(client: OpenAI, id: string): Promise<OpenAI.Batch> {
    return waitFor(async () => {
      const batch = await client.batches.retrieve(id);
      return batch.status === 'completed' ? batch : null;
    }, 60_000);
  }
  async function fileLines(client: OpenAI, id: string | null | undefined): Promise<any[]> {
    if (!id) return [];
    return (await (await client.files.content(id)).text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    // This in-process gateway only makes the database; its runner never ticks.
    gateway = await startTestGateway({ BATCH_POLL_MS: '3600000', GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    await createVirtualKey(gateway, { slug: 'groq', provider: 'groq', key: 'gsk-batch-000000', custom_host: `${mock.url}/openai/v1` });
  }, 60_000);

  afterEach(async () => {
    await Promise.all(processes.splice(0).map((child) => child.stop(5_000)));
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it('two instances share a batch: every line sent once, at most BATCH_CONCURRENCY in flight over both', async () => {
    mock.reset();
    const [a, b] = await Promise.all([start(), start()]);
    const client = clientOf(a.url);
    const batch = await createBatch(client, 24, 'mock-slow-150');
    const done = await finished(clientOf(b.url), batch.id);
    expect(done.request_counts).toEqual({ total: 24, completed: 24, failed: 0 });
    const counts = received();
    expect(Array.from({ length: 24 }, (_, i) => counts.get(lineText(i)))).toEqual(Array(24).fill(1));

    // The lines' log rows: never more than CONCURRENCY of them open at once.
    // Written by the two processes' own log writers, a moment after their lines ended.
    const rows = await waitFor(async () => {
      const data = (await admin(gateway, 'GET', `/v1/logs?batch_id=${batch.id}&limit=100`)).body.data as { created_at: string; latency_ms: number }[];
      return data.length === 24 ? data : null;
    }, 10_000);
    const events = rows.flatMap((row) => {
      const start = Date.parse(row.created_at);
      return [
        [start, 1],
        [start + row.latency_ms, -1],
      ];
    });
    events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    let open = 0;
    let most = 0;
    for (const [, delta] of events) most = Math.max(most, (open += delta));
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(CONCURRENCY);
  }, 90_000);

  it('a gracefully stopped instance finishes its lines in flight; another goes on', async () => {
    mock.reset();
    const a = await start();
    const batch = await createBatch(clientOf(a.url), 9, 'mock-slow-600');
    await waitFor(() => mock.requests.length >= CONCURRENCY, 10_000);
    const stopped = a.stop(20_000);
    const b = await start();
    expect(await stopped).toBe(0);
    const done = await finished(clientOf(b.url), batch.id);
    expect(done.request_counts).toEqual({ total: 9, completed: 9, failed: 0 });
    const counts = received();
    expect(Array.from({ length: 9 }, (_, i) => counts.get(lineText(i)))).toEqual(Array(9).fill(1));
  }, 90_000);

  it('an instance killed mid-batch loses no line and repeats none; a restarted one finishes the batch', async () => {
    mock.reset();
    const a = await start();
    const batch = await createBatch(clientOf(a.url), 9, 'mock-slow-1500');
    await waitFor(() => mock.requests.length >= CONCURRENCY, 10_000);
    a.child.kill('SIGKILL');
    await a.exited;
    const inFlight = mock.requests.length;
    const b = await start();
    const client = clientOf(b.url);
    const done = await finished(client, batch.id);

    const output = await fileLines(client, done.output_file_id);
    const errors = await fileLines(client, done.error_file_id);
    // Every line is accounted for once: answered, or interrupted.
    expect([...output, ...errors].map((line) => line.custom_id).sort()).toEqual(Array.from({ length: 9 }, (_, i) => `c-${i}`).sort());
    expect(errors.length).toBe(inFlight);
    expect(errors.every((line) => line.error?.code === 'line_interrupted' && line.response === null)).toBe(true);
    expect(output.every((line) => line.response.status_code === 200)).toBe(true);
    // None was sent twice: the interrupted ones were not sent again.
    const counts = received();
    expect(Array.from({ length: 9 }, (_, i) => counts.get(lineText(i)))).toEqual(Array(9).fill(1));
  }, 90_000);
});
