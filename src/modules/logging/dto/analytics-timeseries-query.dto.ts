import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../table-export';
import { IsInstant, IsTimeZone } from '../../../common/pipes/validators';
import { toInt } from '../../../common/query-transforms';
import { AnalyticsFilterDto } from './analytics-filter.dto';
import { GROUP_BY, GROUP_BY_MESSAGE, GROUPINGS } from './analytics-query.dto';

export const INTERVALS = ['minute', 'hour', 'day'] as const;
export type TimeseriesInterval = (typeof INTERVALS)[number];
/** How many groups a breakdown over time draws apart at most; the rest are one `other` series. */
export const MAX_TOP = 20;

/** `GET /v1/analytics/timeseries`: the log bucketed over time, for the dashboard's charts. */
export class AnalyticsTimeseriesQueryDto extends AnalyticsFilterDto {
  @ApiPropertyOptional({ description: 'ISO 8601 date-time, inclusive; default 24 hours before `to`' })
  @IsOptional()
  @IsInstant()
  from?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, exclusive; default now' })
  @IsOptional()
  @IsInstant()
  to?: string;

  @ApiPropertyOptional({
    enum: INTERVALS,
    description: 'Bucket size (in the time zone `tz`); default from the range: minute up to 3 hours, hour up to 14 days, day beyond',
  })
  @IsOptional()
  @IsIn(INTERVALS, { message: `interval must be one of ${INTERVALS.join(', ')}` })
  interval?: TimeseriesInterval;

  @ApiPropertyOptional({
    description: "The time zone the buckets follow (an IANA name): a day bucket is that zone's day, daylight saving included",
    default: 'UTC',
    example: 'America/Los_Angeles',
  })
  @IsOptional()
  @IsTimeZone()
  tz?: string;

  @ApiPropertyOptional({ description: `A breakdown: one of ${GROUPINGS.join(', ')}, or metadata.<key>; adds \`series\`, one per top group and one \`other\`` })
  @IsOptional()
  @IsString()
  @Matches(GROUP_BY, { message: GROUP_BY_MESSAGE })
  group_by?: string;

  @ApiPropertyOptional({
    description: 'With group_by: how many groups (by cost, then requests, over the range) get a series of their own',
    default: 8,
    minimum: 1,
    maximum: MAX_TOP,
  })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_TOP)
  top?: number;

  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'json', description: '`csv`: the buckets as a CSV download' })
  @IsOptional()
  @IsIn(EXPORT_FORMATS)
  format?: ExportFormat;
}
