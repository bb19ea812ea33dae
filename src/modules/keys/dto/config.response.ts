/** A stored config and its versions as the admin API answers them (ConfigsService), for the OpenAPI document. */
import { ApiProperty } from '@nestjs/swagger';

const CONFIG_DESCRIPTION =
  'The gateway config (CONTRACT section 5); each credential inside (every `api_key`, every header value) as a hint of it (`sk-…abcd`), never in clear';

/** A config: its latest version, or the one `?version=` names. */
export class ConfigResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['config'] })
  object: 'config';

  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'Unique in its workspace; what `x-gateway-config` names' })
  slug: string;

  @ApiProperty({ type: String, nullable: true, description: "The workspace's slug" })
  workspace: string | null;

  @ApiProperty({ format: 'uuid' })
  workspace_id: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  version: number;

  @ApiProperty({ type: 'object', additionalProperties: true, description: CONFIG_DESCRIPTION })
  config: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time', description: 'When this version was written' })
  updated_at: string;
}

/** One version of `GET /v1/configs/{id}/versions`. */
export class ConfigVersionResponseDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  version: number;

  @ApiProperty({ description: "The config's name when this version was written" })
  name: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: CONFIG_DESCRIPTION })
  config: Record<string, unknown>;
}
