/**
 * The answers of `GET /v1/analytics/summary` and `/timeseries` (analytics.service.ts,
 * analytics-series.ts) as the OpenAPI document describes them, for the dashboard's generated
 * types. Swagger metadata only: the service builds the objects from its SQL rows.
 */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { INTERVALS, type TimeseriesInterval } from './analytics-timeseries-query.dto';

const PERCENTILES = ['exact', 'approximate'] as const;
const FILTERED_FROM = ['rollups', 'rows'] as const;

/** What a breakdown's point sums (SERIES_MEASURES): requests, errors, tokens and cost. */
export class AnalyticsSumsResponseDto {
  @ApiProperty({ type: 'integer', description: 'Requests as clients sent them (failed tries, tool rounds and tool calls nested under one are not requests)' })
  requests: number;

  @ApiProperty({ type: 'integer', description: 'Requests that failed as their client saw them' })
  errors: number;

  @ApiProperty({ description: "Every row's, nested ones included" })
  prompt_tokens: number;

  @ApiProperty({ description: "Every row's, nested ones included" })
  completion_tokens: number;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Null when some rows used a model without a known price and none had one (never 0 for an unknown price)',
  })
  cost_usd: number | null;

  @ApiProperty({ type: 'integer', description: 'Rows that used a model without a known price: not in cost_usd' })
  unpriced_requests: number;
}

/** What every summary group and time bucket holds. */
export class AnalyticsMeasuresResponseDto extends AnalyticsSumsResponseDto {
  @ApiProperty({ type: 'integer', description: 'Requests answered after a failed try: recovered by a retry or a fallback' })
  recovered: number;

  @ApiProperty({ type: Number, nullable: true, description: 'Null without requests' })
  latency_p50_ms: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Null without requests' })
  latency_p95_ms: number | null;
}

export class AnalyticsSummaryRowResponseDto extends AnalyticsMeasuresResponseDto {
  @ApiProperty({ type: String, nullable: true, description: "The group's value (for group_by=virtual_key the key's slug); null for rows without one" })
  key: string | null;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: "With group_by=virtual_key only: the key's id (a deleted key's slug may be a new key's)",
  })
  virtual_key_id?: string | null;
}

export class AnalyticsSummaryResponseDto {
  @ApiProperty({ enum: ['analytics.summary'] })
  object: 'analytics.summary';

  @ApiProperty({ example: 'model' })
  group_by: string;

  @ApiProperty({ format: 'date-time' })
  from: string;

  @ApiProperty({ format: 'date-time' })
  to: string;

  @ApiProperty({ enum: PERCENTILES, description: 'Ranges over two days get latency percentiles estimated from histograms (bins 9% wide)' })
  latency_percentiles: (typeof PERCENTILES)[number];

  @ApiPropertyOptional({ enum: FILTERED_FROM, description: 'With filters: whether the rollups answered or the log rows were read' })
  filtered_from?: (typeof FILTERED_FROM)[number];

  @ApiProperty({
    type: 'integer',
    description: "Of the period's requests (every group's, under the same filters), those that were lines of a batch (their row has a batch_id)",
  })
  batch_requests: number;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: "The cost of the batch lines' rows (their failed tries included): part of the groups' cost; null as cost_usd is",
  })
  batch_cost_usd: number | null;

  @ApiProperty({ type: 'integer', description: "The batch lines' rows that used a model without a known price: not in batch_cost_usd" })
  batch_unpriced_requests: number;

  @ApiProperty({ type: [AnalyticsSummaryRowResponseDto], description: 'By cost, then requests; at most 1,000 groups' })
  data: AnalyticsSummaryRowResponseDto[];
}

export class AnalyticsBucketResponseDto extends AnalyticsMeasuresResponseDto {
  @ApiProperty({ format: 'date-time', description: "The bucket's start" })
  bucket: string;
}

export class AnalyticsSeriesPointResponseDto extends AnalyticsSumsResponseDto {
  @ApiProperty({ format: 'date-time', description: "The bucket's start" })
  bucket: string;
}

/** A group's buckets in a breakdown over time (`group_by`): a top group, or `other`, the rest together. */
export class AnalyticsSeriesResponseDto {
  @ApiProperty({ type: String, nullable: true, description: "The group's value; null for `other` and for rows without one" })
  key: string | null;

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: "With group_by=virtual_key, a top group only: the key's id" })
  virtual_key_id?: string | null;

  @ApiProperty({ description: 'The groups past the top ones, together' })
  other: boolean;

  @ApiPropertyOptional({ type: 'integer', description: '`other` only: how many groups it holds' })
  groups?: number;

  @ApiProperty({ type: [AnalyticsSeriesPointResponseDto], description: 'Every bucket of the range, as `data`' })
  data: AnalyticsSeriesPointResponseDto[];
}

export class AnalyticsTimeseriesResponseDto {
  @ApiProperty({ enum: ['analytics.timeseries'] })
  object: 'analytics.timeseries';

  @ApiProperty({ enum: INTERVALS })
  interval: TimeseriesInterval;

  @ApiProperty({ description: 'The time zone the buckets follow (IANA name)', example: 'UTC' })
  tz: string;

  @ApiProperty({ format: 'date-time' })
  from: string;

  @ApiProperty({ format: 'date-time' })
  to: string;

  @ApiProperty({ enum: PERCENTILES, description: 'Ranges over two days get latency percentiles estimated from histograms (bins 9% wide)' })
  latency_percentiles: (typeof PERCENTILES)[number];

  @ApiPropertyOptional({ enum: FILTERED_FROM, description: 'With filters: whether the rollups answered or the log rows were read' })
  filtered_from?: (typeof FILTERED_FROM)[number];

  @ApiProperty({ type: [AnalyticsBucketResponseDto], description: 'Every bucket of the range, oldest first; empty ones with zeros and null latencies' })
  data: AnalyticsBucketResponseDto[];

  @ApiPropertyOptional({ description: 'With group_by: the dimension of the breakdown' })
  group_by?: string;

  @ApiPropertyOptional({ type: 'integer', description: 'With group_by: how many top groups have a series of their own' })
  top?: number;

  @ApiPropertyOptional({
    type: [AnalyticsSeriesResponseDto],
    description: 'With group_by: the top groups by cost then requests, then `other` (the rest), adding up to `data` bucket by bucket',
  })
  series?: AnalyticsSeriesResponseDto[];
}
