import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { FineTuningController } from './fine-tuning.controller';
import { ModelsController } from './models.controller';

/** Fine-tuning jobs and the model list: REST resources of the providers, passed through. */
@Module({
  imports: [RoutingModule],
  controllers: [FineTuningController, ModelsController],
})
export class FineTuningModule {}
