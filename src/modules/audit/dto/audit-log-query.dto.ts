import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { ListQueryDto } from '../../../common/http/list.dto';
import { IsInstant } from '../../../common/pipes/validators';
import { AUDIT_RESOURCES, type AuditResource } from '../audit-target';

/** Filters of `GET /v1/audit-log`, with `limit` and `cursor` as every admin list. */
export class AuditLogQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ enum: AUDIT_RESOURCES })
  @IsOptional()
  @IsIn(AUDIT_RESOURCES)
  resource?: AuditResource;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(600)
  resource_id?: string;

  @ApiPropertyOptional({ description: 'The API key or person who made the change' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  actor_id?: string;

  @ApiPropertyOptional({ description: 'create, update, delete, revoke' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  action?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, inclusive' })
  @IsOptional()
  @IsInstant()
  from?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, exclusive' })
  @IsOptional()
  @IsInstant()
  to?: string;
}
