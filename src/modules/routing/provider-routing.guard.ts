import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { RouteResolver } from './route-resolver';
import { contextOf, RequestContext } from '../../context/request-context';

/** Resolves the RoutePlan of a request onto its context (also for prompts, whose template names the route). */
export async function routeRequest(resolver: RouteResolver, context: RequestContext, headers: IncomingHttpHeaders, model: unknown): Promise<void> {
  // The model as named, so that a request refused by routing or validation is logged with it.
  if (typeof model === 'string' && model.length <= 256) context.model = model;
  context.route = await resolver.resolve(headers, model, context.principal ?? null);
  const routedModel = context.route.root.source?.kind === 'resolved' ? context.route.root.source.target.model : null;
  if (routedModel) context.model = routedModel;
  // Known now for a request routed by header; a config's provider is known per attempt.
  const source = context.route.root.source;
  if (source?.kind === 'resolved') context.provider = source.target.provider;
}

/**
 * Third step of the request path, on model operations: the routing headers and the
 * body's model become one RoutePlan on the request context.
 */
@Injectable()
export class ProviderRoutingGuard implements CanActivate {
  constructor(private readonly resolver: RouteResolver) {}

  async canActivate(execution: ExecutionContext): Promise<boolean> {
    const req = execution.switchToHttp().getRequest<Request>();
    const body: unknown = req.body;
    const model = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).model : undefined;
    await routeRequest(this.resolver, contextOf(req), req.headers, model);
    return true;
  }
}
