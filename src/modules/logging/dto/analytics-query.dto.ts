import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../table-export';
import { IsInstant } from '../../../common/pipes/validators';
import { AnalyticsFilterDto } from './analytics-filter.dto';

export const GROUPINGS = ['user', 'model', 'provider', 'virtual_key', 'api_key', 'operation'] as const;
/** A `group_by` value: one of GROUPINGS or `metadata.<key>`. */
export const GROUP_BY = new RegExp(`^(${GROUPINGS.join('|')}|metadata\\.[\\w.-]{1,100})$`);
export const GROUP_BY_MESSAGE = `group_by must be one of ${GROUPINGS.join(', ')} or metadata.<key>`;

/** `GET /v1/analytics/summary` (CONTRACT section 4; `api_key` and `operation` are additions). */
export class AnalyticsQueryDto extends AnalyticsFilterDto {
  @ApiProperty({ description: `One of ${GROUPINGS.join(', ')}, or metadata.<key>`, example: 'model' })
  @IsString()
  @Matches(GROUP_BY, { message: GROUP_BY_MESSAGE })
  group_by: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, inclusive; default 30 days before `to`' })
  @IsOptional()
  @IsInstant()
  from?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, exclusive; default now' })
  @IsOptional()
  @IsInstant()
  to?: string;

  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'json', description: '`csv`: the rows as a CSV download' })
  @IsOptional()
  @IsIn(EXPORT_FORMATS)
  format?: ExportFormat;
}
