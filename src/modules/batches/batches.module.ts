import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module';
import { RoutingModule } from '../routing/routing.module';
import { BatchFiles } from './batch-files.service';
import { BatchFinisher } from './batch-finisher';
import { BatchResults } from './batch-results';
import { BatchRunner } from './batch-runner';
import { BatchesController, MessageBatchesController } from './batches.controller';
import { BatchesService } from './batches.service';

/** Batches in OpenAI's and Anthropic's shapes, their files, and the runner of their lines (CONTRACT section 17). */
@Module({
  imports: [RoutingModule, HealthModule],
  controllers: [BatchesController, MessageBatchesController],
  providers: [BatchesService, BatchFiles, BatchResults, BatchFinisher, BatchRunner],
  exports: [BatchFiles],
})
export class BatchesModule {}
