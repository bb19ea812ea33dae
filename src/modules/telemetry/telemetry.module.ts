import { Global, Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../../config/environment';
import { RequestTracer } from './request-tracer';

/** OpenTelemetry traces (see RequestTracer); its shutdown hook flushes the last spans. Global: the request path's middleware, the request logger and realtime sessions all record spans. */
@Global()
@Module({
  providers: [
    {
      provide: RequestTracer,
      inject: [ConfigService],
      useFactory: async (config: ConfigService<Environment, true>) => {
        const endpoint = config.get('OTEL_EXPORTER_OTLP_ENDPOINT', { infer: true });
        if (!endpoint) return new RequestTracer(null);
        // The SDK and the exporter are loaded only when they are used.
        const { otlpTracing } = await import('./otlp-tracing');
        const logger = new Logger(RequestTracer.name);
        return new RequestTracer(otlpTracing(endpoint, config.get('OTEL_SERVICE_NAME', { infer: true }), (message) => logger.warn(message)));
      },
    },
  ],
  exports: [RequestTracer],
})
export class TelemetryModule {}
