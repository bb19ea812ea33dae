import { Global, Module } from '@nestjs/common';
import { ProviderRegistry } from '../../providers/registry';
import { HealthModule } from '../health/health.module';
import { ProvidersController } from './providers.controller';
import { UpstreamAttempt } from './upstream-attempt';
import { UpstreamClient } from './upstream-client';

/**
 * The provider registry (and its public list, `GET /v1/providers`), the pooled HTTP client and
 * the attempt steps every operation sends through. Global: ten operation modules send through it.
 */
@Global()
@Module({
  imports: [HealthModule],
  controllers: [ProvidersController],
  providers: [UpstreamClient, ProviderRegistry, UpstreamAttempt],
  exports: [UpstreamClient, ProviderRegistry, UpstreamAttempt],
})
export class UpstreamModule {}
