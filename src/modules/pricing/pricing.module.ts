import { Module } from '@nestjs/common';
import { ProviderRegistry } from '../../providers/registry';
import { KeysModule } from '../keys/keys.module';
import { PriceOverridesService } from './price-overrides.service';
import { PricesController } from './prices.controller';
import { PricingService } from './pricing.service';

@Module({
  imports: [KeysModule],
  controllers: [PricesController],
  // The registry is stateless: its own instance here only to check provider ids.
  providers: [PricingService, PriceOverridesService, ProviderRegistry],
  exports: [PricingService],
})
export class PricingModule {}
