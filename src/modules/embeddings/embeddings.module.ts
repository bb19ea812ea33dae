import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { UpstreamModule } from '../upstream/upstream.module';
import { EmbeddingsController } from './embeddings.controller';
import { EmbeddingsService } from './embeddings.service';

@Module({
  imports: [RoutingModule, UpstreamModule],
  controllers: [EmbeddingsController],
  providers: [EmbeddingsService],
})
export class EmbeddingsModule {}
