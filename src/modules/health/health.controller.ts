import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../../gateway/request-context.decorator';
import { LogWriter } from '../logging/log-writer.service';
import { CATALOG_PACKAGE } from '../pricing/price-catalog';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly logWriter: LogWriter,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Liveness and database reachability (503 while the database is down), and the price catalog’s package and version' })
  async health(@Res() res: Response): Promise<void> {
    const database = await Promise.race([
      this.dataSource.query('select 1').then(() => 'up', () => 'down'),
      new Promise<string>((done) => setTimeout(() => done('down'), 2000).unref()),
    ]);
    res.status(database === 'up' ? 200 : 503).json({ status: database === 'up' ? 'ok' : 'degraded', database, pending_logs: this.logWriter.pending(), price_catalog: CATALOG_PACKAGE });
  }
}
