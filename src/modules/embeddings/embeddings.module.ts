import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { EmbeddingsController } from './embeddings.controller';

@Module({
  imports: [RoutingModule],
  controllers: [EmbeddingsController],
})
export class EmbeddingsModule {}
