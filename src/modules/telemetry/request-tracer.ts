import { type OnApplicationShutdown } from '@nestjs/common';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Attributes,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type { LoggedError } from '../../common/errors/gateway-error';
import type { RequestContext } from '../../context/request-context';
import type { NormalizedUsage } from '../../providers/usage';
import type { Attempt } from '../../context/attempt';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  GEN_AI,
  errorType,
  genAiOperationName,
  genAiProviderName,
  genAiSpanName,
  usageAttributes,
} from './genai-attributes';

/** How long shutdown waits for the last spans to reach the collector. */
const SHUTDOWN_FLUSH_MS = 3_000;

/** The SDK's parts the tracer uses (`otlp-tracing.ts`, loaded only when tracing is on). */
export interface TracingSdk {
  tracer: Tracer;
  propagator: TextMapPropagator;
  /** Flushes the spans still queued, then stops. */
  shutdown(): Promise<void>;
}

/** What the request's own log row says of it: the root span's attributes. */
export interface TracedRequest {
  operation: string;
  provider: string | null;
  model: string | null;
  statusCode: number;
  latencyMs: number;
  costUsd: number | null;
  cacheStatus: string;
  error: LoggedError | null;
}

/** An MCP tool call as its log row has it (see RequestLogger.toolCallLogged). */
export interface TracedToolCall {
  id: string;
  createdAt: Date;
  server: string;
  tool: string;
  isError: boolean;
  error: { code: string | null; message: string } | null;
  latencyMs: number;
  statusCode: number;
}

/**
 * One OpenTelemetry trace per request, exported over OTLP/HTTP, when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set (otherwise `enabled` is false and nothing is made).
 *
 * The root span (SERVER) starts with the request (`begin`, continuing a W3C `traceparent`),
 * so the trace id is known for the log row and the response; everything else is built when
 * the log rows are (`requestEnded`, `toolCalled`) from what the attempts recorded, with their
 * own start and end times: nothing is added to the request's own path. A span per attempt
 * (CLIENT, `chat gpt-4o-mini`) and per MCP tool call (`execute_tool {tool}`) hangs under it.
 *
 * Only `@opentelemetry/api` is loaded with this file; the SDK and the exporter are loaded
 * when tracing is on (TelemetryModule).
 */
export class RequestTracer implements OnApplicationShutdown {
  readonly enabled: boolean;
  /** Root spans of requests without an operation (the MCP proxy) that ran a tool call: exported although the request has no row. */
  private readonly rootsWithTools = new WeakSet<Span>();

  /** `sdk`: null disables tracing. */
  constructor(private readonly sdk: TracingSdk | null) {
    this.enabled = sdk !== null;
  }

  /** The request's root span, a child of the caller's `traceparent` when it sent a valid one. Call only when `enabled`. */
  begin(headers: IncomingHttpHeaders): Span {
    const parent = this.sdk!.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    return this.sdk!.tracer.startSpan('request', { kind: SpanKind.SERVER, startTime: Date.now() }, parent);
  }

  /** The `traceparent` naming the root span, for the response. */
  traceparentOf(span: Span): string {
    const carrier: Record<string, string> = {};
    this.sdk!.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    return carrier.traceparent;
  }

  /**
   * A request without an operation (no log row; health checks, the admin API, the MCP
   * proxy) closed: its root span, named `httpRoute`, is exported only when it ran MCP tool
   * calls, and dropped otherwise.
   */
  rowlessRequestEnded(context: RequestContext, root: Span, httpRoute: string): void {
    if (!this.rootsWithTools.has(root)) return;
    root.updateName(httpRoute);
    root.setAttribute('gateway.request_id', context.requestId);
    root.end(context.createdAt.getTime() + context.elapsedMs());
  }

