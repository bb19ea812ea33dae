import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { RouteResolver } from '../../modules/routing/route-resolver.service';
import { contextOf } from '../context/request-context';

/**
 * Third step of the request path, on model operations: the routing headers and the
 * body's model become one RoutePlan on the request context.
 */
@Injectable()
export class ProviderRoutingGuard implements CanActivate {
  constructor(private readonly resolver: RouteResolver) {}

  async canActivate(execution: ExecutionContext): Promise<boolean> {
    const req = execution.switchToHttp().getRequest<Request>();
    const context = contextOf(req);
    const body: unknown = req.body;
    const model = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).model : undefined;
    context.route = await this.resolver.resolve(req.headers, model);
    // Known now for a request routed by header; a config's provider is known per attempt.
    const source = context.route.root.source;
    if (source?.kind === 'resolved') context.provider = source.target.provider;
    return true;
  }
}
