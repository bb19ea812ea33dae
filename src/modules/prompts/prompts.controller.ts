import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Permission, Ctx, Operation, Scope } from '../../context/request-context.decorator';
import type { WorkspaceScope } from '../../context/caller';
import { sendGatewayResult } from '../routing/gateway-result';
import { ListQueryDto, ListResponseDto } from '../../common/http/list.dto';
import { DeletedResponseDto } from '../../common/http/deleted.response';
import { Audited } from '../audit/audited.decorator';
import { PromptCreateDto, PromptUpdateDto, PromptVersionQueryDto } from './dto/prompt.dto';
import { PromptCallDto } from './dto/prompt-completion.dto';
import { PromptResponseDto, PromptVersionResponseDto } from './dto/prompt.response';
import { PromptCompletionsService } from './prompt-completions.service';
import { PromptsService } from './prompts.service';

@ApiTags('admin: prompts')
@ApiSecurity('gateway-api-key')
@Permission('resources.write')
@Audited<PromptsController>({ resource: 'prompt', read: (c, { id, scope }) => c.get(scope, id!, {}) })
@Controller('v1/prompts')
export class PromptsController {
  constructor(
    private readonly prompts: PromptsService,
    private readonly completions: PromptCompletionsService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a prompt template (version 1)' })
  @ApiCreatedResponse({ type: PromptResponseDto })
  create(@Scope() scope: WorkspaceScope, @Body() dto: PromptCreateDto) {
    return this.prompts.create(scope, dto);
  }

  @Get()
  @Permission('resources.read')
  @ApiOkResponse({ type: ListResponseDto(PromptResponseDto) })
  list(@Scope() scope: WorkspaceScope, @Query() query: ListQueryDto) {
    return this.prompts.list(scope, query.limit, query.cursor);
  }

  @Get(':idOrSlug')
  @Permission('resources.read')
  @ApiOperation({ summary: 'Read a prompt: its latest version, or the one `version` names' })
  @ApiOkResponse({ type: PromptResponseDto })
  get(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Query() query: PromptVersionQueryDto) {
    return this.prompts.get(scope, idOrSlug, query.version);
  }

  @Get(':idOrSlug/versions')
  @Permission('resources.read')
  @ApiOperation({ summary: 'List the versions of a prompt, newest first' })
  @ApiOkResponse({ type: ListResponseDto(PromptVersionResponseDto) })
  versions(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Query() query: ListQueryDto) {
    return this.prompts.versions(scope, idOrSlug, query.limit, query.cursor);
  }

  @Patch(':idOrSlug')
  @ApiOperation({ summary: 'Update a prompt; any template field makes a new version' })
  @ApiOkResponse({ type: PromptResponseDto })
  update(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Body() dto: PromptUpdateDto) {
    return this.prompts.update(scope, idOrSlug, dto);
  }

  @Delete(':idOrSlug')
  @ApiOkResponse({ type: DeletedResponseDto })
  remove(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string) {
    return this.prompts.remove(scope, idOrSlug);
  }

  @Post(':idOrSlug/render')
  @Permission('resources.read')
  @HttpCode(200)
  @ApiOperation({ summary: 'The chat completion request a call would send, without sending it' })
  render(@Scope() scope: WorkspaceScope, @Param('idOrSlug') idOrSlug: string, @Body() body: PromptCallDto, @Query() query: PromptVersionQueryDto) {
    return this.completions.render(scope, idOrSlug, body, query.version);
  }
}

/** Running a prompt is a model operation: any API key may, as for chat. */
@ApiTags('prompts')
@ApiSecurity('gateway-api-key')
@Controller('v1/prompts')
export class PromptCompletionsController {
  constructor(private readonly completions: PromptCompletionsService) {}

  @Post(':idOrSlug/completions')
  @HttpCode(200)
  @Operation('prompts.completions')
  @ApiOperation({ summary: 'Run a prompt template: a chat completion, or its SSE stream with stream: true' })
  async complete(
    @Ctx() context: RequestContext,
    @Param('idOrSlug') idOrSlug: string,
    @Body() body: PromptCallDto,
    @Query() query: PromptVersionQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    sendGatewayResult(res, context, await this.completions.complete(context, idOrSlug, body, query.version));
  }
}
