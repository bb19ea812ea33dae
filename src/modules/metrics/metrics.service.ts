import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { GatewayError } from '../../common/errors/gateway-error';
import type { Environment } from '../../config/environment';
import { LogWriter } from '../logging/log-writer';
import { UpstreamClient } from '../upstream/upstream-client';
import { clusterMetricsText, inClusterWorker, joinClusterMetrics } from './cluster-metrics';
import { metricsRefusal, MetricsSettings } from './metrics-access';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What one logged request contributes to the metrics. */
export interface ObservedRequest {
  operation: string;
  provider: string | null;
  model: string | null;
  statusCode: number;
  latencyMs: number;
  promptTokens: number | null;
  completionTokens: number | null;
  costUsd: number | null;
}

/**
 * Prometheus metrics at /metrics (behind METRICS_TOKEN or on METRICS_PORT: metrics-access.ts): process defaults, and per logged request its count,
 * errors, latency, tokens and cost; per upstream call its latency to the response
 * headers; requests waiting for an upstream connection, the log queue and journal as
 * gauges. With WORKERS > 1, `/metrics` answers for all workers (cluster-metrics.ts). A model is a label only when the price
 * table knows it (else `other`), so that arbitrary model names cannot blow up the series.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'gateway_requests_total',
    help: 'Requests by operation, provider and HTTP status',
    labelNames: ['operation', 'provider', 'status'] as const,
    registers: [this.registry],
  });
  private readonly errors = new Counter({
    name: 'gateway_request_errors_total',
    help: 'Failed requests (and failed attempts a retry or fallback followed) by operation, provider and error code',
    labelNames: ['operation', 'provider', 'code'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'gateway_request_duration_seconds',
    help: 'Request duration, to the end of the response or stream',
    labelNames: ['operation', 'provider'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly upstreamLatency = new Histogram({
    name: 'gateway_upstream_duration_seconds',
    help: "Time from sending a request upstream to the provider's response headers, by provider and status (failed: no answer)",
    labelNames: ['provider', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: 'gateway_tokens_total',
    help: 'Tokens of served requests by provider, model and kind (prompt or completion)',
    labelNames: ['provider', 'model', 'kind'] as const,
    registers: [this.registry],
  });
  private readonly cost = new Counter({
    name: 'gateway_cost_usd_total',
    help: 'Priced cost of served requests in USD, by provider and model',
    labelNames: ['provider', 'model'] as const,
    registers: [this.registry],
  });

  private readonly access: MetricsSettings;

  constructor(logWriter: LogWriter, upstream: UpstreamClient, config: ConfigService<Environment, true>) {
    this.access = { METRICS_TOKEN: config.get('METRICS_TOKEN', { infer: true }), METRICS_PORT: config.get('METRICS_PORT', { infer: true }) };
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'gateway_log_queue_depth',
      help: 'Log records waiting in memory for the database',
      registers: [this.registry],
      collect() {
        this.set(logWriter.pending());
      },
    });
    new Gauge({
      name: 'gateway_upstream_waiting_requests',
      help: 'Requests waiting for a free upstream connection (all UPSTREAM_MAX_CONNECTIONS to the origin busy), by provider',
      labelNames: ['provider'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [provider, waiting] of upstream.waitingByProvider()) this.set({ provider }, waiting);
      },
    });
    new Gauge({
      name: 'gateway_upstream_http2_sessions',
      help: 'Open HTTP/2 connections to providers (each carries many requests at once), by provider',
      labelNames: ['provider'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [provider, sessions] of upstream.http2SessionsByProvider()) this.set({ provider }, sessions);
      },
    });
    new Gauge({
      name: 'gateway_log_journal_bytes',
      help: 'Size of the on-disk log journal (records not yet in the database)',
      registers: [this.registry],
      collect() {
        this.set(logWriter.journalBytes());
      },
    });
    if (inClusterWorker()) joinClusterMetrics(this.registry);
  }

  /** The text for a request on the gateway's port: 404 or 401 unless METRICS_TOKEN allows it there. */
  mainPortText(authorization: string | undefined): Promise<string> {
    const refusal = metricsRefusal(this.access, 'main', authorization);
    return refusal ? Promise.reject(refusal) : this.text();
  }

  /** The Prometheus text: this process's registry, or with WORKERS > 1 every worker's, summed by the primary. */
  text(): Promise<string> {
    if (!inClusterWorker()) return this.registry.metrics();
    return clusterMetricsText().catch((error: Error) => {
      throw GatewayError.unavailable(`The metrics of the other workers could not be collected (${error.message})`);
    });
  }

  /** One log row's request; `errorCode` is its error's code (or type), null for none. */
  observe(request: ObservedRequest, errorCode: string | null): void {
    const provider = request.provider ?? 'none';
    const model = request.costUsd !== null && request.model ? request.model : 'other';
    this.requests.inc({ operation: request.operation, provider, status: String(request.statusCode) });
    if (request.statusCode >= 400 || errorCode) this.errors.inc({ operation: request.operation, provider, code: errorCode ?? String(request.statusCode) });
    this.latency.observe({ operation: request.operation, provider }, request.latencyMs / 1000);
    if (request.promptTokens) this.tokens.inc({ provider, model, kind: 'prompt' }, request.promptTokens);
    if (request.completionTokens) this.tokens.inc({ provider, model, kind: 'completion' }, request.completionTokens);
    if (request.costUsd) this.cost.inc({ provider, model }, request.costUsd);
  }

  observeUpstream(provider: string, status: number | 'failed', seconds: number): void {
    this.upstreamLatency.observe({ provider, status: String(status) }, seconds);
  }
}
