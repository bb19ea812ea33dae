import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { contextOf } from '../../context/request-context';
import { routeRequest } from '../routing/provider-routing.guard';
import { RouteResolver } from '../routing/route-resolver';
import { GEMINI_ROUTE_PREFIX } from './gemini-dialect';

/** The `{model}` of a `/v1beta/models/{model}:{method}` path: a wildcard (a routed model has a slash: `@slug/model`). */
export function pathModel(param: unknown): string | undefined {
  const model = Array.isArray(param) ? param.join('/') : typeof param === 'string' ? param : undefined;
  return model || undefined;
}

/**
 * Third step of the request path on Gemini's routes: the model is in the path, not the
 * body; with the routing headers it becomes the request's RoutePlan (as ProviderRoutingGuard
 * does for the other dialects).
 */
@Injectable()
export class GeminiRoutingGuard implements CanActivate {
  constructor(private readonly resolver: RouteResolver) {}

  async canActivate(execution: ExecutionContext): Promise<boolean> {
    const req = execution.switchToHttp().getRequest<Request>();
    await routeRequest(this.resolver, contextOf(req), req.headers, pathModel(req.params.model));
    return true;
  }
}

/**
 * Google's clients may send their key as `?key=` on the Gemini routes: it moves into
 * `x-goog-api-key`, where the key guard reads it (gatewayKeyOf), and out of the URL, so no
 * later step sees it. Called by the first middleware, before anything reads the request.
 */
export function googleKeyFromQuery(req: Pick<Request, 'url' | 'headers'>): void {
  const q = req.url.indexOf('?');
  if (q < 0 || !req.url.startsWith(GEMINI_ROUTE_PREFIX)) return;
  const query = new URLSearchParams(req.url.slice(q + 1));
  const key = query.get('key');
  if (key === null) return;
  if (req.headers['x-goog-api-key'] === undefined) req.headers['x-goog-api-key'] = key;
  query.delete('key');
  const rest = query.toString();
  req.url = req.url.slice(0, q) + (rest ? `?${rest}` : '');
}
