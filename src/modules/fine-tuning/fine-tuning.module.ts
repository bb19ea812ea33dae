import { Module } from '@nestjs/common';
import { PricingModule } from '../pricing/pricing.module';
import { RoutingModule } from '../routing/routing.module';
import { FineTuningController } from './fine-tuning.controller';
import { ModelListService } from './model-list.service';
import { ModelsController } from './models.controller';
import { TrainingCharges } from './training-charges';

/** Fine-tuning jobs and the model list: REST resources of the providers, passed through (the list also converted between OpenAI's and Anthropic's shapes); training priced once per job. */
@Module({
  imports: [RoutingModule, PricingModule],
  controllers: [FineTuningController, ModelsController],
  providers: [TrainingCharges, ModelListService],
})
export class FineTuningModule {}
