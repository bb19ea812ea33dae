import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { Permission, Scope } from '../../context/request-context.decorator';
import type { WorkspaceScope } from '../../context/caller';
import { ListQueryDto, ListResponseDto } from '../../common/http/list.dto';
import { DeletedResponseDto } from '../../common/http/deleted.response';
import { AuditAction, Audited } from '../audit/audited.decorator';
import { ApiKeysService } from './api-keys.service';
import { ConfigsService } from './configs.service';
import { ApiKeyCreateDto, ApiKeyUpdateDto } from './dto/api-key.dto';
import { ApiKeyCreatedResponseDto, ApiKeyResponseDto } from './dto/api-key.response';
import { ConfigCreateDto, ConfigReadQueryDto, ConfigUpdateDto } from './dto/config.dto';
import { ConfigResponseDto, ConfigVersionResponseDto } from './dto/config.response';
import { EndUserCreateDto, EndUserUpdateDto } from './dto/end-user.dto';
import { EndUserResponseDto } from './dto/end-user.response';
import { EndUsersService } from './end-users.service';
import { VirtualKeyCreateDto, VirtualKeyUpdateDto } from './dto/virtual-key.dto';
import { VirtualKeyResponseDto } from './dto/virtual-key.response';
import { VirtualKeysService } from './virtual-keys.service';

@ApiTags('admin: api keys')
@ApiSecurity('gateway-api-key')
@Permission('resources.write')
@Audited<ApiKeysController>({ resource: 'api_key', read: (c, { scope, id }) => c.get(scope, id!) })
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @ApiOperation({ summary: 'Create an API key; the secret is in `key`, returned only here' })
  @ApiCreatedResponse({ type: ApiKeyCreatedResponseDto })
  create(@Scope() scope: WorkspaceScope, @Body() dto: ApiKeyCreateDto) {
    return this.apiKeys.create(scope, dto);
  }

  @Get()
  @Permission('resources.read')
  @ApiOkResponse({ type: ListResponseDto(ApiKeyResponseDto) })
  list(@Scope() scope: WorkspaceScope, @Query() query: ListQueryDto) {
    return this.apiKeys.list(scope, query.limit, query.cursor);
  }

  @Get(':id')
  @Permission('resources.read')
  @ApiOkResponse({ type: ApiKeyResponseDto })
  get(@Scope() scope: WorkspaceScope, @Param('id') id: string) {
    return this.apiKeys.get(scope, id);
  }

  @Patch(':id')
  @ApiOkResponse({ type: ApiKeyResponseDto })
  update(@Scope() scope: WorkspaceScope, @Param('id') id: string, @Body() dto: ApiKeyUpdateDto) {
    return this.apiKeys.update(scope, id, dto);
  }

  @Delete(':id')
  @AuditAction('revoke')
  @ApiOperation({ summary: 'Revoke an API key' })
  @ApiOkResponse({ type: DeletedResponseDto })
  remove(@Scope() scope: WorkspaceScope, @Param('id') id: string) {
    return this.apiKeys.revoke(scope, id);
  }
}

@ApiTags('admin: virtual keys')
@ApiSecurity('gateway-api-key')
@Permission('resources.write')
@Audited<VirtualKeysController>({ resource: 'virtual_key', read: (c, { id, scope }) => c.get(scope, id!) })
@Controller('v1/virtual-keys')
export class VirtualKeysController {
  constructor(private readonly virtualKeys: VirtualKeysService) {}

  @Post()
  @ApiCreatedResponse({ type: VirtualKeyResponseDto })
  create(@Scope() scope: WorkspaceScope, @Body() dto: VirtualKeyCreateDto) {
    return this.virtualKeys.create(scope, dto);
  }

  @Get()
  @Permission('resources.read')
  @ApiOkResponse({ type: ListResponseDto(VirtualKeyResponseDto) })
  list(@Scope() scope: WorkspaceScope, @Query() query: ListQueryDto) {
    return this.virtualKeys.list(scope, query.limit, query.cursor);
  }

  @Get(':idOrSlug')
  @Permission('resources.read')
  @ApiOkResponse({ type: VirtualKeyResponseDto })
  get(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.virtualKeys.get(scope, idOrSlug);
  }

