import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ListPage } from '../../common/http/list.dto';
import { uuidv7 } from '../../common/ids';
import { pageNewestFirst } from '../keys/admin-list';
import { storableJson } from '../logging/storable-record';
import type { WorkspaceScope } from '../../context/caller';
import { AuditLogEntity } from './audit-log.entity';
import type { AuditLogQueryDto } from './dto/audit-log-query.dto';

/** One change to write: the actor is the caller of the scope the key guard worked out. */
export interface AuditEntry {
  workspaceId: string | null;
  actor: WorkspaceScope['caller'];
  action: string;
  resource: string;
  resourceId: string | null;
  before: unknown;
  after: unknown;
}

@Injectable()
export class AuditLogService {
  private readonly logger = new Logger(AuditLogService.name);

  constructor(@InjectRepository(AuditLogEntity) private readonly repo: Repository<AuditLogEntity>) {}

  /**
   * Written in the request that made the change, after it (the services commit their own
   * transactions). A write that fails is the caller's error, never silent: a 503 saying the
   * change was made but not recorded, and an error line naming it for the operator.
   */
  async record(entry: AuditEntry): Promise<void> {
    const now = Date.now();
    try {
      await this.repo.insert({
        id: uuidv7(now),
        createdAt: new Date(now),
        workspaceId: entry.workspaceId,
        actorKind: entry.actor.kind,
        actorId: entry.actor.id,
        actorName: entry.actor.name,
        action: entry.action,
        resource: entry.resource,
        resourceId: entry.resourceId,
        // An admin body may hold a lone surrogate or NUL (a name, a config value) that jsonb refuses.
        before: storableJson(entry.before) as object,
        after: storableJson(entry.after) as object,
      });
    } catch (error) {
      this.logger.error(
        `Audit record lost: ${entry.action} ${entry.resource} ${entry.resourceId ?? ''} by ${entry.actor.kind} ${entry.actor.id} was made but not recorded: ${(error as Error).message}`,
      );
      throw new GatewayError(
        503,
        'service_unavailable',
        `The ${entry.resource} ${entry.action} was made, but its audit record could not be written; the operator has been told in the gateway's log. Check the change before trying again.`,
        'audit_log_unavailable',
      );
    }
  }

  /** Newest first, inside the scope (an owner: every workspace, or the one x-gateway-workspace names). */
  async list(scope: WorkspaceScope, query: AuditLogQueryDto): Promise<ListPage<Record<string, unknown>>> {
    const conditions: string[] = [];
    const params: Record<string, unknown> = {};
    if (scope.visible !== null) {
      conditions.push('row.workspace_id in (:...visible)');
      params.visible = [...scope.visible];
    }
    for (const [field, column] of [
      ['resource', 'resource'],
      ['resource_id', 'resource_id'],
      ['actor_id', 'actor_id'],
      ['action', 'action'],
    ] as const) {
      if (query[field] === undefined) continue;
      conditions.push(`row.${column} = :${field}`);
      params[field] = query[field];
    }
    if (query.from) {
      conditions.push('row.created_at >= :from');
      params.from = new Date(query.from);
    }
    if (query.to) {
      conditions.push('row.created_at < :to');
      params.to = new Date(query.to);
    }
    const page = await pageNewestFirst(this.repo, conditions.length ? conditions.join(' and ') : 'true', query.limit, query.cursor, params);
    return { ...page, data: page.data.map(auditEntryResponse) };
  }
}

/** An entry's wire shape (AuditLogEntryResponseDto). */
export function auditEntryResponse(row: AuditLogEntity): Record<string, unknown> {
  return {
    id: row.id,
    object: 'audit_log_entry',
    created_at: row.createdAt.toISOString(),
    workspace_id: row.workspaceId,
    actor: { kind: row.actorKind, id: row.actorId, name: row.actorName },
    action: row.action,
    resource: row.resource,
    resource_id: row.resourceId,
    before: row.before ?? null,
    after: row.after ?? null,
  };
}
