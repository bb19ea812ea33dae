import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '../../gateway/request-context';
import { Ctx, Permission } from '../../gateway/request-context.decorator';
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
  @ApiOperation({ summary: 'Requests, errors, tokens, cost and latency percentiles grouped by one dimension; user-role keys see their own' })
  summary(@Ctx() context: RequestContext, @Query() query: AnalyticsQueryDto) {
    return this.analytics.summary(query, context.principal!);
  }

  @Get('timeseries')
  @ApiOperation({ summary: 'Requests, errors, tokens, cost and latency percentiles per minute, hour or day (UTC buckets); user-role keys see their own' })
  timeseries(@Ctx() context: RequestContext, @Query() query: AnalyticsTimeseriesQueryDto) {
    return this.analytics.timeseries(query, context.principal!);
  }
}