  @Patch(':idOrSlug')
  @ApiOkResponse({ type: VirtualKeyResponseDto })
  update(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Body() dto: VirtualKeyUpdateDto) {
    return this.virtualKeys.update(scope, idOrSlug, dto);
  }

  @Delete(':idOrSlug')
  @ApiOkResponse({ type: DeletedResponseDto })
  remove(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.virtualKeys.remove(scope, idOrSlug);
  }
}

@ApiTags('admin: configs')
@ApiSecurity('gateway-api-key')
@Permission('resources.write')
@Audited<ConfigsController>({ resource: 'config', read: (c, { id, scope }) => c.get(scope, id!, {}) })
@Controller('v1/configs')
export class ConfigsController {
  constructor(private readonly configs: ConfigsService) {}

  @Post()
  @ApiCreatedResponse({ type: ConfigResponseDto })
  create(@Scope() scope: WorkspaceScope, @Body() dto: ConfigCreateDto) {
    return this.configs.create(scope, dto);
  }

  @Get()
  @Permission('resources.read')
  @ApiOkResponse({ type: ListResponseDto(ConfigResponseDto) })
  list(@Scope() scope: WorkspaceScope, @Query() query: ListQueryDto) {
    return this.configs.list(scope, query.limit, query.cursor);
  }

  @Get(':idOrSlug')
  @Permission('resources.read')
  @ApiOperation({ summary: 'Read a config: its latest version, or the one `version` names' })
  @ApiOkResponse({ type: ConfigResponseDto })
  get(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Query() query: ConfigReadQueryDto) {
    return this.configs.get(scope, idOrSlug, query.version);
  }

  @Get(':idOrSlug/versions')
  @Permission('resources.read')
  @ApiOperation({ summary: 'List the versions of a config, newest first' })
  @ApiOkResponse({ type: ListResponseDto(ConfigVersionResponseDto) })
  versions(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Query() query: ListQueryDto) {
    return this.configs.versions(scope, idOrSlug, query.limit, query.cursor);
  }

  @Patch(':idOrSlug')
  @ApiOperation({ summary: 'Update a config; a new config body is a new version, a rename alone is not' })
  @ApiOkResponse({ type: ConfigResponseDto })
  update(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Body() dto: ConfigUpdateDto) {
    return this.configs.update(scope, idOrSlug, dto);
  }

  @Delete(':idOrSlug')
  @ApiOkResponse({ type: DeletedResponseDto })
  remove(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.configs.remove(scope, idOrSlug);
  }
}

@ApiTags('admin: end users')
@ApiSecurity('gateway-api-key')
@Permission('resources.write')
@Audited<EndUsersController>({ resource: 'end_user', read: (c, { id, scope }) => c.get(scope, id!) })
@Controller('v1/end-users')
export class EndUsersController {
  constructor(private readonly endUsers: EndUsersService) {}

  @Post()
  @ApiOperation({ summary: 'Give an end user (the `user` of requests) a budget' })
  @ApiCreatedResponse({ type: EndUserResponseDto })
  create(@Scope() scope: WorkspaceScope, @Body() dto: EndUserCreateDto) {
    return this.endUsers.create(scope, dto);
  }

  @Get()
  @Permission('resources.read')
  @ApiOkResponse({ type: ListResponseDto(EndUserResponseDto) })
  list(@Scope() scope: WorkspaceScope, @Query() query: ListQueryDto) {
    return this.endUsers.list(scope, query.limit, query.cursor);
  }

  @Get(':idOrUser')
  @Permission('resources.read')
  @ApiOkResponse({ type: EndUserResponseDto })
  get(@Scope() scope: WorkspaceScope, @Param('idOrUser') idOrUser: string) {
    return this.endUsers.get(scope, idOrUser);
  }

  @Patch(':idOrUser')
  @ApiOkResponse({ type: EndUserResponseDto })
  update(@Scope() scope: WorkspaceScope, @Param('idOrUser') idOrUser: string, @Body() dto: EndUserUpdateDto) {
    return this.endUsers.update(scope, idOrUser, dto);
  }

  @Delete(':idOrUser')
  @ApiOkResponse({ type: DeletedResponseDto })
  remove(@Scope() scope: WorkspaceScope, @Param('idOrUser') idOrUser: string) {
    return this.endUsers.remove(scope, idOrUser);
  }
}
