import { Global, Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../../config/environment';
import { otlpSpanProcessor } from './otlp-span-processor';
import { RequestTracer } from './request-tracer.service';

/** OpenTelemetry traces (see RequestTracer); its shutdown hook flushes the last spans. */
@Global()
@Module({
  providers: [
    {
      provide: RequestTracer,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => {
        const endpoint = config.get('OTEL_EXPORTER_OTLP_ENDPOINT', { infer: true });
        const logger = new Logger(RequestTracer.name);
        return new RequestTracer(endpoint ? otlpSpanProcessor(endpoint, (message) => logger.warn(message)) : null, config.get('OTEL_SERVICE_NAME', { infer: true }));
      },
    },
  ],
  exports: [RequestTracer],
})
export class TelemetryModule {}
