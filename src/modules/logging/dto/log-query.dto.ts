import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, IsUUID, Length, Matches } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../table-export';
import { IsInstant } from '../../../common/pipes/validators';
import { ListQueryDto } from '../../../common/http/list.dto';
import { toBool } from '../../../common/query-transforms';
import { ROW_KINDS } from '../entities/request-log.entity';
import { BATCH_ID } from './batch-analytics-query.dto';

/** A `status` filter: exact codes, classes (`4xx`) or `error` (any status from 400 on), comma-separated. */
const STATUS_FILTER = /^(?:[1-5]\d\d|[1-5]xx|error)(?:,(?:[1-5]\d\d|[1-5]xx|error))*$/;

const KIND_FILTER = new RegExp(`^(?:${ROW_KINDS.join('|')})(?:,(?:${ROW_KINDS.join('|')}))*$`);

/** Filters of `GET /v1/logs` (CONTRACT section 4); `metadata.<key>=<value>` is read apart. */
export class LogQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ description: 'End user(s), comma-separated' })
  @IsOptional()
  @IsString()
  user?: string;

  @ApiPropertyOptional({ description: 'Model(s) as named by the request, comma-separated' })
  @IsOptional()
  @IsString()
  model?: string;

  @ApiPropertyOptional({ description: 'A part of the model name (case-insensitive)' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  model_contains?: string;

  @ApiPropertyOptional({ description: 'Provider(s), comma-separated' })
  @IsOptional()
  @IsString()
  provider?: string;

  @ApiPropertyOptional({
    description: 'HTTP status codes or classes, comma-separated: `200`, `429,503`, `4xx`, `5xx`, `error` (400 and above)',
    example: '4xx,5xx',
  })
  @IsOptional()
  @IsString()
  @Matches(STATUS_FILTER, { message: 'status must be status codes (429), classes (4xx) or error, comma-separated' })
  status?: string;

  @ApiPropertyOptional({ description: 'Full-text search over the request and response bodies (words; "quoted phrases", -excluded, or)' })
  @IsOptional()
  @IsString()
  @Length(1, 500)
  q?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  trace_id?: string;

  @ApiPropertyOptional({
    description: `What rows are, comma-separated: ${ROW_KINDS.map((kind) => `\`${kind}\``).join(', ')}. \`request\` lists requests as clients sent them; the others are nested under one (\`parent_id\`)`,
    example: 'request',
  })
  @IsOptional()
  @IsString()
  @Matches(KIND_FILTER, { message: `kind must be row kinds (${ROW_KINDS.join(', ')}), comma-separated` })
  kind?: string;

  @ApiPropertyOptional({ description: "The rows nested under a request: its failed tries, tool rounds and tool calls (the request's log id)" })
  @IsOptional()
  @IsUUID()
  parent_id?: string;

  @ApiPropertyOptional({ description: 'The lines of a batch: its id (`batch_…` or `msgbatch_…`)', example: 'batch_0196f0c2a1b27c3d8e9f0a1b2c3d4e5f' })
  @IsOptional()
  @Matches(BATCH_ID, { message: 'batch_id must be a batch id (batch_… or msgbatch_…)' })
  batch_id?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsUUID()
  api_key_id?: string;

  @ApiPropertyOptional({ description: 'Virtual key id or slug' })
  @IsOptional()
  @IsString()
  virtual_key?: string;

  @ApiPropertyOptional({ description: 'Config id or slug' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  config?: string;

  @ApiPropertyOptional({ description: 'Prompt id or slug' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  prompt?: string;

  @ApiPropertyOptional({ description: 'Operation(s), comma-separated' })
  @IsOptional()
  @IsString()
  operation?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, inclusive' })
  @IsOptional()
  @IsInstant()
  from?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, exclusive' })
  @IsOptional()
  @IsInstant()
  to?: string;

  @ApiPropertyOptional({ description: 'false leaves request and response bodies out of list rows', default: true })
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  include_bodies = true;
}

/** `GET /v1/logs/export`: the list's filters, a format, and every matching row (no `limit`). */
export class LogExportQueryDto extends LogQueryDto {
  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'csv' })
  @IsOptional()
  @IsIn(EXPORT_FORMATS)
  format: ExportFormat = 'csv';

  @ApiPropertyOptional({ description: 'true adds the request and response bodies and headers (CSV: as JSON text)', default: false })
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  override include_bodies = false;
}
