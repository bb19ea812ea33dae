import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../table-export';
import { IsInstant } from '../../../common/pipes/validators';

export const GROUPINGS = ['user', 'model', 'provider', 'virtual_key', 'api_key', 'operation'] as const;

/** `GET /v1/analytics/summary` (CONTRACT section 4; `api_key` and `operation` are additions). */
export class AnalyticsQueryDto {
  @ApiProperty({ description: `One of ${GROUPINGS.join(', ')}, or metadata.<key>`, example: 'model' })
  @IsString()
  @Matches(new RegExp(`^(${GROUPINGS.join('|')}|metadata\\.[\\w.-]{1,100})$`), { message: `group_by must be one of ${GROUPINGS.join(', ')} or metadata.<key>` })
  group_by: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, inclusive; default 30 days before `to`' }) @IsOptional() @IsInstant()
  from?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, exclusive; default now' }) @IsOptional() @IsInstant()
  to?: string;

  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'json', description: '`csv`: the rows as a CSV download' })
  @IsOptional() @IsIn(EXPORT_FORMATS)
  format?: ExportFormat;
}
