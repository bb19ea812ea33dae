import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { uuidv7 } from '../../common/ids';
import type { Environment } from '../../config/environment';
import { BudgetLedger, settlementsOf } from '../budgets/budget-ledger';
import type { BudgetHold, BudgetSettlement, TokenSettlement } from '../../context/budget-records';
import type { LoggedError } from '../../common/errors/gateway-error';
import { tokenSettlementsOf } from '../budgets/rate-limiter';
import { MetricsService } from '../metrics/metrics.service';
import type { NormalizedUsage } from '../../providers/usage';
import { PricingService } from '../pricing/pricing.service';
import type { Attempt } from '../../context/attempt';
import { RequestTracer } from '../telemetry/request-tracer';
import { LogWriter } from './log-writer';
import { redactBody, redactHeaders } from './redaction';
import type { ToolCallLogEntry } from '../../context/tool-call-record';
import { DEFAULT_WORKSPACE_ID } from '../workspaces/workspace.entity';
import type { RowKind } from './entities/request-log.entity';

/** How long a closed response's row waits for its attempts to end. */
const ATTEMPTS_END_CAP_MS = 10_000;

type QueuedRow = ReturnType<RequestLogger['toRow']>;

/**
 * Last step of the request path: when the response has closed, however it ended, and
 * its attempts' outcomes are in (a stream's when it ended), makes one row of each attempt
 * (see Attempt): the request's own row of the last, a row under the request's trace id
 * of each earlier one that was sent. Prices the usage, redacts secrets, queues the rows.
 * With OpenTelemetry on, the request's spans are made here too, from the same records.
 */
