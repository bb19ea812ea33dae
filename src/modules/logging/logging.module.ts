import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VirtualKeyEntity } from '../keys/entities/virtual-key.entity';
import { MetricsController } from '../metrics/metrics.controller';
import { MetricsPort } from '../metrics/metrics-port';
import { MetricsService } from '../metrics/metrics.service';
import { BudgetsModule } from '../budgets/budgets.module';
import { PricingModule } from '../pricing/pricing.module';
import { AnalyticsController } from './analytics.controller';
import { AnalyticsService } from './analytics.service';
import { BatchAnalyticsService } from './batch-analytics.service';
import { EndUserActivityService } from './end-user-activity.service';
import { RequestLogEntity } from './entities/request-log.entity';
import { LogBodyBackfill } from './body-parts/log-body-backfill';
import { LogBodyReader } from './body-parts/log-body-reader';
import { PartStore } from './body-parts/part-store';
import { LogPartitionMaintainer } from './log-partition-maintainer';
import { LogRollupCompactor } from './log-rollup-compactor';
import { LogWriter } from './log-writer';
import { LogsController } from './logs.controller';
import { LogsService } from './logs.service';
import { RequestLogger } from './request-logger';

/** Global: every operation's request ends in its RequestLogger, and the metrics it keeps are read by the upstream client and health. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([RequestLogEntity, VirtualKeyEntity]), PricingModule, BudgetsModule],
  controllers: [LogsController, AnalyticsController, MetricsController],
  providers: [
    PartStore,
    LogBodyReader,
    LogWriter,
    LogRollupCompactor,
    LogPartitionMaintainer,
    LogBodyBackfill,
    RequestLogger,
    LogsService,
    AnalyticsService,
    BatchAnalyticsService,
    EndUserActivityService,
    MetricsService,
    MetricsPort,
  ],
  exports: [RequestLogger, LogWriter, MetricsService],
})
export class LoggingModule {}
