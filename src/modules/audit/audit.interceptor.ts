import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Request } from 'express';
import { concatMap, from, Observable, switchMap } from 'rxjs';
import { GatewayError } from '../../common/errors/gateway-error';
import { maybeContextOf } from '../../context/request-context';
import { AUDIT_ACTION, type AuditedRequest, type AuditTarget, type ResourceView } from './audit-target';
import { auditedRoute, type AuditedRoute } from './audit-coverage';
import { maskForAudit } from './audit-masking';
import { AuditLogService } from './audit-log.service';

interface HandlerFacts extends AuditedRoute {
  target: AuditTarget;
  action: string | undefined;
}

/**
 * Writes every admin change to the audit log, so that no service carries audit code and
 * no route can forget it (audit-coverage.ts refuses to start without it). Before the
 * handler: the resource as its own admin read shows it (`before`). After a 2xx answer: the
 * answer, masked (`after`; null for a delete), in the same request; a refused change (any
 * error) writes nothing.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  private readonly facts = new WeakMap<Function, HandlerFacts | null>();

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly auditLog: AuditLogService,
  ) {}

  intercept(execution: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (execution.getType() !== 'http') return next.handle();
    const facts = this.factsOf(execution);
    if (!facts) return next.handle();
    const req = execution.switchToHttp().getRequest<Request>();
    const scope = maybeContextOf(req)?.scope;
    // The guard sets a scope on every route that needs a permission above models.call.
    if (!scope) throw new Error(`${execution.getClass().name}.${execution.getHandler().name}: an audited change without a workspace scope`);
    const params = (req.params ?? {}) as AuditedRequest['params'];
    const values = Object.values(params);
    const body = req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
    const request: AuditedRequest = { scope, params, body, id: values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined };
    const controller: unknown = this.moduleRef.get(execution.getClass(), { strict: false });

    return from(this.before(facts, controller, request)).pipe(
      switchMap((before) => next.handle().pipe(concatMap((answer) => from(this.record(facts, request, before, answer).then(() => answer))))),
    );
  }

  private async before(facts: HandlerFacts, controller: unknown, request: AuditedRequest): Promise<ResourceView | null> {
    if (request.id === undefined && !facts.target.upsert) return null;
    try {
      return asView(maskForAudit(await facts.target.read(controller, request)));
    } catch (error) {
      // Nothing there: the change itself answers (a 404 writes nothing, an upsert creates).
      if (error instanceof GatewayError && error.status === 404) return null;
      throw error;
    }
  }

  private async record(facts: HandlerFacts, request: AuditedRequest, before: ResourceView | null, answer: unknown): Promise<void> {
    const removal = facts.method === 'DELETE';
    const after = removal ? null : asView(maskForAudit(answer));
    const action = facts.action ?? (removal ? 'delete' : facts.method === 'POST' && before === null ? 'create' : 'update');
    const view = after ?? before;
    const { target } = facts;
    const resourceId = view ? (target.idOf ? target.idOf(view) : typeof view.id === 'string' ? view.id : null) : (request.id ?? null);
    const workspaceId = target.workspaceOf
      ? target.workspaceOf(view, request)
      : typeof view?.workspace_id === 'string'
        ? view.workspace_id
        : request.scope.workspaceId;
    await this.auditLog.record({ workspaceId, actor: request.scope.caller, action, resource: target.resource, resourceId, before, after });
  }

  private factsOf(execution: ExecutionContext): HandlerFacts | null {
    const handler = execution.getHandler();
    let facts = this.facts.get(handler);
    if (facts === undefined) {
      const route = auditedRoute(execution.getClass(), handler);
      if (route && !route.target) throw new Error(`${execution.getClass().name}.${handler.name} changes a resource but has no @Audited()`);
      facts = route?.target ? { ...route, target: route.target, action: Reflect.getMetadata(AUDIT_ACTION, handler) as string | undefined } : null;
      this.facts.set(handler, facts);
    }
    return facts;
  }
}

function asView(value: unknown): ResourceView | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as ResourceView) : null;
}
