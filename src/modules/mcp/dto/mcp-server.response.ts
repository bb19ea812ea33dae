/** An MCP server of the registry as the admin API answers it (McpServersService), for the OpenAPI document. */
import { ApiProperty } from '@nestjs/swagger';

export class McpServerResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['mcp_server'] })
  object: 'mcp_server';

  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'Unique in its workspace; what `x-gateway-mcp` and `/v1/mcp/{slug}` name' })
  slug: string;

  @ApiProperty({ type: String, nullable: true, description: "The workspace's slug" })
  workspace: string | null;

  @ApiProperty({ format: 'uuid' })
  workspace_id: string;

  @ApiProperty({ example: 'https://mcp.example.com/mcp' })
  url: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'The headers sent to the server (credentials), each value as a hint of it, never in clear',
  })
  headers: Record<string, string>;

  @ApiProperty({ type: [String], nullable: true, description: 'The tools callers may use; null: every tool the server lists' })
  allowed_tools: string[] | null;

  @ApiProperty({ type: String, nullable: true })
  description: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}

/** A tool of `GET /v1/mcp-servers/{id}/tools`: one the server lists now, and whether the allow-list lets callers use it. */
export class McpServerToolResponseDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ type: String, nullable: true })
  description: string | null;

  @ApiProperty({ description: "Whether the registry's allow-list (allowed_tools) lets callers use it" })
  allowed: boolean;
}

/** The answer of `GET /v1/mcp-servers/{id}/tools`: every tool, in one page. */
export class McpServerToolListResponseDto {
  @ApiProperty({ enum: ['list'] })
  object: 'list';

  @ApiProperty({ type: [McpServerToolResponseDto] })
  data: McpServerToolResponseDto[];
}
