import { Controller, Get, Param, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Permission, Scope } from '../../gateway/request-context.decorator';
import type { WorkspaceScope } from '../workspaces/workspace-scope';
import { LogQueryDto } from './dto/log-query.dto';
import { LogsService } from './logs.service';

/** `metadata.<key>=<value>` query parameters, which a DTO cannot name in advance. */
function metadataFilters(query: Request['query']): Record<string, string> {
  return Object.fromEntries(
    Object.entries(query)
      .filter(([key, value]) => key.startsWith('metadata.') && key.length > 9 && typeof value === 'string')
      .map(([key, value]) => [key.slice(9), value as string]),
  );
}

@ApiTags('logs')
@ApiSecurity('gateway-api-key')
@Permission('logs.read')
@Controller('v1/logs')
export class LogsController {
  constructor(private readonly logs: LogsService) {}

  @Get()
  @ApiOperation({ summary: "List request logs of the caller's workspace, newest first; member keys see only their own" })
  list(@Scope() scope: WorkspaceScope, @Query() query: LogQueryDto, @Req() req: Request) {
    return this.logs.list(scope, query, metadataFilters(req.query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One request log with its full request and response' })
  get(@Scope() scope: WorkspaceScope, @Param('id') id: string) {
    return this.logs.get(scope, id);
  }
}
