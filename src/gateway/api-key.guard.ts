import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { SessionService } from '../modules/auth/session.service';
import { authenticate, CookieAuthentication } from '../modules/keys/authenticate';
import { KeyLookupService } from '../modules/keys/key-lookup.service';
import { Permission, Role, ROLES, roleMay } from '../modules/workspaces/roles';
import { WorkspaceDirectory } from '../modules/workspaces/workspace-directory';
import { scopeOf } from '../modules/workspaces/workspace-scope';
import { maybeContextOf } from '../context/request-context';
import { OPERATION, PERMISSION, PUBLIC } from '../context/request-context.decorator';
import { GatewayError } from '../common/errors/gateway-error';
import { ThrottledWarning } from '../common/logging/throttled-warning';
import type { ApiKeyPrincipal } from '../context/caller';

/**
 * Second step of the request path: `x-gateway-api-key` to an API key, from the
 * in-process cache (without a key, the dashboard's session cookie: a person signed in with
 * OpenID Connect, or an API-key sign-in; writes need its CSRF token), and the one place
 * where a route's permission is checked against the caller's role (roles.ts). Also reads
 * the request-wide headers every operation shares (trace id, metadata), so that a bad one
 * is a 400 before any work is done.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: KeyLookupService,
    private readonly workspaces: WorkspaceDirectory,
    private readonly sessions: SessionService,
  ) {}

  /** Route metadata read once per handler, not on every request. */
  private readonly routeFacts = new WeakMap<Function, RouteFacts>();
  private readonly logger = new Logger('ApiKeyGuard');
  /** Refusals of unauthenticated callers, throttled: anyone can send them, as fast as they like. */
  private readonly unauthenticated = new ThrottledWarning(this.logger, 10_000);

  async canActivate(execution: ExecutionContext): Promise<boolean> {
    const facts = this.factsOf(execution);
    if (facts.isPublic) return true;

    const req = execution.switchToHttp().getRequest<Request>();
    const context = maybeContextOf(req);
    if (context) context.operation = facts.operation;

    let principal: ApiKeyPrincipal;
    try {
      principal = await authenticate(this.keys, req.headers, context, SAFE_METHODS.has(req.method) ? facts.cookieRead : facts.cookieWrite);
    } catch (error) {
      if (error instanceof GatewayError) this.unauthenticated.warn(`Refused ${req.method} ${req.path} (${error.status} ${error.code}): ${error.message}`);
      throw error;
    }
    if (facts.permission === 'models.call') {
      // The hot path: the key's own role, no workspace to work out.
      if (!roleMay(principal.role, 'models.call')) throw this.refuse(req, principal, principal.role, 'models.call');
      return true;
    }
    const scope = await scopeOf(principal, req.headers['x-gateway-workspace'], this.workspaces);
    if (!roleMay(scope.caller.role, facts.permission)) throw this.refuse(req, principal, scope.caller.role, facts.permission);
    if (context) context.scope = scope;
    return true;
  }

  /** The 403, with a log line naming who was refused what (the key by id and name, never its secret). */
  private refuse(req: Request, principal: ApiKeyPrincipal, role: Role, permission: Permission): GatewayError {
    const error = forbidden(role, permission);
    const who = principal.kind === 'person' ? `person ${principal.name} (user ${principal.id})` : `API key ${principal.name} (${principal.id})`;
    this.logger.warn(`Refused ${req.method} ${req.path} (403 ${error.code}): ${who} has role ${role}, the route needs ${permission}`);
    return error;
  }

  private factsOf(execution: ExecutionContext): RouteFacts {
    const handler = execution.getHandler();
    let facts = this.routeFacts.get(handler);
    if (!facts) {
      const targets = [handler, execution.getClass()];
      const operation = this.reflector.getAllAndOverride<string>(OPERATION, targets);
      const isPublic = this.reflector.getAllAndOverride<boolean>(PUBLIC, targets) ?? false;
      const permission = this.reflector.getAllAndOverride<Permission>(PERMISSION, targets) ?? (operation ? 'models.call' : undefined);
      if (!isPublic && !permission)
        throw new Error(`${execution.getClass().name}.${handler.name} declares no permission: add @Permission(), @Operation() or @Public()`);
      const callsModels = (permission ?? 'models.call') === 'models.call';
      facts = {
        isPublic,
        operation,
        permission: permission ?? 'models.call',
        cookieRead: { sessions: this.sessions, write: false, callsModels },
        cookieWrite: { sessions: this.sessions, write: true, callsModels },
      };
      this.routeFacts.set(handler, facts);
    }
    return facts;
  }
}

/** Methods that change nothing: a session cookie needs no CSRF token for them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Names the roles that would do, with the codes clients already know for the admin routes. */
function forbidden(role: Role, permission: Permission): GatewayError {
  const roles = ROLES.filter((r) => roleMay(r, permission));
  const code =
    permission === 'resources.read' || permission === 'resources.write' ? 'admin_required' : roles.length === 1 ? 'owner_required' : 'role_not_allowed';
  return GatewayError.permission(`This operation needs role ${roles.join(' or ')}; the caller's role here is ${role}`, code);
}

interface RouteFacts {
  isPublic: boolean;
  operation: string | undefined;
  permission: Permission;
  /** What `authenticate` needs to take a session cookie on this route, for reads and for writes (made once). */
  cookieRead: CookieAuthentication;
  cookieWrite: CookieAuthentication;
}
