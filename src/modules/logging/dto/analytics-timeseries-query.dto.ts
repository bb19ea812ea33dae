import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../table-export';
import { IsInstant } from '../../../common/pipes/validators';

export const INTERVALS = ['minute', 'hour', 'day'] as const;
export type TimeseriesInterval = (typeof INTERVALS)[number];

/** `GET /v1/analytics/timeseries`: the log bucketed over time, for the dashboard's charts. */
export class AnalyticsTimeseriesQueryDto {
  @ApiPropertyOptional({ description: 'ISO 8601 date-time, inclusive; default 24 hours before `to`' }) @IsOptional() @IsInstant()
  from?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, exclusive; default now' }) @IsOptional() @IsInstant()
  to?: string;

  @ApiPropertyOptional({
    enum: INTERVALS,
    description: 'Bucket size (UTC); default from the range: minute up to 3 hours, hour up to 14 days, day beyond',
  })
  @IsOptional()
  @IsIn(INTERVALS, { message: `interval must be one of ${INTERVALS.join(', ')}` })
  interval?: TimeseriesInterval;

  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'json', description: '`csv`: the buckets as a CSV download' })
  @IsOptional() @IsIn(EXPORT_FORMATS)
  format?: ExportFormat;
}
