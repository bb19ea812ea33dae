/**
 * What operators watch: Prometheus metrics at /metrics (behind METRICS_TOKEN here; requests, errors, latency,
 * upstream latency, tokens and cost by provider and model, log queue and journal), and
 * JSON log lines carrying the trace id and no secret.
 */
import { randomBytes } from 'node:crypto';
import { call, createVirtualKey } from '../support/e2e-helpers';
import { startGatewayProcess } from '../support/gateway-process';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { fetchMetrics, startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

const PROVIDER_SECRET = 'sk-observability-secret-0123456789';

/** The value of one sample line of the exposition text, e.g. `name{a="b"}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('observability', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-prod', key: PROVIDER_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'nowhere', key: PROVIDER_SECRET, custom_host: 'http://127.0.0.1:9/v1' });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const chat = (slug: string, model: string) =>
    call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-virtual-key': slug },
      body: { model, messages: [{ role: 'user', content: 'x'.repeat(400) }] },
    });

  it('exposes requests, errors, latencies, tokens and cost by provider and model, and the log queue and journal', async () => {
    expect((await chat('openai-prod', 'gpt-4o-mini')).status).toBe(200);
    expect((await chat('openai-prod', 'mock-error-429')).status).toBe(429);
    expect((await chat('openai-prod', 'someones-own-model-name')).status).toBe(200);
    expect((await chat('nowhere', 'gpt-4o-mini')).status).toBe(502);
    await gateway.flushLogs();

    const response = await fetchMetrics(gateway.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(sample(text, 'gateway_requests_total{operation="chat.completions",provider="openai",status="200"}')).toBe(2);
    expect(sample(text, 'gateway_requests_total{operation="chat.completions",provider="openai",status="429"}')).toBe(1);
    expect(sample(text, 'gateway_request_errors_total{operation="chat.completions",provider="openai",code="429"}')).toBe(1);
    expect(sample(text, 'gateway_request_errors_total{operation="chat.completions",provider="openai",code="upstream_unreachable"}')).toBe(1);
    expect(sample(text, 'gateway_request_duration_seconds_count{operation="chat.completions",provider="openai"}')).toBe(4);
    expect(sample(text, 'gateway_upstream_duration_seconds_count{provider="openai",status="200"}')).toBe(2);
    expect(sample(text, 'gateway_upstream_duration_seconds_count{provider="openai",status="failed"}')).toBe(1);
    // 400 characters: the mock counts 100 prompt tokens and answers with 3.
    expect(sample(text, 'gateway_tokens_total{provider="openai",model="gpt-4o-mini",kind="prompt"}')).toBe(100);
    expect(sample(text, 'gateway_tokens_total{provider="openai",model="gpt-4o-mini",kind="completion"}')).toBe(3);
    expect(sample(text, 'gateway_cost_usd_total{provider="openai",model="gpt-4o-mini"}')).toBeCloseTo((100 * 0.15 + 3 * 0.6) / 1e6, 12);
    // A model without a price is not a label of its own: clients cannot blow up the series.
    expect(text).not.toContain('someones-own-model-name');
    expect(sample(text, 'gateway_tokens_total{provider="openai",model="other",kind="prompt"}')).toBe(100);
    expect(sample(text, 'gateway_log_queue_depth')).toBe(0);
    expect(sample(text, 'gateway_log_journal_bytes')).toBe(0);
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('writes JSON log lines with the trace id of a failed request, and no secret', async () => {
    const child = await startGatewayProcess({
      DATABASE_URL: gateway.databaseUrl,
      GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
      GATEWAY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'info',
    });
    try {
      const response = await fetch(`${child.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'x-gateway-api-key': TEST_ADMIN_KEY,
          'x-gateway-provider': 'openai',
          authorization: `Bearer ${PROVIDER_SECRET}`,
          'x-gateway-custom-host': 'http://127.0.0.1:9/v1',
          'x-gateway-trace-id': 'trace-observability-1',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(502);
    } finally {
      await child.stop();
    }
    const lines = child
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => typeof line.level === 'number' && typeof line.time === 'number')).toBe(true);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 40, trace_id: 'trace-observability-1', status: 502, code: 'upstream_unreachable', provider: 'openai' }),
    );
    expect(child.output()).not.toContain(PROVIDER_SECRET);
    expect(child.output()).not.toContain(TEST_ADMIN_KEY);
  });
});
