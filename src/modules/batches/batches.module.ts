import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module';
import { RoutingModule } from '../routing/routing.module';
import { BatchFiles } from './batch-files.service';
import { BatchFinisher } from './batch-finisher';
import { BatchResults } from './batch-results';
import { BatchRunner } from './batch-runner';
import { BatchesController, MessageBatchesController } from './batches.controller';
import { BatchesService } from './batches.service';
import { NativeBatches } from './native-batches';
import { NativeBatchPoller } from './native-batch-poller';
import { BudgetsModule } from '../budgets/budgets.module';
import { KeysModule } from '../keys/keys.module';

/** Batches in OpenAI's and Anthropic's shapes, their files, the runner of their lines and the poller of those run at their provider (CONTRACT section 17). */
@Module({
  imports: [RoutingModule, HealthModule, BudgetsModule, KeysModule],
  controllers: [BatchesController, MessageBatchesController],
  providers: [BatchesService, BatchFiles, BatchResults, BatchFinisher, BatchRunner, NativeBatches, NativeBatchPoller],
  exports: [BatchFiles],
})
export class BatchesModule {}
