import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../gateway/request-context';
import { uuidv7 } from '../../common/ids';
import type { Environment } from '../../config/environment';
import { settlementsOf } from '../budgets/budget-ledger.service';
import type { BudgetSettlement, TokenSettlement } from '../budgets/budget-types';
import { tokenSettlementsOf } from '../budgets/rate-limiter.service';
import { MetricsService } from '../metrics/metrics.service';
import type { NormalizedUsage } from '../../providers/usage';
import { PricingService } from '../pricing/pricing.service';
import { LogWriter } from './log-writer.service';
import { redactBody, redactHeaders } from './redaction';

type QueuedRow = ReturnType<RequestLogger['toRow']> & { statusCode: number; budgetSettlements: BudgetSettlement[]; tokenSettlements: TokenSettlement[] };

/**
 * Last step of the request path: when the response has closed, however it ended,
 * prices the usage, redacts secrets and queues one log row.
 */
@Injectable()
export class RequestLogger {
  private readonly logBodies: boolean;
  /** Requests begun whose response has not closed (and row not queued) yet. */
  private open = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly writer: LogWriter,
    private readonly pricing: PricingService,
    private readonly metrics: MetricsService,
    config: ConfigService<Environment, true>,
  ) {
    this.logBodies = config.get('LOG_BODIES', { infer: true });
  }

  /** A request began: shutdown waits for its row (see whenIdle). */
  opened(): void {
    this.open++;
  }

  /** The response closed, however it ended: its row is queued (when it had an operation). */
  closed(context: RequestContext, req: Request, res: Response): void {
    this.ended(context, req.body, () => res.statusCode);
  }

  /**
   * A session that is not one HTTP response (a realtime WebSocket) ended: its one row is
   * queued with `statusCode` (101 for a session that was switched to WebSocket). Pair
   * with `opened()`.
   */
  sessionClosed(context: RequestContext, statusCode: number): void {
    this.ended(context, null, () => statusCode);
  }

  private ended(context: RequestContext, parsedBody: unknown, statusCode: () => number): void {
    // Let the other `close` listeners (stream teardown) finish the context first.
    setImmediate(() => {
      try {
        if (context.operation) this.recordFinal(context, parsedBody, statusCode());
      } finally {
        if (--this.open === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
      }
    });
  }

  /** Resolves once every request that began has its row queued, or after `timeoutMs`. */
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

  private recordFinal(context: RequestContext, parsedBody: unknown, statusCode: number): void {
    const row = this.toRow(context, parsedBody);
    this.queue({
      ...row,
      statusCode,
      budgetSettlements: settlementsOf(context.budgetHolds, row, true),
      tokenSettlements: tokenSettlementsOf(context.tokenWindows, row),
    });
  }

  /**
   * A failed attempt that another attempt (retry or fallback) followed: its own row
   * under the request's trace id, written now because the context moves on.
   */
  recordAttempt(context: RequestContext): void {
    const row = this.toRow(context, null);
    this.queue({
      ...row,
      id: uuidv7(),
      createdAt: context.attemptCreatedAt,
      latencyMs: context.attemptElapsedMs(),
      statusCode: context.attemptStatus ?? 0,
      budgetSettlements: settlementsOf(context.budgetHolds, row, false),
      tokenSettlements: tokenSettlementsOf(context.tokenWindows, row),
    });
  }

  private queue(row: QueuedRow): void {
    this.writer.enqueue(row);
    this.metrics.observe({ ...row, errorCode: row.error ? (row.error.code ?? row.error.type) : null });
  }

  /**
   * A cache hit costs nothing (the provider was not asked); an operation that priced its
   * answer itself (DALL·E per image, fine-tuning by trained tokens) set `costUsd`; else the
   * usage at the model's prices; null when the model has no price.
   */
  private costOf(context: RequestContext, pricedModel: string | null): number | null {
    if (!context.provider || !pricedModel) return null;
    if (context.cacheStatus === 'HIT') return 0;
    if (context.costUsd !== null) return context.costUsd;
    return context.usage ? this.pricing.cost(context.provider, pricedModel, context.usage) : null;
  }

  private toRow(context: RequestContext, parsedBody: unknown) {
    const usage = context.usage;
    const target = context.target;
    const pricedModel = context.servedModel ?? context.model;
    const cost = this.costOf(context, pricedModel);
    return {
      id: context.requestId,
      traceId: context.traceId,
      createdAt: context.createdAt,
      operation: context.operation!,
      apiKeyId: context.principal?.id ?? null,
      virtualKeyId: target?.virtualKeyId ?? null,
      configId: context.route?.configId ?? null,
      promptId: context.promptId,
      promptVersion: context.promptVersion,
      provider: context.provider,
      model: context.model,
      isStream: context.isStream,
      requestHeaders: redactHeaders(context.requestHeaders),
      requestBody: this.logBodies ? redactBody(context.requestBody ?? parsedBody ?? null) : null,
      responseBody: this.logBodies ? redactBody(context.responseBody) : null,
      promptTokens: usage?.promptTokens ?? null,
      completionTokens: usage?.completionTokens ?? null,
      totalTokens: usage?.totalTokens ?? null,
      cachedTokens: usage?.cachedTokens ?? null,
      reasoningTokens: usage?.reasoningTokens ?? null,
      billedUnits: usage ? billedUnits(usage) : null,
      costUsd: cost,
      latencyMs: context.elapsedMs(),
      ttftMs: context.ttftMs,
      user: context.user,
      metadata: context.metadata,
      error: context.error && context.usageEstimated ? { ...context.error, usage_estimated: true } : context.error,
      retryCount: context.retryCount,
      cacheStatus: context.cacheStatus,
      targetIndex: context.targetIndex,
      guardrails: context.guardrails,
      ignoredParams: context.ignoredParams.length ? context.ignoredParams : null,
    };
  }
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
