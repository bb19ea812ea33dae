import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, Matches, ValidateIf } from 'class-validator';
import { IsRecordOf } from './string-record.validator';
import { KeyLimitsDto } from './key-limits.dto';

const SERVER_SLUG = /^[a-z0-9-]{1,64}$/;
const MAX_SERVERS = 256;
const MAX_TOOLS = 1024;

/** `{"<server slug>": ["tool", …]}`: slugs as servers are named, tool names as non-empty strings. */
const IsToolAllowList = () =>
  IsRecordOf(
    'isToolAllowList',
    MAX_SERVERS,
    (slug, tools) =>
      SERVER_SLUG.test(slug) &&
      Array.isArray(tools) &&
      tools.length <= MAX_TOOLS &&
      tools.every((tool) => typeof tool === 'string' && tool.length > 0 && tool.length <= 128),
    (property) => `${property} must be an object of MCP server slugs ([a-z0-9-]+) to arrays of tool names`,
  );

/** Budget, limits, expiry, and the MCP servers and tools a key may use: on API keys and virtual keys. */
export class KeyAccessDto extends KeyLimitsDto {
  @ApiPropertyOptional({
    nullable: true,
    type: [String],
    description: 'MCP server slugs this key may use (null: every server for admin keys, none for user keys; no restriction on a virtual key)',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsArray()
  @ArrayMaxSize(MAX_SERVERS)
  @Matches(SERVER_SLUG, { each: true, message: 'allowed_mcp_servers must be MCP server slugs ([a-z0-9-]+)' })
  allowed_mcp_servers?: string[] | null;

  @ApiPropertyOptional({
    nullable: true,
    description: 'Per MCP server slug, the tools this key may call there: {"<slug>": ["tool", …]} (a server absent: every tool it allows)',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsToolAllowList()
  allowed_tools?: Record<string, string[]> | null;
}
