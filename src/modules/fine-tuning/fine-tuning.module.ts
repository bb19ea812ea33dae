import { Module } from '@nestjs/common';
import { PricingModule } from '../pricing/pricing.module';
import { RoutingModule } from '../routing/routing.module';
import { FineTuningController } from './fine-tuning.controller';
import { ModelsController } from './models.controller';
import { TrainingCharges } from './training-charges.service';

/** Fine-tuning jobs and the model list: REST resources of the providers, passed through; training priced once per job. */
@Module({
  imports: [RoutingModule, PricingModule],
  controllers: [FineTuningController, ModelsController],
  providers: [TrainingCharges],
})
export class FineTuningModule {}
