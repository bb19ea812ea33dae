/**
 * OpenTelemetry (CONTRACT section 11): with OTEL_EXPORTER_OTLP_ENDPOINT set, one trace per
 * request reaches an OTLP/HTTP receiver: a SERVER root span with the GenAI attributes, a
 * CLIENT span per attempt and an execute_tool span per MCP tool call under it; a client's
 * `traceparent` is continued and the trace id is the log row's; a collector that refuses
 * connections costs one warning and no request.
 *
 * The gateways run as processes of their own (`startGatewayProcess`): the SDK's exporter
 * loads `http` with a dynamic import, which jest's module sandbox refuses.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, createVirtualKey, openai, waitFor } from '../support/e2e-helpers';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { MockRealtime, openRealtime, startMockRealtime } from '../support/mock-openai-realtime';
import { admin, startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

/** A span as the receiver got it, attributes flattened. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status: { code?: number };
  attributes: Record<string, string | number | boolean>;
  serviceName: string;
}

/** OTLP's SpanKind numbers. */
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
const valueOf = (value: OtlpValue) => value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue!));
const flatten = (attributes: { key: string; value: OtlpValue }[] = []) => Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));

/** A minimal OTLP/HTTP receiver: POST /v1/traces with the JSON encoding the SDK's http exporter sends. */
async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(String(req.headers['content-type']));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        const serviceName = String(flatten(resourceSpans.resource?.attributes)['service.name']);
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? [])
            spans.push({ ...span, parentSpanId: span.parentSpanId ?? '', attributes: flatten(span.attributes), serviceName });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    /** The spans of one trace, once its root span (and `count` spans in all) arrived. */
    trace: (traceId: string, count: number) =>
      waitFor(() => {
        const of = spans.filter((span) => span.traceId === traceId);
        return of.length >= count && of.some((span) => span.kind === SERVER) ? of : null;
      }, 10_000),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Shared by the gateway processes, so each reads the virtual key the first one stored. */
const ENCRYPTION_KEY = randomBytes(32).toString('hex');

/** A gateway process on `database` exporting to `endpoint`; the SDK's own variables make it export at once and give up on a dead collector after a second. */
function tracedGateway(database: TestGateway, endpoint: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  return startGatewayProcess({
    DATABASE_URL: database.databaseUrl,
    GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
    GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
    LOG_FLUSH_INTERVAL_MS: '20',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
    ...env,
  });
}

