import { performance } from 'node:perf_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import type { Request } from 'express';
import { describeFailure, type LoggedError } from '../common/errors/gateway-error';
import { uuidv7 } from '../common/ids';
import type { NormalizedUsage } from '../providers/usage';
import type { RoutePlan, RouteTarget } from '../modules/routing/route-plan';
import type { ApiKeyPrincipal } from '../modules/keys/key-lookup.service';
import type { BudgetHold, RateWindow } from '../modules/budgets/budget-types';

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
  /** The target of the current attempt; once done, the one that answered. */
  target: RouteTarget | null = null;
  metadata: Record<string, string> = {};
  /** The prompt template and version a prompt call ran. */
  promptId: string | null = null;
  promptVersion: number | null = null;
  /** Budget reservations of this request, settled by its log rows. */
  readonly budgetHolds: BudgetHold[] = [];
  /** Keys whose rate limits this request has been counted against, and its token windows. */
  readonly rateLimited = new Set<string>();
  readonly tokenWindows: RateWindow[] = [];
  user: string | null = null;

  provider: string | null = null;
  model: string | null = null;
  isStream = false;
  requestBody: unknown = null;
  responseBody: unknown = null;
  usage: NormalizedUsage | null = null;
  /** The usage is the gateway's estimate: the stream ended before the provider reported it. */
  usageEstimated = false;
  /** Guardrail results of the attempt that answered, by stage (stored with the log). */
  guardrails: { input?: unknown[]; output?: unknown[] } | null = null;
  /** A guardrail check failed without denying: the answer carries `x-gateway-guardrails: failed`. */
  guardrailsFailed = false;
  /** A cost the operation worked out itself (a fine-tuning job's training, charged once), used instead of pricing the usage. */
  costUsd: number | null = null;
  /** Model name the provider reported, used for pricing (may carry a snapshot date). */
  servedModel: string | null = null;
  ttftMs: number | null = null;
  /** Parameters this attempt's translation dropped (IgnoredParams): the x-gateway-ignored-params header and the log. */
  ignoredParams: string[] = [];
  error: LoggedError | null = null;
  retryCount = 0;
  cacheStatus = 'DISABLED';
  targetIndex: string | null = null;

  /** Start and status of the current attempt, for its own log row when another follows. */
  attemptCreatedAt = this.createdAt;
  private attemptStartedAt = this.startedAt;
  attemptStatus: number | null = null;

  constructor(
    readonly traceId: string,
    readonly requestHeaders: IncomingHttpHeaders,
  ) {}

  get cacheForceRefresh(): boolean {
    return this.requestHeaders['x-gateway-cache-force-refresh'] === 'true';
  }

  /** Forgets what the previous attempt learned: the next target starts clean. */
  beginAttempt(target: RouteTarget, targetIndex: string | null, retry: number): void {
    this.target = target;
    this.provider = target.provider;
    this.targetIndex = targetIndex;
    this.retryCount = retry;
    this.model = null;
    this.usage = null;
    this.usageEstimated = false;
    this.costUsd = null;
    this.guardrails = null;
    this.responseBody = null;
    this.servedModel = null;
    this.ttftMs = null;
    this.ignoredParams = [];
    this.error = null;
    this.attemptStatus = null;
    this.attemptCreatedAt = new Date();
    this.attemptStartedAt = performance.now();
  }

  /** Adds what one translation step of this attempt ignored (a bridged request has two). */
  noteIgnoredParams(names: readonly string[] | undefined): void {
    if (!names?.length) return;
    for (const name of names) if (!this.ignoredParams.includes(name)) this.ignoredParams.push(name);
  }

  /** Records a failed attempt's status, error and (for a provider's error) its body. */
  noteError(exception: unknown): void {
    const failure = describeFailure(exception);
    this.attemptStatus = failure.status;
    this.error = failure.error;
    if (failure.responseBody !== undefined) this.responseBody = failure.responseBody;
  }

  attemptElapsedMs(): number {
    return Math.round(performance.now() - this.attemptStartedAt);
  }

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
