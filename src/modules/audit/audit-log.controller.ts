import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ListResponseDto } from '../../common/http/list.dto';
import { AuditLogEntryResponseDto } from './dto/audit-log-entry.response';
import { Permission, Scope } from '../../context/request-context.decorator';
import type { WorkspaceScope } from '../../context/caller';
import { AuditLogService } from './audit-log.service';
import { AuditLogQueryDto } from './dto/audit-log-query.dto';

@ApiTags('admin: audit log')
@ApiSecurity('gateway-api-key')
@Permission('audit.read')
@Controller('v1/audit-log')
export class AuditLogController {
  constructor(private readonly auditLog: AuditLogService) {}

  @Get()
  @ApiOkResponse({ type: ListResponseDto(AuditLogEntryResponseDto) })
  @ApiOperation({ summary: 'Admin changes, newest first (owners): who, when, what, before and after, secrets masked' })
  list(@Scope() scope: WorkspaceScope, @Query() query: AuditLogQueryDto) {
    return this.auditLog.list(scope, query);
  }
}
