/** A virtual key as the admin API answers it (VirtualKeysService.toResponse), for the OpenAPI document. */
import { ApiProperty } from '@nestjs/swagger';
import { RateLimitDto } from './key-limits.dto';
import { BudgetStatusResponseDto } from './key-spend.response';

export class VirtualKeyResponseDto extends BudgetStatusResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['virtual_key'] })
  object: 'virtual_key';

  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'Unique in its workspace; what `x-gateway-virtual-key` and `@slug/model` name' })
  slug: string;

  @ApiProperty({ type: String, nullable: true, description: "The workspace's slug" })
  workspace: string | null;

  @ApiProperty({ format: 'uuid' })
  workspace_id: string;

  @ApiProperty({ example: 'openai' })
  provider: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'A hint of the provider credential (its first and last characters), never the credential; null for a keyless provider',
  })
  key_hint: string | null;

  @ApiProperty({ type: String, nullable: true })
  provider_organization: string | null;

  @ApiProperty({ type: String, nullable: true })
  provider_project: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The base URL requests go to, any `user:password@` left out' })
  custom_host: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Provider-specific settings; each secret one (a name in `key`, `token`, `secret`, `password` …) as a hint, never in clear',
  })
  provider_options: Record<string, string>;

  @ApiProperty({ type: [RateLimitDto] })
  rate_limits: RateLimitDto[];

  @ApiProperty({ type: [String], nullable: true, description: 'Null: any model' })
  allowed_models: string[] | null;

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
  expires_at: string | null;

  @ApiProperty()
  disabled: boolean;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_used_at: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}
