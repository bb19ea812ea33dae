import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiKeyPrincipal, KeyLookupService } from '../modules/keys/key-lookup.service';
import { maybeContextOf, type RequestContext } from './request-context';
import { ADMIN_ONLY, OPERATION, PUBLIC } from './request-context.decorator';
import { GatewayError } from '../common/errors/gateway-error';
import { TRACE_ID } from '../common/ids';
import { gatewayKeyOf, MISSING_GATEWAY_KEY } from '../common/guards/gateway-key';
import { parseMetadataHeader } from '../common/guards/metadata-header';


/**
 * The gateway key (`x-gateway-api-key`, or a `gk-` key as the client's API key: see
 * gatewayKeyOf) to a live API key (401 otherwise), and the request-wide headers
 * every operation shares (trace id, metadata) checked and noted on the context. Shared by
 * the HTTP guard below and the realtime WebSocket handshake.
 */
export async function authenticate(keys: KeyLookupService, headers: IncomingHttpHeaders, context: RequestContext | undefined): Promise<ApiKeyPrincipal> {
  const secret = gatewayKeyOf(headers);
  if (secret === null) throw GatewayError.authentication(MISSING_GATEWAY_KEY);
  const key = await keys.apiKeyBySecret(secret);
  if (!key) throw GatewayError.authentication('Invalid or revoked gateway API key');
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) {
    throw GatewayError.authentication(`The API key expired at ${key.expiresAt.toISOString()}`);
  }
  if (context) context.principal = key;

  const traceId = headers['x-gateway-trace-id'];
  if (typeof traceId === 'string' && !TRACE_ID.test(traceId)) {
    throw GatewayError.invalidRequest('x-gateway-trace-id must be 1 to 128 letters, digits or . : _ -', 'x-gateway-trace-id');
  }
  if (context) {
    // The key's own metadata is set by an admin and wins over what the caller sends.
    context.metadata = { ...parseMetadataHeader(headers['x-gateway-metadata']), ...key.metadata };
    context.user = context.metadata._user ?? null;
  }
  return key;
}

/**
 * Second step of the request path: `x-gateway-api-key` to an API key, from the
 * in-process cache. Also reads the request-wide headers every operation shares
 * (trace id, metadata), so that a bad one is a 400 before any work is done.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: KeyLookupService,
  ) {}

  /** Route metadata read once per handler, not on every request. */
  private readonly routeFacts = new WeakMap<Function, RouteFacts>();

  async canActivate(execution: ExecutionContext): Promise<boolean> {
    const facts = this.factsOf(execution);
    if (facts.isPublic) return true;

    const req = execution.switchToHttp().getRequest<Request>();
    const context = maybeContextOf(req);
    if (context) context.operation = facts.operation;

    const key = await authenticate(this.keys, req.headers, context);
    if (facts.adminOnly && key.role !== 'admin') {
      throw GatewayError.permission('This operation needs an API key with role admin', 'admin_required');
    }
    return true;
  }

  private factsOf(execution: ExecutionContext): RouteFacts {
    const handler = execution.getHandler();
    let facts = this.routeFacts.get(handler);
    if (!facts) {
      const targets = [handler, execution.getClass()];
      facts = {
        isPublic: this.reflector.getAllAndOverride<boolean>(PUBLIC, targets) ?? false,
        operation: this.reflector.getAllAndOverride<string>(OPERATION, targets),
        adminOnly: this.reflector.getAllAndOverride<boolean>(ADMIN_ONLY, targets) ?? false,
      };
      this.routeFacts.set(handler, facts);
    }
    return facts;
  }
}

interface RouteFacts {
  isPublic: boolean;
  operation: string | undefined;
  adminOnly: boolean;
}
