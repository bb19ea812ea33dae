import { Module } from '@nestjs/common';
import { PricingModule } from '../pricing/pricing.module';
import { RoutingModule } from '../routing/routing.module';
import { ImagesController } from './images.controller';

@Module({
  imports: [RoutingModule, PricingModule],
  controllers: [ImagesController],
})
export class ImagesModule {}
