import { performance } from 'node:perf_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { Request } from 'express';
import { describeFailure, type LoggedError } from '../common/errors/gateway-error';
import { uuidv7 } from '../common/ids';
import type { Attempt } from './attempt';
import type { RoutePlan } from './route-plan';
import type { ApiKeyPrincipal, WorkspaceScope } from './caller';
import type { BudgetHold, RateWindow } from './budget-records';
import type { ToolCallRecord } from './tool-call-record';

/**
 * The fixed facts of one request, from the first middleware to the log row: who called,
 * how it is routed, what was asked. What each attempt learned is on its own record
 * (`attempts`, see Attempt); services receive the context instead of touching `req`/`res`.
 */
export class RequestContext {
  readonly requestId = uuidv7();
  readonly createdAt = new Date();
  private readonly startedAt = performance.now();

  /** Aborted when the client goes away, so the upstream request is cancelled too. */
  readonly abort = new AbortController();

  operation?: string;
  principal?: ApiKeyPrincipal;
  /** Where an admin-API call acts (set by the key guard on every route but the model operations). */
  scope?: WorkspaceScope;
  route?: RoutePlan;
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
  /** A batch line the gateway runs (BatchRunner): its log row names the batch and the line. */
  batchLine: BatchLineRef | null = null;
  /** The provider and model as the request named them (header, body, routing), for a request refused before any attempt. */
  provider: string | null = null;
  model: string | null = null;
  private streamed = false;
  private loggedBody: unknown = null;

  /** The attempts, in order, opened by the route executor; the last one answered (or failed last). */
  readonly attempts: Attempt[] = [];
  /** MCP tool calls the gateway ran for the model (`x-gateway-mcp`), by round; on the request's log row. */
  readonly toolCalls: ToolCallRecord[] = [];
  /** A failure outside any attempt (validation, a guard, the client leaving), set by the exception filter. */
  failure: { status: number; error: LoggedError; responseBody?: unknown } | null = null;

  constructor(
    readonly traceId: string,
    readonly requestHeaders: IncomingHttpHeaders,
    /** The request's OpenTelemetry root span (RequestTracer); null when tracing is off. */
    readonly span: Span | null = null,
  ) {}

  /**
   * An operation opens its part of the context here, once per request to the model (a tool
   * loop begins each round): whether the answer streams, the body the log keeps (the first
   * one given: a prompt call's or a tool loop's first round stays), and the end user when
   * the body names one. The route executor takes only an opened context, so an operation
   * cannot forget it.
   */
  begin(request: OperationRequest): OpenedContext {
    if (request.stream !== undefined) this.streamed = request.stream;
    this.loggedBody ??= request.body ?? null;
    if (request.user !== undefined && request.user !== null) this.user = request.user;
    return this as unknown as OpenedContext;
  }

  /** Replaces the body the log keeps: a prompt call's variables, an upload's form, a realtime session's events. */
  logRequestAs(body: unknown): void {
    this.loggedBody = body;
  }

  /** Whether the answer streams (begin). */
  get isStream(): boolean {
    return this.streamed;
  }

  /** The request body as the log keeps it (begin, logRequestAs). */
  get requestBody(): unknown {
    return this.loggedBody;
  }

  get cacheForceRefresh(): boolean {
    return this.requestHeaders['x-gateway-cache-force-refresh'] === 'true';
  }

  /** The attempt that answered, or the last one tried. */
  get lastAttempt(): Attempt | null {
    return this.attempts.length ? this.attempts[this.attempts.length - 1] : null;
  }

  /**
   * A request within this one's session (a response over the Responses API's WebSocket): the
   * same caller, trace, route, metadata and end user; its own id, clock, attempts and log row.
   */
  child(): RequestContext {
    const child = new RequestContext(this.traceId, this.requestHeaders, this.span);
    child.operation = this.operation;
    child.principal = this.principal;
    child.scope = this.scope;
    child.route = this.route;
    child.metadata = this.metadata;
    child.user = this.user;
    child.provider = this.provider;
    child.model = this.model;
    return child;
  }

  /** Records a failure that no attempt owns (the exception filter calls it). */
  noteFailure(exception: unknown): void {
    this.failure = describeFailure(exception);
  }

  elapsedMs(): number {
    return Math.round(performance.now() - this.startedAt);
  }
}

/** A line of a batch, as its request carries it (see the batches module's line token). */
export interface BatchLineRef {
  batchId: string;
  customId: string;
}

/** What an operation says of its request when it opens its part of the context (RequestContext.begin). */
export interface OperationRequest {
  /** The body the log keeps (unset: none, or one given before). */
  body?: unknown;
  /** Whether the answer streams (unset: as before, false at first). */
  stream?: boolean;
  /** The end user the body names, if any. */
  user?: string | null;
}

declare const OPENED: unique symbol;
/** A context an operation has opened (begin): what the route executor takes. */
export type OpenedContext = RequestContext & { readonly [OPENED]: true };

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
