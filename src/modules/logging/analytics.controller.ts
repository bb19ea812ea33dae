import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { Permission, Scope } from '../../context/request-context.decorator';
import type { WorkspaceScope } from '../../context/caller';
import { AnalyticsService } from './analytics.service';
import { EndUserActivityService } from './end-user-activity.service';
import { EndUserActivityQueryDto, EndUserActivityRangeDto, EndUserParamDto } from './dto/end-user-activity-query.dto';
import { AnalyticsQueryDto } from './dto/analytics-query.dto';
import { AnalyticsTimeseriesQueryDto } from './dto/analytics-timeseries-query.dto';
import { AnalyticsSummaryResponseDto, AnalyticsTimeseriesResponseDto } from './dto/analytics.response';
import { EndUserActivityDetailResponseDto, EndUserActivityListResponseDto } from './dto/end-user-activity.response';
import { BatchAnalyticsQueryDto, BatchIdParamDto } from './dto/batch-analytics-query.dto';
import { BatchAnalyticsListResponseDto, BatchAnalyticsResponseDto } from './dto/batch-analytics.response';
import { BatchAnalyticsService } from './batch-analytics.service';
import { sendTable } from './table-export';
import { metadataQuery } from './analytics-filters';
import { BREAKDOWN_COLUMNS, breakdownRows } from './analytics-series';

const MEASURES = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'cost_usd', 'unpriced_requests', 'latency_p50_ms', 'latency_p95_ms'];
const SUMMARY_COLUMNS = ['key', 'virtual_key_id', ...MEASURES];
const TIMESERIES_COLUMNS = ['bucket', ...MEASURES];

/** An analytics table is at most 1,500 rows (a breakdown: that per group), read whole: one batch. */
async function* once(rows: unknown[]): AsyncGenerator<Record<string, unknown>[]> {
  yield rows as Record<string, unknown>[];
}

@ApiTags('logs')
@ApiSecurity('gateway-api-key')
@Permission('logs.read')
@Controller('v1/analytics')
export class AnalyticsController {
  constructor(
    private readonly analytics: AnalyticsService,
    private readonly endUsers: EndUserActivityService,
    private readonly batches: BatchAnalyticsService,
  ) {}

  @Get('batches')
  @ApiOperation({
    summary:
      'The batches created in the period (OpenAI- and Anthropic-shaped), newest first, paged: status, lines by status, tokens and cost of their log rows so far (unknown apart), files; filtered by status, shape, API key; member keys see their own, others their workspace',
  })
  @ApiOkResponse({ type: BatchAnalyticsListResponseDto })
  batchList(@Scope() scope: WorkspaceScope, @Query() query: BatchAnalyticsQueryDto): Promise<Record<string, unknown>> {
    return this.batches.list(scope, query);
  }

  @Get('batches/:id')
  @ApiOperation({ summary: "One batch: its status, times, lines by status, its log rows' tokens and cost so far, files (404 outside the caller's scope)" })
  @ApiOkResponse({ type: BatchAnalyticsResponseDto })
  batch(@Scope() scope: WorkspaceScope, @Param() params: BatchIdParamDto): Promise<Record<string, unknown>> {
    return this.batches.get(scope, params.id);
  }

  @Get('users')
  @ApiOperation({
    summary:
      'The end users who made requests in the period (and, for admins, those with a budget): requests, errors, cost (unknown apart), first and last request, budget; prefix search (q), paged; member keys see their own requests, others their workspace',
  })
  @ApiOkResponse({ type: EndUserActivityListResponseDto })
  users(@Scope() scope: WorkspaceScope, @Query() query: EndUserActivityQueryDto): Promise<Record<string, unknown>> {
    return this.endUsers.list(scope, query);
  }

  @Get('users/:user')
  @ApiOperation({
    summary:
      "One end user's requests, errors, cost, first and last request and budget in the period (zeros when none); over time and by model: /timeseries and /summary with user=",
  })
  @ApiOkResponse({ type: EndUserActivityDetailResponseDto })
  user(@Scope() scope: WorkspaceScope, @Param() params: EndUserParamDto, @Query() query: EndUserActivityRangeDto): Promise<Record<string, unknown>> {
    return this.endUsers.get(scope, params.user, query);
  }

  @Get('summary')
  @ApiOperation({
    summary:
      'Requests, errors, tokens, cost and latency percentiles grouped by one dimension, optionally filtered as the log is; member keys see their own, others their workspace rows',
  })
  @ApiOkResponse({ type: AnalyticsSummaryResponseDto, description: 'JSON; with format=csv, the data rows as a CSV download' })
  async summary(@Scope() scope: WorkspaceScope, @Query() query: AnalyticsQueryDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const summary = await this.analytics.summary(scope, query, metadataQuery(req.query));
    if (query.format !== 'csv') res.json(summary);
    else await sendTable(res, 'csv', `analytics-by-${query.group_by.replace(/[^\w-]/g, '_')}`, SUMMARY_COLUMNS, once(summary.data as unknown[]));
  }

  @Get('timeseries')
  @ApiOperation({
    summary:
      'Requests, errors, tokens, cost and latency percentiles per minute, hour or day (UTC buckets), optionally filtered and broken down by a dimension (group_by: top groups and other as series); member keys see their own, others their workspace rows',
  })
  @ApiOkResponse({ type: AnalyticsTimeseriesResponseDto, description: 'JSON; with format=csv, the buckets (with group_by, the series) as a CSV download' })
  async timeseries(@Scope() scope: WorkspaceScope, @Query() query: AnalyticsTimeseriesQueryDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const series = await this.analytics.timeseries(scope, query, metadataQuery(req.query));
    if (query.format !== 'csv') res.json(series);
    // With group_by, the breakdown is the table: a row per group and bucket.
    else if (series.series)
      await sendTable(
        res,
        'csv',
        `analytics-per-${series.interval}-by-${String(series.group_by).replace(/[^\w-]/g, '_')}`,
        BREAKDOWN_COLUMNS,
        once(breakdownRows(series.series as Record<string, unknown>[])),
      );
    else await sendTable(res, 'csv', `analytics-per-${series.interval}`, TIMESERIES_COLUMNS, once(series.data as unknown[]));
  }
}
