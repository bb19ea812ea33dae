import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { Permission, Scope } from '../../gateway/request-context.decorator';
import type { WorkspaceScope } from '../workspaces/workspace-scope';
import { AnalyticsService } from './analytics.service';
import { AnalyticsQueryDto } from './dto/analytics-query.dto';
import { AnalyticsTimeseriesQueryDto } from './dto/analytics-timeseries-query.dto';

@ApiTags('logs')
@ApiSecurity('gateway-api-key')
@Permission('logs.read')
@Controller('v1/analytics')
export class AnalyticsController {
  constructor(private readonly analytics: AnalyticsService) {}

  @Get('summary')
  @ApiOperation({ summary: 'Requests, errors, tokens, cost and latency percentiles grouped by one dimension; member keys see their own, others their workspace rows' })
  summary(@Scope() scope: WorkspaceScope, @Query() query: AnalyticsQueryDto) {
    return this.analytics.summary(scope, query);
  }

  @Get('timeseries')
  @ApiOperation({ summary: 'Requests, errors, tokens, cost and latency percentiles per minute, hour or day (UTC buckets); member keys see their own, others their workspace rows' })
  timeseries(@Scope() scope: WorkspaceScope, @Query() query: AnalyticsTimeseriesQueryDto) {
    return this.analytics.timeseries(scope, query);
  }
}
