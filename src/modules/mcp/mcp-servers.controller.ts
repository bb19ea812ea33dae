import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ListQueryDto } from '../../common/http/list.dto';
import { Audited } from '../audit/audited.decorator';
import { Permission, Scope } from '../../context/request-context.decorator';
import type { WorkspaceScope } from '../../context/caller';
import { McpServerCreateDto, McpServerUpdateDto } from './dto/mcp-server.dto';
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
  create(@Scope() scope: WorkspaceScope, @Body() dto: McpServerCreateDto) {
    return this.servers.create(scope, dto);
  }

  @Get()
  @Permission('resources.read')
  list(@Scope() scope: WorkspaceScope, @Query() query: ListQueryDto) {
    return this.servers.list(scope, query.limit, query.cursor);
  }

  @Get(':idOrSlug')
  @Permission('resources.read')
  get(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.servers.get(scope, idOrSlug);
  }

  @Get(':idOrSlug/tools')
  @Permission('resources.read')
  @ApiOperation({ summary: "The tools the server lists now, each with whether the registry's allow-list lets callers use it" })
  tools(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.servers.tools(scope, idOrSlug);
  }

  @Patch(':idOrSlug')
  @ApiOperation({ summary: 'Update an MCP server; a header sent back as its masked hint keeps the stored value' })
  update(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Body() dto: McpServerUpdateDto) {
    return this.servers.update(scope, idOrSlug, dto);
  }

  @Delete(':idOrSlug')
  remove(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.servers.remove(scope, idOrSlug);
  }
}
