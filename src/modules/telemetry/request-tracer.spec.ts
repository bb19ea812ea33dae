import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { RequestContext } from '../../context/request-context';
import { Attempt } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import { GatewayError } from '../../common/errors/gateway-error';
import { EXPORT_WARNING_INTERVAL_MS, sdkTracing, WarningSpanExporter } from './otlp-tracing';
import { RequestTracer, type TracedRequest } from './request-tracer';

function target(provider: string): RouteTarget {
  return {
    provider,
    apiKey: null,
    customHost: null,
    organization: null,
    project: null,
    providerOptions: {},
    strictParams: false,
    virtualKeyId: null,
    overrideParams: {},
    requestTimeoutMs: null,
    virtualKeyBudget: null,
    virtualKeyRateLimits: [],
    allowedModels: null,
    model: null,
    privateNetworkAllowed: false,
  };
}

const usage = { promptTokens: 12, completionTokens: 5, totalTokens: 17, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
const PARENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';

describe('RequestTracer', () => {
  let exporter: InMemorySpanExporter;
  let tracer: RequestTracer;

  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    tracer = new RequestTracer(sdkTracing(new SimpleSpanProcessor(exporter), 'gateway-test'));
  });

  /** A chat request whose first attempt (OpenAI) failed with a 503 and whose fallback (Anthropic) answered. */
  function fallbackRequest(headers: Record<string, string> = {}) {
    const span = tracer.begin(headers);
    const context = new RequestContext(span.spanContext().traceId, headers, span);
    context.operation = 'chat.completions';
    context.model = 'gpt-4o-mini';
    const failed = new Attempt(target('openai'), '0', 0);
    failed.model = 'gpt-4o-mini';
    failed.sent = true;
    failed.fail(GatewayError.upstreamUnreachable('connection refused'));
    const answered = new Attempt(target('anthropic'), '1', 0);
    answered.model = 'claude-haiku';
    answered.sent = true;
    answered.answered(200, { responseBody: {}, usage, servedModel: 'claude-haiku-20250101' });
    context.attempts.push(failed, answered);
    const request: TracedRequest = {
      operation: 'chat.completions',
      provider: 'anthropic',
      model: 'claude-haiku',
      statusCode: 200,
      latencyMs: 40,
      costUsd: 0.0001,
      cacheStatus: 'MISS',
      error: null,
    };
    return { span, context, request };
  }

  it('makes a root span with GenAI attributes and a client span per attempt under it', () => {
    const { span, context, request } = fallbackRequest();
    tracer.requestEnded(context, span, request, (attempt) => (attempt.provider === 'anthropic' ? 0.0001 : null));

    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(3);
    const root = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(root.name).toBe('chat gpt-4o-mini');
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'claude-haiku-20250101',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 5,
      'http.response.status_code': 200,
      'gateway.request_id': context.requestId,
      'gateway.cache_status': 'MISS',
      'gateway.cost_usd': 0.0001,
      'gateway.attempts': 2,
    });
    expect(root.attributes['error.type']).toBeUndefined();
    expect(root.resource.attributes['service.name']).toBe('gateway-test');

    const clients = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(clients.map((s) => s.name)).toEqual(['chat gpt-4o-mini', 'chat claude-haiku']);
    for (const child of clients) {
      expect(child.spanContext().traceId).toBe(root.spanContext().traceId);
      expect(child.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    }
    expect(clients[0].attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gateway.target_index': '0', 'gateway.retry': 0 });
    expect(clients[0].attributes['http.response.status_code']).toBeGreaterThanOrEqual(500);
    expect(clients[0].attributes['error.type']).toEqual(expect.any(String));
    expect(clients[0].status.code).toBe(SpanStatusCode.ERROR);
    expect(clients[1].attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.usage.input_tokens': 12,
      'gateway.target_index': '1',
      'http.response.status_code': 200,
      'gateway.cost_usd': 0.0001,
    });
    expect(clients[1].status.code).toBe(SpanStatusCode.UNSET);
  });

  it('continues a W3C traceparent and names the root span in its own', () => {
    const { span, context, request } = fallbackRequest({ traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` });
    expect(span.spanContext().traceId).toBe(PARENT_TRACE);
    expect(tracer.traceparentOf(span)).toBe(`00-${PARENT_TRACE}-${span.spanContext().spanId}-01`);
    tracer.requestEnded(context, span, request, () => null);
    const root = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER)!;
    expect(root.parentSpanContext).toMatchObject({ traceId: PARENT_TRACE, spanId: PARENT_SPAN, isRemote: true });
  });

  it('puts a failed request’s error type on the root span, an error status only for a 5xx', () => {
    const span = tracer.begin({});
    const context = new RequestContext('t', {}, span);
    context.operation = 'embeddings';
    tracer.requestEnded(
      context,
      span,
      {
        operation: 'embeddings',
        provider: 'openai',
        model: 'text-embedding-3-small',
        statusCode: 429,
        latencyMs: 3,
        costUsd: null,
        cacheStatus: 'DISABLED',
        error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'slow down' },
      },
      () => null,
    );
    const [root] = exporter.getFinishedSpans();
    expect(root.name).toBe('embeddings text-embedding-3-small');
    expect(root.attributes).toMatchObject({ 'gen_ai.operation.name': 'embeddings', 'error.type': 'rate_limit_exceeded', 'http.response.status_code': 429 });
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('makes an execute_tool span per MCP tool call; a proxy request with one is exported under its route', () => {
    const span = tracer.begin({});
    const context = new RequestContext('t', {}, span);
    tracer.toolCalled(span, {
      id: 'log-1',
      createdAt: new Date(),
      server: 'docs',
      tool: 'search',
      isError: true,
      error: { code: 'invalid_arguments', message: 'bad' },
      latencyMs: 4,
      statusCode: 400,
    });
    tracer.rowlessRequestEnded(context, span, 'POST /v1/mcp/:slug');
    const spans = exporter.getFinishedSpans();
    const tool = spans.find((s) => s.name === 'execute_tool search')!;
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'search',
      'gateway.mcp_server': 'docs',
      'error.type': 'invalid_arguments',
    });
    expect(tool.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    expect(spans.find((s) => s.kind === SpanKind.SERVER)?.name).toBe('POST /v1/mcp/:slug');
  });

  it('drops the root span of a request with neither an operation nor a tool call (health checks, the admin API)', () => {
    const span = tracer.begin({});
    tracer.rowlessRequestEnded(new RequestContext('t', {}, span), span, 'GET /health');
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it('is off without a span processor', () => {
    expect(new RequestTracer(null).enabled).toBe(false);
    expect(tracer.enabled).toBe(true);
  });
});

describe('WarningSpanExporter', () => {
  it('warns once per interval while exports fail, and passes every result on', () => {
    let now = 0;
    const warnings: string[] = [];
    const failing: SpanExporter = {
      export: (_spans, done) => done({ code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED') }),
      shutdown: async () => undefined,
    };
    const exporter = new WarningSpanExporter(
      failing,
      (message) => warnings.push(message),
      () => now,
    );
    const results: number[] = [];
    const spans = [{} as ReadableSpan, {} as ReadableSpan];
    for (let i = 0; i < 5; i++) exporter.export(spans, (result) => results.push(result.code));
    expect(results).toEqual(Array(5).fill(ExportResultCode.FAILED));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('ECONNREFUSED');
    now += EXPORT_WARNING_INTERVAL_MS;
    exporter.export(spans, () => undefined);
    expect(warnings).toHaveLength(2);
    // The spans dropped since the last warning are counted in the next one.
    expect(warnings[1]).toContain('10 span(s)');
  });
});
