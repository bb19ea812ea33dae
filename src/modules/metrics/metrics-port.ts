import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../../config/environment';
import { listenForMetrics, metricsAddress } from './metrics-listener';
import { MetricsService } from './metrics.service';

/**
 * With METRICS_PORT set, this process's `/metrics` on a listener of its own. With
 * WORKERS > 1 the cluster's primary holds that listener instead (it sums the workers),
 * so a worker opens none.
 */
@Injectable()
export class MetricsPort implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsPort.name);
  private server: Server | null = null;

  constructor(
    private readonly metrics: MetricsService,
    private readonly config: ConfigService<Environment, true>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const settings = {
      METRICS_PORT: this.config.get('METRICS_PORT', { infer: true }),
      METRICS_TOKEN: this.config.get('METRICS_TOKEN', { infer: true }),
      METRICS_HOST: this.config.get('METRICS_HOST', { infer: true }),
    };
    if (settings.METRICS_PORT === undefined || cluster.isWorker) return;
    this.server = await listenForMetrics(settings, () => this.metrics.text());
    this.logger.log(`Metrics at ${metricsAddress(this.server)}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections(); // a scraper's keep-alive connection would hold close() open
    await closed;
  }
}
