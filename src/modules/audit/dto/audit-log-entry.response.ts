/** `GET /v1/audit-log`'s entries as the OpenAPI document describes them (see `toResponse` in audit-log.service.ts). */
import { ApiProperty } from '@nestjs/swagger';

export class AuditActorResponseDto {
  @ApiProperty({ description: 'What acted: an API key, a signed-in user, the gateway itself' })
  kind: string;

  @ApiProperty()
  id: string;

  @ApiProperty()
  name: string;
}

export class AuditLogEntryResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['audit_log_entry'] })
  object: 'audit_log_entry';

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'Null for a change of the whole gateway (workspaces, prices)' })
  workspace_id: string | null;

  @ApiProperty({ type: AuditActorResponseDto })
  actor: AuditActorResponseDto;

  @ApiProperty({ example: 'update' })
  action: string;

  @ApiProperty({ example: 'api_key' })
  resource: string;

  @ApiProperty({ type: String, nullable: true })
  resource_id: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'The object before the change, secrets masked' })
  before: Record<string, unknown> | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'The object after the change, secrets masked' })
  after: Record<string, unknown> | null;
}