describe('OpenTelemetry traces', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let mock: MockUpstream;
  let mcp: McpTestServer;
  let realtime: MockRealtime;
  /** The in-process gateway only provides the database; `gateway` is the traced process, seen through the test helpers. */
  let database: TestGateway;
  let traced: GatewayProcess;
  let gateway: TestGateway;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    mock = await startMockUpstream();
    mcp = await startMcpTestServer();
    realtime = await startMockRealtime();
    database = await startTestGateway({ GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    traced = await tracedGateway(database, receiver.url, { OTEL_SERVICE_NAME: 'gateway-under-test', MCP_ALLOWED_NETWORKS: '127.0.0.1' });
    gateway = { ...database, url: traced.url };
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-1', custom_host: `${mock.url}/v1` });
    const registered = await call(gateway, '/v1/mcp-servers', {
      method: 'POST',
      body: { name: 'Docs', slug: 'docs', url: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` } },
    });
    expect(registered.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await traced?.stop();
    await database?.close();
    await Promise.all([receiver?.close(), mock?.close(), mcp?.close(), realtime?.close()]);
  });

  /** The request's log row, once the traced process has written it. */
  const logOf = (requestId: string | null) =>
    waitFor(async () => {
      const read = await admin(gateway, 'GET', `/v1/logs/${requestId}`);
      return read.status === 200 ? read.body : null;
    });

  /** A fallback config: the first target answers 503, the second serves. */
  const fallbackConfig = {
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'openai', api_key: 'sk-test', custom_host: `${'MOCK'}/v1`, override_params: { model: 'mock-error-503' } },
      { provider: 'openai', api_key: 'sk-test', custom_host: `${'MOCK'}/v1` },
    ],
  };
  const configOn = (upstream: MockUpstream) => JSON.stringify(fallbackConfig).replaceAll('MOCK', upstream.url);

  it('exports one trace for a request that fell back: the root span and a client span per attempt, with the GenAI attributes', async () => {
    const { data, response } = await openai(gateway, { 'x-gateway-config': configOn(mock) })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBeTruthy();
    const traceId = response.headers.get('x-gateway-trace-id')!;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const traceparent = response.headers.get('traceparent')!;
    expect(traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const spans = await receiver.trace(traceId, 3);
    expect(receiver.contentTypes[0]).toMatch(/^application\/json/);
    const roots = spans.filter((span) => span.kind === SERVER);
    expect(roots).toHaveLength(1);
    const [root] = roots;
    expect(root.spanId).toBe(traceparent.split('-')[2]);
    expect(root.parentSpanId).toBe('');
    expect(root.serviceName).toBe('gateway-under-test');
    expect(root.name).toBe('chat gpt-4o-mini');

    const log = await logOf(response.headers.get('x-gateway-request-id'));
    // The OpenTelemetry trace id is the log's trace id (no x-gateway-trace-id was sent).
    expect(log.trace_id).toBe(traceId);
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': data.model,
      'gen_ai.usage.input_tokens': log.prompt_tokens,
      'gen_ai.usage.output_tokens': log.completion_tokens,
      'gen_ai.request.stream': false,
      'http.response.status_code': 200,
      'gateway.request_id': log.id,
      'gateway.trace_id': traceId,
      'gateway.cache_status': log.cache_status,
      'gateway.attempts': 2,
      'gateway.operation': 'chat.completions',
    });
    expect(log.prompt_tokens).toBeGreaterThan(0);
    expect(root.attributes['gateway.cost_usd']).toBeCloseTo(Number(log.cost_usd), 12);
    expect(root.attributes['error.type']).toBeUndefined();

    const attempts = spans
      .filter((span) => span.kind === CLIENT)
      .sort((a, b) => String(a.attributes['gateway.target_index']).localeCompare(String(b.attributes['gateway.target_index'])));
    expect(
      attempts.map((span) => [span.name, span.parentSpanId, span.attributes['gateway.target_index'], span.attributes['http.response.status_code']]),
    ).toEqual([
      ['chat mock-error-503', root.spanId, '0', 503],
      ['chat gpt-4o-mini', root.spanId, '1', 200],
    ]);
    expect(attempts[0].attributes).toMatchObject({
      'gen_ai.request.model': 'mock-error-503',
      'gen_ai.provider.name': 'openai',
      'gateway.retry': 0,
      'gateway.sent': true,
    });
    expect(attempts[0].attributes['error.type']).toEqual(expect.any(String));
    expect(attempts[0].status.code).toBe(2); // STATUS_CODE_ERROR
    expect(attempts[1].attributes).toMatchObject({ 'gen_ai.response.model': data.model, 'gen_ai.usage.input_tokens': log.prompt_tokens });
    // Each attempt's own timing, inside the request's.
    for (const attempt of attempts) {
      expect(BigInt(attempt.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(root.startTimeUnixNano) - 1_000_000n);
      expect(BigInt(attempt.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(attempt.startTimeUnixNano));
    }
  });

  it('continues the traceparent a client sent, for a streamed request through the SDK', async () => {
    const parentTrace = randomBytes(16).toString('hex');
    const parentSpan = randomBytes(8).toString('hex');
    const { data, response } = await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod', traceparent: `00-${parentTrace}-${parentSpan}-01` })
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Say hello' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let text = '';
    for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBeTruthy();
    expect(response.headers.get('x-gateway-trace-id')).toBe(parentTrace);

    const spans = await receiver.trace(parentTrace, 2);
    const root = spans.find((span) => span.kind === SERVER)!;
    expect(root.parentSpanId).toBe(parentSpan);
    const log = await logOf(response.headers.get('x-gateway-request-id'));
    expect(log.trace_id).toBe(parentTrace);
    expect(root.attributes).toMatchObject({
      'gen_ai.request.stream': true,
      'gen_ai.usage.output_tokens': log.completion_tokens,
      'http.response.status_code': 200,
    });
    expect(log.completion_tokens).toBeGreaterThan(0);
    const [attempt] = spans.filter((span) => span.kind === CLIENT);
    expect(attempt.parentSpanId).toBe(root.spanId);
    expect(attempt.attributes).toMatchObject({ 'gen_ai.usage.output_tokens': log.completion_tokens });
  });

  it('keeps a client’s x-gateway-trace-id on the log row and names it on the root span; two requests are two traces', async () => {
    const first = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-virtual-key': 'openai-prod', 'x-gateway-trace-id': 'session-42' },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    });
    const second = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-virtual-key': 'openai-prod', 'x-gateway-trace-id': 'session-42' },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect([first.status, second.status]).toEqual([200, 200]);
    const otelIds = [first, second].map((response) => response.headers.get('traceparent')!.split('-')[1]);
    expect(otelIds[0]).not.toBe(otelIds[1]);
    for (const [i, response] of [first, second].entries()) {
      expect(response.headers.get('x-gateway-trace-id')).toBe('session-42');
      const [root] = (await receiver.trace(otelIds[i], 2)).filter((span) => span.kind === SERVER);
      expect(root.attributes).toMatchObject({ 'gateway.trace_id': 'session-42', 'gateway.request_id': response.headers.get('x-gateway-request-id') });
      expect((await logOf(response.headers.get('x-gateway-request-id'))).trace_id).toBe('session-42');
    }
  });

  it('a failed request: error.type on the root span, its status code', async () => {
    const response = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-virtual-key': 'openai-prod' },
      body: { model: 'mock-error-429', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.status).toBe(429);
    const [root] = (await receiver.trace(response.headers.get('x-gateway-trace-id')!, 2)).filter((span) => span.kind === SERVER);
    expect(root.attributes).toMatchObject({ 'http.response.status_code': 429, 'error.type': expect.any(String) });
  });

  it('a span per MCP tool call the gateway ran, under the request’s root span', async () => {
    const { data, response } = await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod', 'x-gateway-mcp': 'docs' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'tools: docs__add {"a":1,"b":2}' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBeTruthy();
    // Root, two model rounds and the tool call.
    const spans = await receiver.trace(response.headers.get('x-gateway-trace-id')!, 4);
    const root = spans.find((span) => span.kind === SERVER)!;
    const tool = spans.find((span) => span.kind === INTERNAL)!;
    expect(tool).toMatchObject({ name: 'execute_tool add', parentSpanId: root.spanId });
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'add', 'gateway.mcp_server': 'docs' });
    expect(tool.attributes['error.type']).toBeUndefined();
    const rounds = spans.filter((span) => span.kind === CLIENT);
    expect(rounds).toHaveLength(2);
    expect(rounds.every((span) => span.parentSpanId === root.spanId)).toBe(true);
  });

  it('a realtime session is one trace: the SERVER span of the handshake, ended with the session, and a CLIENT span for its provider connection', async () => {
    await createVirtualKey(gateway, { slug: 'rt', key: 'sk-realtime', custom_host: `${realtime.url.replace(/^ws/, 'http')}/v1` });
    const client = await openRealtime(`${traced.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, {
      headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-virtual-key': 'rt', 'openai-beta': 'realtime=v1' },
    });
    client.send({ type: 'response.create' });
    await client.waitForEvent('response.done');
    client.ws.close();
    const row = await waitFor(async () => (await admin(gateway, 'GET', '/v1/logs?operation=realtime&limit=1')).body.data[0] ?? null, 10_000);

    const spans = await receiver.trace(row.trace_id, 2);
    const root = spans.find((span) => span.kind === SERVER)!;
    const connection = spans.find((span) => span.kind === CLIENT)!;
    expect(root.attributes).toMatchObject({ 'gen_ai.operation.name': 'realtime', 'gen_ai.request.model': 'gpt-realtime' });
    expect(connection.parentSpanId).toBe(root.spanId);
    // The session's span lasts as long as the session, not the handshake.
    expect(Number(BigInt(root.endTimeUnixNano) - BigInt(root.startTimeUnixNano)) / 1e6).toBeGreaterThanOrEqual(row.latency_ms - 5);
  });

  it('a collector that refuses connections: requests are served, and it costs one warning', async () => {
    const unreachable = await tracedGateway(database, `http://127.0.0.1:${await closedPort()}`, { LOG_LEVEL: 'warn' });
    const warnings = () =>
      unreachable
        .output()
        .split('\n')
        .filter((line) => line.includes('OpenTelemetry export failed'));
    try {
      const send = () =>
        call({ ...database, url: unreachable.url }, '/v1/chat/completions', {
          headers: { 'x-gateway-virtual-key': 'openai-prod' },
          body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        });
      for (let i = 0; i < 3; i++) expect((await send()).status).toBe(200);
      await waitFor(() => warnings().length > 0, 10_000);
      expect(warnings()[0]).toMatch(/ECONNREFUSED/);
      // More requests, more failed exports (the last at shutdown, which flushes): still that one warning.
      for (let i = 0; i < 3; i++) expect((await send()).status).toBe(200);
    } finally {
      expect(await unreachable.stop()).toBe(0);
    }
    expect(warnings()).toHaveLength(1);
  });
});