  /** The request's rows are made: a span for each attempt, then the root span is ended. */
  requestEnded(context: RequestContext, root: Span, request: TracedRequest, costOf: (attempt: Attempt) => number | null): void {
    const parent = trace.setSpan(ROOT_CONTEXT, root);
    context.attempts.forEach((attempt) => this.attemptSpan(context, attempt, costOf(attempt), parent));
    const last = context.lastAttempt;
    const outcome = last?.outcome ?? null;
    const requestedModel = context.model ?? request.model;
    const type = errorType(request.error, request.statusCode);
    root.updateName(genAiSpanName(request.operation, requestedModel));
    root.setAttributes({
      ...this.genAiAttributes(request.operation, request.provider, requestedModel, outcome?.servedModel ?? null, outcome?.usage ?? null),
      [GEN_AI.requestStream]: context.isStream,
      [ATTR_HTTP_RESPONSE_STATUS_CODE]: request.statusCode,
      ...(type ? { [ATTR_ERROR_TYPE]: type } : {}),
      'gateway.operation': request.operation,
      'gateway.request_id': context.requestId,
      'gateway.trace_id': context.traceId,
      'gateway.cache_status': request.cacheStatus,
      'gateway.attempts': context.attempts.length,
      ...(request.costUsd != null ? { 'gateway.cost_usd': request.costUsd } : {}),
      ...(outcome?.ttftMs != null ? { 'gateway.ttft_ms': outcome.ttftMs } : {}),
      ...(context.route?.configId ? { 'gateway.config_id': context.route.configId } : {}),
      ...(last?.target.virtualKeyId ? { 'gateway.virtual_key_id': last.target.virtualKeyId } : {}),
      ...(context.principal ? { 'gateway.api_key_id': context.principal.id } : {}),
    });
    // A server span is an error on a 5xx (a 4xx is the caller's), or on an error inside a 2xx (a stream that broke).
    if (request.statusCode >= 500 || (request.statusCode < 400 && type)) root.setStatus({ code: SpanStatusCode.ERROR, message: request.error?.message });
    root.end(context.createdAt.getTime() + request.latencyMs);
  }

  /** An MCP tool call ran for the request: its span, ended at once. */
  toolCalled(root: Span, call: TracedToolCall): void {
    this.rootsWithTools.add(root);
    const start = call.createdAt.getTime();
    const type = call.isError ? (call.error?.code ?? 'tool_error') : null;
    const span = this.sdk!.tracer.startSpan(
      `execute_tool ${call.tool}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: start,
        attributes: {
          [GEN_AI.operationName]: 'execute_tool',
          [GEN_AI.toolName]: call.tool,
          [GEN_AI.toolType]: 'extension',
          'mcp.method.name': 'tools/call',
          'gateway.mcp_server': call.server,
          'gateway.log_id': call.id,
          'gateway.status_code': call.statusCode,
          ...(type ? { [ATTR_ERROR_TYPE]: type } : {}),
        },
      },
      trace.setSpan(ROOT_CONTEXT, root),
    );
    if (type) span.setStatus({ code: SpanStatusCode.ERROR, message: call.error?.message });
    span.end(start + call.latencyMs);
  }

  /** Flushes the spans still queued (bounded: a collector that is down must not hold up the shutdown). */
  async onApplicationShutdown(): Promise<void> {
    if (!this.sdk) return;
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS).unref()));
    await Promise.race([this.sdk.shutdown().catch(() => undefined), cap]);
    clearTimeout(timer);
  }

  private attemptSpan(context: RequestContext, attempt: Attempt, costUsd: number | null, parent: ReturnType<typeof trace.setSpan>): void {
    const outcome = attempt.outcome;
    const status = attempt.failure?.status ?? attempt.answerStatus ?? 0;
    const type = errorType(attempt.error, status);
    const start = attempt.createdAt.getTime();
    const span = this.sdk!.tracer.startSpan(
      genAiSpanName(context.operation!, attempt.model),
      {
        kind: SpanKind.CLIENT,
        startTime: start,
        attributes: {
          ...this.genAiAttributes(context.operation!, attempt.provider, attempt.model, outcome?.servedModel ?? null, outcome?.usage ?? null),
          ...(status ? { [ATTR_HTTP_RESPONSE_STATUS_CODE]: status } : {}),
          ...(type ? { [ATTR_ERROR_TYPE]: type } : {}),
          'gateway.provider': attempt.provider,
          'gateway.retry': attempt.retry,
          'gateway.sent': attempt.sent,
          'gateway.cache_status': attempt.cacheStatus,
          ...(attempt.targetIndex !== null ? { 'gateway.target_index': attempt.targetIndex } : {}),
          ...(costUsd != null ? { 'gateway.cost_usd': costUsd } : {}),
          ...(outcome?.ttftMs != null ? { 'gateway.ttft_ms': outcome.ttftMs } : {}),
        },
      },
      parent,
    );
    if (type) span.setStatus({ code: SpanStatusCode.ERROR, message: attempt.error?.message });
    span.end(start + (attempt.latencyMs ?? 0));
  }

  private genAiAttributes(
    operation: string,
    provider: string | null,
    requestModel: string | null,
    responseModel: string | null,
    usage: NormalizedUsage | null,
  ): Attributes {
    return {
      [GEN_AI.operationName]: genAiOperationName(operation),
      ...(provider ? { [GEN_AI.providerName]: genAiProviderName(provider) } : {}),
      ...(requestModel ? { [GEN_AI.requestModel]: requestModel } : {}),
      ...(responseModel ? { [GEN_AI.responseModel]: responseModel } : {}),
      ...usageAttributes(usage),
    };
  }
}
