/** An API key as the admin API answers it (ApiKeysService.toResponse), for the OpenAPI document. */
import { ApiProperty } from '@nestjs/swagger';
import { ROLES, type Role } from '../../workspaces/roles';
import { RateLimitDto } from './key-limits.dto';
import { BudgetStatusResponseDto } from './key-spend.response';

export class ApiKeyResponseDto extends BudgetStatusResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['api_key'] })
  object: 'api_key';

  @ApiProperty()
  name: string;

  @ApiProperty({ enum: ROLES })
  role: Role;

  @ApiProperty({ type: String, nullable: true, description: "The workspace's slug" })
  workspace: string | null;

  @ApiProperty({ format: 'uuid' })
  workspace_id: string;

  @ApiProperty({ description: 'The first and last characters of the secret, to tell keys apart' })
  key_hint: string;

  @ApiProperty({ description: "GATEWAY_ADMIN_KEY's own row: it cannot be revoked or demoted" })
  is_bootstrap: boolean;

  @ApiProperty({ type: [RateLimitDto] })
  rate_limits: RateLimitDto[];

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expires_at: string | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  metadata: Record<string, string>;

  @ApiProperty({ type: String, nullable: true, description: "Slug of the virtual key that routes this key's requests naming no route" })
  default_virtual_key: string | null;

  @ApiProperty({ type: String, nullable: true, description: "Slug or id of the stored config that routes this key's requests naming no route" })
  default_config: string | null;

  @ApiProperty({ type: [String], nullable: true, description: 'MCP servers (slugs) this key may use' })
  allowed_mcp_servers: string[] | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    nullable: true,
    description: 'Per MCP server slug, the tools this key may call there',
  })
  allowed_tools: Record<string, string[]> | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_used_at: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}

/** The creation's answer: the key and its secret, shown only here. */
export class ApiKeyCreatedResponseDto extends ApiKeyResponseDto {
  @ApiProperty({ description: 'The secret (gk-…), returned only on creation' })
  key: string;
}
