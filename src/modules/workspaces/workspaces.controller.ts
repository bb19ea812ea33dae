import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ListQueryDto, ListResponseDto } from '../../common/http/list.dto';
import { DeletedResponseDto } from '../../common/http/deleted.response';
import { Audited } from '../audit/audited.decorator';
import { Permission, Scope } from '../../context/request-context.decorator';
import { WorkspaceCreateDto, WorkspaceUpdateDto } from './dto/workspace.dto';
import { WorkspaceResponseDto } from './dto/workspace.response';
import type { WorkspaceScope } from '../../context/caller';
import { WorkspacesService } from './workspaces.service';

@ApiTags('admin: workspaces')
@ApiSecurity('gateway-api-key')
@Permission('organisation.manage')
@Audited<WorkspacesController>({
  resource: 'workspace',
  read: (c, { scope, id }) => c.get(scope, id!),
  workspaceOf: (view) => (typeof view?.id === 'string' ? view.id : null),
})
@Controller('v1/workspaces')
export class WorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Post()
  @ApiOperation({ summary: 'Create a workspace (organisation owners)' })
  @ApiCreatedResponse({ type: WorkspaceResponseDto })
  create(@Body() dto: WorkspaceCreateDto) {
    return this.workspaces.create(dto);
  }

  @Get()
  @Permission('workspaces.read')
  @ApiOperation({ summary: 'The workspaces the caller acts in: every one for an owner' })
  @ApiOkResponse({ type: ListResponseDto(WorkspaceResponseDto) })
  list(@Scope() scope: WorkspaceScope, @Query() query: ListQueryDto) {
    return this.workspaces.list(scope, query.limit, query.cursor);
  }

  @Get(':idOrSlug')
  @Permission('workspaces.read')
  @ApiOkResponse({ type: WorkspaceResponseDto })
  get(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.workspaces.get(scope, idOrSlug);
  }

  @Patch(':idOrSlug')
  @ApiOperation({ summary: 'Rename a workspace or change its budget and rate limits, which hold across all its keys' })
  @ApiOkResponse({ type: WorkspaceResponseDto })
  update(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Body() dto: WorkspaceUpdateDto) {
    return this.workspaces.update(scope, idOrSlug, dto);
  }

  @Delete(':idOrSlug')
  @ApiOperation({ summary: 'Delete an empty workspace' })
  @ApiOkResponse({ type: DeletedResponseDto })
  remove(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.workspaces.remove(scope, idOrSlug);
  }
}