@Injectable()
export class RequestLogger {
  private readonly logger = new Logger(RequestLogger.name);
  private readonly logBodies: boolean;
  /** Requests begun whose rows have not been queued yet. */
  private open = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly writer: LogWriter,
    private readonly pricing: PricingService,
    private readonly metrics: MetricsService,
    private readonly tracer: RequestTracer,
    private readonly budgets: BudgetLedger,
    config: ConfigService<Environment, true>,
  ) {
    this.logBodies = config.get('LOG_BODIES', { infer: true });
  }

  /** A request began: shutdown waits for its rows (see whenIdle). */
  opened(): void {
    this.open++;
  }

  /** The response closed, however it ended: its rows are queued (when it had an operation). */
  closed(context: RequestContext, req: Request, res: Response): void {
    // A traced request without an operation (no row, no attempts: the MCP proxy) ends here, named by its HTTP route.
    if (context.span && !context.operation)
      this.tracer.rowlessRequestEnded(context, context.span, `${req.method} ${(req.route as { path?: string } | undefined)?.path ?? req.path}`);
    // A response that never began (the client left first) still has Node's default 200: the row says what happened instead.
    this.ended(context, req.body, res.headersSent ? res.statusCode : (context.failure?.status ?? 499));
  }

  /**
   * A session that is not one HTTP response (a realtime WebSocket) ended: its row is
   * queued with `statusCode` (101 for a session that was switched to WebSocket). Pair
   * with `opened()`.
   */
  sessionClosed(context: RequestContext, statusCode: number): void {
    this.ended(context, null, statusCode);
  }

  private ended(context: RequestContext, parsedBody: unknown, statusCode: number): void {
    const open = context.attempts.filter((attempt) => !attempt.ended);
    if (!open.length) return this.rowsQueued(context, parsedBody, statusCode);
    // The response is over, so its attempts end at once (the client's leaving aborts them); the cap guards against a bug losing the rows.
    let cap: NodeJS.Timeout | undefined;
    const capped = new Promise<void>((resolve) => {
      cap = setTimeout(() => {
        this.logger.warn({
          msg: 'Attempts still open 10 s after the response closed; logged as they are',
          request_id: context.requestId,
          operation: context.operation,
          attempts: open.map((attempt) => ({ provider: attempt.provider, retry: attempt.retry, sent: attempt.sent, ended: attempt.ended })),
        });
        resolve();
      }, ATTEMPTS_END_CAP_MS).unref();
    });
    const allEnded = Promise.all(open.map((attempt) => attempt.settled)).then(() => clearTimeout(cap));
    void Promise.race([allEnded, capped]).then(() => this.rowsQueued(context, parsedBody, statusCode));
  }

  private rowsQueued(context: RequestContext, parsedBody: unknown, statusCode: number): void {
    try {
      if (context.operation) this.record(context, parsedBody, statusCode);
    } finally {
      if (--this.open === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
    }
  }

  /** Resolves once every request that began has its rows queued, or after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<void> {
    if (this.open === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private record(context: RequestContext, parsedBody: unknown, statusCode: number): void {
    const last = context.lastAttempt;
    const earlier = context.attempts.filter((attempt) => attempt !== last);
    let nestedRows = context.toolCalls.length;
    for (const attempt of earlier) {
      // An attempt another one followed (a failure, or a tool round of the MCP loop): its own row, when it reached the provider.
      if (!attempt.sent) continue;
      const row = this.toRow(context, attempt, null, null, attempt.failure?.status ?? attempt.answerStatus ?? 0);
      row.id = uuidv7();
      row.kind = failed(attempt) ? 'attempt' : 'tool_round';
      row.parentId = context.requestId;
      row.createdAt = attempt.createdAt;
      row.latencyMs = attempt.latencyMs ?? 0;
      this.queue(row, context, false);
      nestedRows++;
    }
    const own = this.toRow(context, last, parsedBody, context.failure, statusCode);
    own.failedAttempts = earlier.filter(failed).length;
    own.nestedRows = nestedRows;
    this.queue(own, context, true);
    if (context.span) this.tracer.requestEnded(context, context.span, own, (attempt) => this.costOf(attempt, attempt.outcome?.servedModel ?? attempt.model));
  }

  /** Settles the row's budget holds (`final`: the request's own row releases them; its cost teaches the next reservations) and token windows (a request's context holds both), then queues it. */
  private queue(row: QueuedRow, holds: Pick<RequestContext, 'budgetHolds' | 'tokenWindows'>, final: boolean): void {
    row.budgetSettlements = settlementsOf(holds.budgetHolds, row, final);
    this.budgets.observe(holds.budgetHolds, row);
    row.tokenSettlements = tokenSettlementsOf(holds.tokenWindows, row);
    this.writer.enqueue(row);
    this.metrics.observe(row, row.error ? (row.error.code ?? row.error.type) : null);
  }

  /**
   * An MCP tool call (the gateway's tool loop, or an MCP client through `/v1/mcp`): a row of
   * its own, queued at once, under the request's trace id. Provider `mcp:<server>`, model
   * the tool; it costs nothing the gateway knows of. Run by the tool loop, it is nested
   * under the model request's row (`tool_call`); an MCP client's call is a request itself.
   */
  toolCallLogged(context: RequestContext, call: ToolCallLogEntry): void {
    const row = this.toRow(context, null, null, null, call.statusCode);
    const nested = context.operation !== undefined;
    Object.assign(row, {
      id: call.id,
      kind: nested ? 'tool_call' : 'request',
      parentId: nested ? context.requestId : null,
      createdAt: call.createdAt,
      operation: 'mcp.tools.call',
      configId: context.route?.configId ?? null,
      provider: `mcp:${call.server}`,
      model: call.tool,
      isStream: false,
      requestBody: this.logBodies ? redactBody({ server: call.server, tool: call.tool, arguments: call.arguments }) : null,
      responseBody: this.logBodies ? redactBody(call.result) : null,
      costUsd: 0,
      latencyMs: call.latencyMs,
      error: call.error ? { type: 'mcp_tool_error', code: call.error.code, message: call.error.message } : null,
      toolCalls: null,
    });
    this.queue(row, context, false);
    if (context.span) this.tracer.toolCalled(context.span, call);
  }

  /**
   * A line a provider's Batch API ran (a native batch): a request row of its own with no
   * HTTP request behind it, queued when its result is read. Priced at the provider's batch
   * price (PricingService.batchCost); its latency is unknown (0); its cost settles the
   * budgets it counts towards (`entry.budgetHolds`, holds of nothing).
   */
  batchLineLogged(entry: BatchLineLogEntry): void {
    const usage = entry.usage;
    const row: QueuedRow = {
      id: uuidv7(),
      kind: 'request',
      parentId: null,
      failedAttempts: 0,
      nestedRows: 0,
      batchId: entry.batchId,
      customId: entry.customId,
      traceId: entry.traceId,
      createdAt: entry.createdAt,
      operation: entry.operation,
      apiKeyId: entry.apiKeyId,
      workspaceId: entry.workspaceId,
      virtualKeyId: entry.virtualKeyId,
      configId: null,
      promptId: null,
      promptVersion: null,
      provider: entry.provider,
      model: entry.model,
      isStream: false,
      requestHeaders: redactHeaders(entry.requestHeaders),
      requestBody: this.logBodies ? redactBody(entry.requestBody ?? null) : null,
      responseBody: this.logBodies ? redactBody(entry.responseBody ?? null) : null,
      ...usageColumns(usage),
      costUsd: usage && entry.model ? this.pricing.batchCost(entry.provider, entry.model, usage) : null,
      latencyMs: 0,
      ttftMs: null,
      user: entry.user,
      metadata: entry.metadata,
      error: entry.error,
      retryCount: 0,
      cacheStatus: 'DISABLED',
      targetIndex: null,
      guardrails: null,
      ignoredParams: null,
      toolCalls: null,
      statusCode: entry.statusCode,
      budgetSettlements: [],
      tokenSettlements: [],
    };
    this.queue(row, { budgetHolds: entry.budgetHolds, tokenWindows: [] }, false);
  }

  /**
   * A cache hit costs nothing (the provider was not asked); an operation that priced its
   * answer itself (DALL·E per image, fine-tuning by trained tokens) gave `costUsd`; else the
   * usage at the model's prices; null when the model has no price.
   */
  private costOf(attempt: Attempt, pricedModel: string | null): number | null {
    const outcome = attempt.outcome;
    if (!pricedModel) return null;
    if (attempt.cacheStatus === 'HIT') return 0;
    if (outcome?.costUsd != null) return outcome.costUsd;
    return outcome?.usage ? this.pricing.cost(attempt.provider, pricedModel, outcome.usage) : null;
  }

  /** The row of one attempt (null: the request was refused before any); `requestFailure`, the request's own failure, wins over the attempt's. */
  private toRow(context: RequestContext, attempt: Attempt | null, parsedBody: unknown, requestFailure: RequestContext['failure'], statusCode: number) {
    const outcome = attempt?.outcome ?? null;
    const usage = outcome?.usage ?? null;
    const model = attempt ? attempt.model : context.model;
    const failure = requestFailure ?? attempt?.failure ?? null;
    const error = requestFailure?.error ?? attempt?.error ?? null;
    const responseBody = failure?.responseBody !== undefined ? failure.responseBody : (outcome?.responseBody ?? null);
    return {
      id: context.requestId,
      kind: 'request' as RowKind,
      parentId: null as string | null,
      failedAttempts: 0,
      nestedRows: 0,
      batchId: context.batchLine?.batchId ?? null,
      customId: context.batchLine?.customId ?? null,
      traceId: context.traceId,
      createdAt: context.createdAt,
      operation: context.operation!,
      apiKeyId: context.principal?.id ?? null,
      // A request refused before its key was known is the default workspace's.
      workspaceId: context.principal?.workspaceId ?? DEFAULT_WORKSPACE_ID,
      virtualKeyId: attempt?.target.virtualKeyId ?? null,
      configId: context.route?.configId ?? null,
      promptId: context.promptId,
      promptVersion: context.promptVersion,
      provider: attempt?.provider ?? context.provider,
      model,
      isStream: context.isStream,
      requestHeaders: redactHeaders(context.requestHeaders),
      requestBody: this.logBodies ? redactBody(context.requestBody ?? parsedBody ?? null) : null,
      responseBody: this.logBodies ? redactBody(responseBody) : null,
      ...usageColumns(usage),
      costUsd: attempt ? this.costOf(attempt, outcome?.servedModel ?? model) : null,
      latencyMs: context.elapsedMs(),
      ttftMs: outcome?.ttftMs ?? null,
      user: context.user,
      metadata: context.metadata,
      error: error && outcome?.usageEstimated ? { ...error, usage_estimated: true } : error,
      retryCount: attempt?.retry ?? 0,
      cacheStatus: attempt?.cacheStatus ?? 'DISABLED',
      targetIndex: attempt?.targetIndex ?? null,
      guardrails: attempt?.guardrails ?? null,
      ignoredParams: attempt?.ignoredParams.length ? attempt.ignoredParams : null,
      // The request's own row lists the tool calls the gateway ran for it; an earlier round's row does not repeat them.
      toolCalls: context.toolCalls.length && attempt === context.lastAttempt ? context.toolCalls : null,
      statusCode,
      // Filled by `queue` (settlements read the row's cost and tokens).
      budgetSettlements: [] as BudgetSettlement[],
      tokenSettlements: [] as TokenSettlement[],
    };
  }
}

