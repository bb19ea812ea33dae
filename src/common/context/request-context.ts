import { performance } from 'node:perf_hooks';
import type { Request } from 'express';
import { uuidv7 } from '../ids';
import type { NormalizedUsage } from '../../providers/usage';
import type { RoutePlan } from '../../modules/routing/route-plan';
import type { ApiKeyPrincipal } from '../../modules/keys/key-lookup.service';

export interface LoggedError {
  type: string;
  code: string | null;
  message: string;
}

/**
 * Everything the gateway learns about one request, from the first middleware to the
 * log row: who called, where it was routed, and what came back. Services receive it
 * as an argument instead of touching `req`/`res`.
 */
export class RequestContext {
  readonly requestId = uuidv7();
  readonly createdAt = new Date();
  private readonly startedAt = performance.now();

  /** Aborted when the client goes away, so the upstream request is cancelled too. */
  readonly abort = new AbortController();

  operation?: string;
  principal?: ApiKeyPrincipal;
  route?: RoutePlan;
  metadata: Record<string, string> = {};
  user: string | null = null;

  provider: string | null = null;
  model: string | null = null;
  isStream = false;
  requestBody: unknown = null;
  responseBody: unknown = null;
  usage: NormalizedUsage | null = null;
  /** Model name the provider reported, used for pricing (may carry a snapshot date). */
  servedModel: string | null = null;
  ttftMs: number | null = null;
  error: LoggedError | null = null;
  retryCount = 0;
  cacheStatus = 'DISABLED';
  targetIndex: string | null = null;

  constructor(readonly traceId: string) {}

  elapsedMs(): number {
    return Math.round(performance.now() - this.startedAt);
  }

  markFirstToken(): void {
    if (this.ttftMs === null) this.ttftMs = this.elapsedMs();
  }
}

const CONTEXT = Symbol('gatewayRequestContext');

export function attachContext(req: Request, context: RequestContext): void {
  (req as unknown as Record<symbol, RequestContext>)[CONTEXT] = context;
}

export function contextOf(req: Request): RequestContext {
  const context = (req as unknown as Record<symbol, RequestContext | undefined>)[CONTEXT];
  if (!context) throw new Error('Request context missing: is RequestContextMiddleware applied?');
  return context;
}

export function maybeContextOf(req: Request): RequestContext | undefined {
  return (req as unknown as Record<symbol, RequestContext | undefined>)[CONTEXT];
}
