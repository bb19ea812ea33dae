import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, IsUUID, Max, Min } from 'class-validator';
import { IsInstant } from '../../../common/pipes/validators';
import { ListQueryDto } from '../../../common/http/list.dto';
import { toBool, toInt } from '../../../common/query-transforms';

/** Filters of `GET /v1/logs` (CONTRACT section 4); `metadata.<key>=<value>` is read apart. */
export class LogQueryDto extends ListQueryDto {
  @ApiPropertyOptional() @IsOptional() @IsString()
  user?: string;

  @ApiPropertyOptional() @IsOptional() @IsString()
  model?: string;

  @ApiPropertyOptional() @IsOptional() @IsString()
  provider?: string;

  @ApiPropertyOptional({ description: 'HTTP status code' })
  @IsOptional() @Transform(toInt) @IsInt() @Min(100) @Max(599)
  status?: number;

  @ApiPropertyOptional() @IsOptional() @IsString()
  trace_id?: string;

  @ApiPropertyOptional() @IsOptional() @IsUUID()
  api_key_id?: string;

  @ApiPropertyOptional({ description: 'Virtual key id or slug' }) @IsOptional() @IsString()
  virtual_key?: string;

  @ApiPropertyOptional() @IsOptional() @IsString()
  operation?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, inclusive' }) @IsOptional() @IsInstant()
  from?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, exclusive' }) @IsOptional() @IsInstant()
  to?: string;

  @ApiPropertyOptional({ description: 'false leaves request and response bodies out of list rows', default: true })
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  include_bodies = true;
}
