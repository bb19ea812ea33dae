import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ListQueryDto } from '../../common/http/list.dto';
import { Audited } from '../audit/audited.decorator';
import { Permission } from '../../gateway/request-context.decorator';
import { McpServerCreateDto, McpServerUpdateDto } from './dto/mcp-server.dto';
import { McpServersService } from './mcp-servers.service';

@ApiTags('admin: MCP servers')
@ApiSecurity('gateway-api-key')
@Permission('resources.write')
@Audited<McpServersController>({ resource: 'mcp_server', read: (c, { id }) => c.get(id!) })
@Controller('v1/mcp-servers')
export class McpServersController {
  constructor(private readonly servers: McpServersService) {}

  @Post()
  @ApiOperation({ summary: 'Register an MCP server; its headers are encrypted at rest and masked on every read' })
  create(@Body() dto: McpServerCreateDto) {
    return this.servers.create(dto);
  }

  @Get()
  @Permission('resources.read')
  list(@Query() query: ListQueryDto) {
    return this.servers.list(query.limit, query.cursor);
  }

  @Get(':idOrSlug')
  @Permission('resources.read')
  get(@Param('idOrSlug') idOrSlug: string) {
    return this.servers.get(idOrSlug);
  }

  @Patch(':idOrSlug')
  @ApiOperation({ summary: 'Update an MCP server; a header sent back as its masked hint keeps the stored value' })
  update(@Param('idOrSlug') idOrSlug: string, @Body() dto: McpServerUpdateDto) {
    return this.servers.update(idOrSlug, dto);
  }

  @Delete(':idOrSlug')
  remove(@Param('idOrSlug') idOrSlug: string) {
    return this.servers.remove(idOrSlug);
  }
}
