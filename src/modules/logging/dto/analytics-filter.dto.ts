import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, Length } from 'class-validator';

/**
 * The log filters that make sense on aggregates, shared by `GET /v1/analytics/summary` and
 * `/timeseries` (issue 25: Analytics offers the filters of Logs). Lists are comma-separated,
 * as on `GET /v1/logs`; `metadata.<key>=<value>` is read apart (a DTO cannot name the keys).
 */
export class AnalyticsFilterDto {
  @ApiPropertyOptional({ description: 'Model(s) as named by the request, comma-separated' })
  @IsOptional()
  @IsString()
  @Length(1, 2000)
  model?: string;

  @ApiPropertyOptional({ description: 'Provider(s), comma-separated' })
  @IsOptional()
  @IsString()
  @Length(1, 2000)
  provider?: string;

  @ApiPropertyOptional({ description: 'End user(s), comma-separated' })
  @IsOptional()
  @IsString()
  @Length(1, 2000)
  user?: string;

  @ApiPropertyOptional({ description: 'Operation(s), comma-separated' })
  @IsOptional()
  @IsString()
  @Length(1, 2000)
  operation?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsUUID()
  api_key_id?: string;

  @ApiPropertyOptional({ description: 'Virtual key id or slug (a slug of the acting workspace)' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  virtual_key?: string;
}