/** A row's usage columns (null each when there is no usage). */
function usageColumns(usage: NormalizedUsage | null) {
  return {
    promptTokens: usage?.promptTokens ?? null,
    completionTokens: usage?.completionTokens ?? null,
    totalTokens: usage?.totalTokens ?? null,
    cachedTokens: usage?.cachedTokens ?? null,
    cacheWriteTokens: usage?.cacheWriteTokens ?? null,
    reasoningTokens: usage?.reasoningTokens ?? null,
    billedUnits: usage ? billedUnits(usage) : null,
  };
}

/** A line a provider's Batch API ran, as its log row is written (RequestLogger.batchLineLogged). */
export interface BatchLineLogEntry {
  batchId: string;
  customId: string;
  /** All the lines of a batch share one trace. */
  traceId: string;
  /** When the gateway read the result. */
  createdAt: Date;
  /** As the synchronous call's (`chat.completions`, `responses`, `embeddings`, `messages`). */
  operation: string;
  apiKeyId: string | null;
  workspaceId: string;
  virtualKeyId: string | null;
  provider: string;
  /** The model that served it (the answer's), else the one asked for. */
  model: string | null;
  user: string | null;
  metadata: Record<string, string>;
  /** The headers the batch was created with (redacted here). */
  requestHeaders: Record<string, string>;
  requestBody: unknown;
  responseBody: unknown;
  usage: NormalizedUsage | null;
  statusCode: number;
  error: LoggedError | null;
  /** The budgets its cost counts towards (BudgetLedger.holdsFor). */
  budgetHolds: BudgetHold[];
}

/** Whether an attempt failed (a retry or fallback followed it); else it was a tool round of the MCP loop. */
function failed(attempt: Attempt): boolean {
  return attempt.failure !== null || attempt.error !== null || (attempt.answerStatus ?? 0) >= 400;
}

/** The non-token quantities a request was billed for, in the log's names; null when there are none. */
export function billedUnits(usage: NormalizedUsage): Record<string, number> | null {
  const units: Record<string, number> = {};
  if (usage.searchUnits) units.search_units = usage.searchUnits;
  if (usage.webSearches) units.web_searches = usage.webSearches;
  if (usage.audioSeconds) units.audio_seconds = usage.audioSeconds;
  if (usage.characters) units.characters = usage.characters;
  return Object.keys(units).length ? units : null;
}
