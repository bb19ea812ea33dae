import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../../context/request-context.decorator';
import { MetricsService } from './metrics.service';

/** `/metrics` on the gateway's own port: only with METRICS_TOKEN and without METRICS_PORT (metrics-access.ts). */
@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Public()
  async metricsText(@Headers('authorization') authorization: string | undefined, @Res() res: Response): Promise<void> {
    // Read first: a refusal must not leave the metrics' content type on the error's JSON.
    const text = await this.metrics.mainPortText(authorization);
    res.type(this.metrics.registry.contentType).send(text);
  }
}
