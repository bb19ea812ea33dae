import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics: process defaults plus one counter and one histogram per logged request. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'gateway_requests_total',
    help: 'Requests by operation, provider and HTTP status',
    labelNames: ['operation', 'provider', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'gateway_request_duration_seconds',
    help: 'Request duration, to the end of the response or stream',
    labelNames: ['operation', 'provider'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly cost = new Counter({
    name: 'gateway_cost_usd_total',
    help: 'Priced cost of served requests in USD',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  observe(operation: string, provider: string | null, status: number, latencyMs: number, costUsd: number | null): void {
    const providerLabel = provider ?? 'none';
    this.requests.inc({ operation, provider: providerLabel, status: String(status) });
    this.latency.observe({ operation, provider: providerLabel }, latencyMs / 1000);
    if (costUsd) this.cost.inc({ provider: providerLabel }, costUsd);
  }
}
