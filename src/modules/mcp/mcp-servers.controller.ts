import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ListQueryDto, ListResponseDto } from '../../common/http/list.dto';
import { DeletedResponseDto } from '../../common/http/deleted.response';
import { Audited } from '../audit/audited.decorator';
import { Permission, Scope } from '../../context/request-context.decorator';
import type { WorkspaceScope } from '../../context/caller';
import { McpServerCreateDto, McpServerUpdateDto } from './dto/mcp-server.dto';
import { McpServerResponseDto, McpServerToolListResponseDto } from './dto/mcp-server.response';
import { McpServersService } from './mcp-servers.service';

@ApiTags('admin: MCP servers')
@ApiSecurity('gateway-api-key')
@Permission('resources.write')
@Audited<McpServersController>({ resource: 'mcp_server', read: (c, { id, scope }) => c.get(scope, id!) })
@Controller('v1/mcp-servers')
export class McpServersController {
  constructor(private readonly servers: McpServersService) {}

  @Post()
  @ApiOperation({ summary: 'Register an MCP server; its headers are encrypted at rest and masked on every read' })
  @ApiCreatedResponse({ type: McpServerResponseDto })
  create(@Scope() scope: WorkspaceScope, @Body() dto: McpServerCreateDto) {
    return this.servers.create(scope, dto);
  }

  @Get()
  @Permission('resources.read')
  @ApiOkResponse({ type: ListResponseDto(McpServerResponseDto) })
  list(@Scope() scope: WorkspaceScope, @Query() query: ListQueryDto) {
    return this.servers.list(scope, query.limit, query.cursor);
  }

  @Get(':idOrSlug')
  @Permission('resources.read')
  @ApiOkResponse({ type: McpServerResponseDto })
  get(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.servers.get(scope, idOrSlug);
  }

  @Get(':idOrSlug/tools')
  @Permission('resources.read')
  @ApiOperation({ summary: "The tools the server lists now, each with whether the registry's allow-list lets callers use it" })
  @ApiOkResponse({ type: McpServerToolListResponseDto })
  tools(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.servers.tools(scope, idOrSlug);
  }

  @Patch(':idOrSlug')
  @ApiOperation({ summary: 'Update an MCP server; a header sent back as its masked hint keeps the stored value' })
  @ApiOkResponse({ type: McpServerResponseDto })
  update(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Body() dto: McpServerUpdateDto) {
    return this.servers.update(scope, idOrSlug, dto);
  }

  @Delete(':idOrSlug')
  @ApiOkResponse({ type: DeletedResponseDto })
  remove(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.servers.remove(scope, idOrSlug);
  }
}
