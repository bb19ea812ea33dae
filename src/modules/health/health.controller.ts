import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { Public } from '../../context/request-context.decorator';
import { LogWriter } from '../logging/log-writer';
import { CATALOG_PACKAGE } from '../pricing/price-catalog';
import { Readiness } from './readiness';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly logWriter: LogWriter,
    private readonly readiness: Readiness,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Liveness and database reachability (503 while the database is down), and the price catalog’s package and version' })
  async health(@Res() res: Response): Promise<void> {
    const database = await Promise.race([
      this.dataSource.query('select 1').then(
        () => 'up',
        () => 'down',
      ),
      new Promise<string>((done) => setTimeout(() => done('down'), 2000).unref()),
    ]);
    res
      .status(database === 'up' ? 200 : 503)
      .json({ status: database === 'up' ? 'ok' : 'degraded', database, pending_logs: this.logWriter.pending(), price_catalog: CATALOG_PACKAGE });
  }

  @Get('ready')
  @Public()
  @ApiOperation({
    summary:
      'Readiness: 200 while the instance serves, 503 `shutting_down` from SIGTERM on (new requests are still served for SHUTDOWN_DELAY_MS). The database is not checked: keys are served from cache through an outage',
  })
  ready(): { status: string } {
    if (!this.readiness.ready) throw GatewayError.shuttingDown();
    return { status: 'ready' };
  }
}
