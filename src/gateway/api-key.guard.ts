import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { authenticate } from '../modules/keys/authenticate';
import { KeyLookupService } from '../modules/keys/key-lookup.service';
import { maybeContextOf } from './request-context';
import { ADMIN_ONLY, OPERATION, PUBLIC } from './request-context.decorator';
import { GatewayError } from '../common/errors/gateway-error';

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
