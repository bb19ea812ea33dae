import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { Readiness } from './readiness';

/** `/health` (liveness), `/health/ready` (readiness) and the instance's `Readiness`, which the stream relay and the shutdown sequence share. */
@Module({
  controllers: [HealthController],
  providers: [Readiness],
  exports: [Readiness],
})
export class HealthModule {}
