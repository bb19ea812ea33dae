import { Global, Module } from '@nestjs/common';
import { ProviderRegistry } from '../../providers/registry';
import { UpstreamClient } from './upstream-client';

/** The provider registry and the pooled HTTP client every operation sends through. */
@Global()
@Module({
  providers: [UpstreamClient, ProviderRegistry],
  exports: [UpstreamClient, ProviderRegistry],
})
export class UpstreamModule {}
