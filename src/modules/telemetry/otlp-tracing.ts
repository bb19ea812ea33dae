import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSdk } from './request-tracer';

/** At most one warning per this long while exports keep failing. */
export const EXPORT_WARNING_INTERVAL_MS = 60_000;

/**
 * Passes spans to the OTLP exporter and turns its failures into a warning, at most one a
 * minute (the SDK reports them only to its diagnostic logger, which the gateway does not
 * install): a collector that is down is seen, without a line per batch.
 */
export class WarningSpanExporter implements SpanExporter {
  private lastWarningAt = -Infinity;
  private failedSince = 0;

  constructor(
    private readonly exporter: SpanExporter,
    private readonly warn: (message: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.exporter.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.failedSince = 0;
      else this.failed(spans.length, result.error);
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush?.() ?? Promise.resolve();
  }

  private failed(count: number, error: Error | undefined): void {
    this.failedSince += count;
    const now = this.now();
    if (now - this.lastWarningAt < EXPORT_WARNING_INTERVAL_MS) return;
    this.lastWarningAt = now;
    this.warn(`OpenTelemetry export failed (${error?.message ?? 'unknown error'}); ${this.failedSince} span(s) dropped so far, requests are unaffected`);
    this.failedSince = 0;
  }
}

/**
 * The SDK's tracer provider (not registered globally: only the gateway's spans go through
 * it) sending ended spans to `processor`, and the W3C propagator.
 */
export function sdkTracing(processor: SpanProcessor, serviceName: string): TracingSdk {
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }), spanProcessors: [processor] });
  return { tracer: provider.getTracer('ai-gateway'), propagator: new W3CTraceContextPropagator(), shutdown: () => provider.shutdown() };
}

/** Tracing for `OTEL_EXPORTER_OTLP_ENDPOINT` (see otlpSpanProcessor). */
export function otlpTracing(endpoint: string, serviceName: string, warn: (message: string) => void): TracingSdk {
  return sdkTracing(otlpSpanProcessor(endpoint, warn), serviceName);
}

/**
 * The span pipeline for `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL, `/v1/traces` appended
 * as the OTLP specification says): the SDK's OTLP/HTTP exporter (JSON) behind a batch
 * processor with a bounded queue, so a slow or unreachable collector drops spans and
 * never holds requests. The SDK's own variables tune it (`OTEL_BSP_SCHEDULE_DELAY`,
 * `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` …).
 */
export function otlpSpanProcessor(endpoint: string, warn: (message: string) => void): SpanProcessor {
  const url = `${endpoint.replace(/\/+$/, '')}/v1/traces`;
  return new BatchSpanProcessor(new WarningSpanExporter(new OTLPTraceExporter({ url }), warn));
}
