import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { RerankController } from './rerank.controller';

@Module({
  imports: [RoutingModule],
  controllers: [RerankController],
})
export class RerankModule {}
