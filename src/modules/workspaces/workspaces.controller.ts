import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ListQueryDto } from '../../common/http/list.dto';
import { Audited } from '../audit/audited.decorator';
import { Permission, Scope } from '../../context/request-context.decorator';
import { WorkspaceCreateDto, WorkspaceUpdateDto } from './dto/workspace.dto';
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
  create(@Body() dto: WorkspaceCreateDto) {
    return this.workspaces.create(dto);
  }

  @Get()
  @Permission('workspaces.read')
  @ApiOperation({ summary: 'The workspaces the caller acts in: every one for an owner' })
  list(@Scope() scope: WorkspaceScope, @Query() query: ListQueryDto) {
    return this.workspaces.list(scope, query.limit, query.cursor);
  }

  @Get(':idOrSlug')
  @Permission('workspaces.read')
  get(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.workspaces.get(scope, idOrSlug);
  }

  @Patch(':idOrSlug')
  @ApiOperation({ summary: 'Rename a workspace or change its budget and rate limits, which hold across all its keys' })
  update(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Body() dto: WorkspaceUpdateDto) {
    return this.workspaces.update(scope, idOrSlug, dto);
  }

  @Delete(':idOrSlug')
  @ApiOperation({ summary: 'Delete an empty workspace' })
  remove(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.workspaces.remove(scope, idOrSlug);
  }
}
