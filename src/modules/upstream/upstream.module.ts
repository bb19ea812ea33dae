import { Global, Module } from '@nestjs/common';
import { ProviderRegistry } from '../../providers/registry';
import { UpstreamAttempt } from './upstream-attempt';
import { UpstreamClient } from './upstream-client';

/** The provider registry, the pooled HTTP client and the attempt steps every operation sends through. */
@Global()
@Module({
  providers: [UpstreamClient, ProviderRegistry, UpstreamAttempt],
  exports: [UpstreamClient, ProviderRegistry, UpstreamAttempt],
})
export class UpstreamModule {}
