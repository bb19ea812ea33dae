import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ListResponseDto } from '../../common/http/list.dto';
import type { Request, Response } from 'express';
import { Permission, Scope } from '../../context/request-context.decorator';
import type { WorkspaceScope } from '../../context/caller';
import { LogExportQueryDto, LogQueryDto } from './dto/log-query.dto';
import { LogStorageQueryDto } from './dto/log-storage-query.dto';
import { LogRowResponseDto } from './dto/log-row.response';
import { sendTable } from './table-export';
import { LogsService } from './logs.service';

/** `metadata.<key>=<value>` query parameters, which a DTO cannot name in advance. */
function metadataFilters(query: Request['query']): Record<string, string> {
  return Object.fromEntries(
    Object.entries(query)
      .filter(([key, value]) => key.startsWith('metadata.') && key.length > 9 && typeof value === 'string')
      .map(([key, value]) => [key.slice(9), value as string]),
  );
}

/** The columns of a CSV export, in order (the log row's fields but the bodies). */
const LOG_EXPORT_COLUMNS = [
  'id',
  'created_at',
  'trace_id',
  'kind',
  'parent_id',
  'failed_attempts',
  'nested_rows',
  'batch_id',
  'custom_id',
  'operation',
  'api_key_id',
  'virtual_key_id',
  'config_id',
  'prompt_id',
  'prompt_version',
  'user',
  'provider',
  'model',
  'status_code',
  'is_stream',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cached_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'cost_usd',
  'latency_ms',
  'ttft_ms',
  'cache_status',
  'retry_count',
  'target_index',
  'error',
  'metadata',
  'billed_units',
  'ignored_params',
  'guardrails',
  'tool_calls',
];

@ApiTags('logs')
@ApiSecurity('gateway-api-key')
@Permission('logs.read')
@Controller('v1/logs')
export class LogsController {
  constructor(private readonly logs: LogsService) {}

  @Get()
  @ApiOperation({ summary: "List request logs of the caller's workspace, newest first; member keys see only their own" })
  @ApiOkResponse({ type: ListResponseDto(LogRowResponseDto) })
  list(@Scope() scope: WorkspaceScope, @Query() query: LogQueryDto, @Req() req: Request) {
    return this.logs.list(scope, query, metadataFilters(req.query));
  }

  @Get('export')
  @ApiOperation({ summary: 'Every log row the filters select, newest first, as a CSV or JSON download streamed as it is read' })
  async export(@Scope() scope: WorkspaceScope, @Query() query: LogExportQueryDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const metadata = metadataFilters(req.query);
    const columns = query.include_bodies ? [...LOG_EXPORT_COLUMNS, 'request_headers', 'request_body', 'response_body'] : LOG_EXPORT_COLUMNS;
    const stamp = new Date().toISOString().slice(0, 19).replace(/:/g, '-');
    await sendTable(res, query.format, `request-logs-${stamp}`, columns, this.logs.exportBatches(scope, query, metadata));
  }

  @Get('storage')
  @Permission('resources.read')
  @ApiOperation({ summary: 'What the log stores by UTC day: rows, body parts, bytes received against bytes stored (CONTRACT section 14)' })
  storage(@Scope() scope: WorkspaceScope, @Query() query: LogStorageQueryDto) {
    return this.logs.storage(scope, query.days);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One request log with its full request and response' })
  @ApiOkResponse({ type: LogRowResponseDto })
  get(@Scope() scope: WorkspaceScope, @Param('id') id: string) {
    return this.logs.get(scope, id);
  }
}
