import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { from, Observable } from 'rxjs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import type { RequestContext } from '../../gateway/request-context';
import { GatewayError, UpstreamHttpError } from '../../common/errors/gateway-error';
import type { GatewayResult } from '../../common/http/gateway-result';
import type { Environment } from '../../config/environment';
import { BudgetLedger } from '../budgets/budget-ledger.service';
import { RateLimiter } from '../budgets/rate-limiter.service';
import { CachedResponse, ResponseCache, responseCacheKey } from '../cache/response-cache';
import { enforceGuardrails, noteResults } from '../guardrails/guardrail-stage';
import type { OperationTexts } from '../guardrails/operation-texts';
import { RequestLogger } from '../logging/request-logger.service';
import { ClientClosedRequestError } from '../upstream/upstream-client';
import { CircuitBreakerRegistry } from './circuit-breaker';
import { AttemptFailure, chooseConditional, fallsBack, parseRetryAfter, pickWeighted, retryDelayMs } from './route-planner';
import type { RouteNode, RouteTarget } from './route-plan';
import { RouteResolver } from './route-resolver.service';

/**
 * One attempt of an operation: send `body` to `target` and turn the answer into a
 * GatewayResult, noting usage and the response on the context. Throws
 * UpstreamHttpError for a provider's error answer and GatewayError for the gateway's
 * own (unreachable, timeout, malformed). For a stream it must resolve only once the
 * first bytes have arrived, so that a stream failing before them can fall back.
 */
export type AttemptSender = (target: RouteTarget, body: Record<string, unknown>) => Promise<GatewayResult>;

/** How long an answer waits for its cache write before it is sent anyway. */
const CACHE_WRITE_WAIT_MS = 250;

/** The body sent to a target: the model routing chose, then the config's override_params. */
export function upstreamBodyFor(body: Record<string, unknown>, target: RouteTarget): Record<string, unknown> {
  return { ...body, model: target.model ?? body.model, ...target.overrideParams };
}

/** What identifies an upstream for the cache and the circuit breaker; holds no secret. */
function upstreamIdentity(target: RouteTarget): string {
  const credential = target.virtualKeyId ?? (target.apiKey ? createHash('sha256').update(target.apiKey).digest('hex').slice(0, 24) : '-');
  return [target.provider, credential, target.customHost ?? '', target.organization ?? '', target.project ?? ''].join('|');
}

/**
 * Runs a request along its routing tree (see route-plan.ts): strategies choose among
 * children (route-planner.ts decides, this class does the I/O), leaves send with
 * retries, the circuit breaker and the response cache. Every failed attempt followed
 * by another one is logged as its own row under the request's trace id; the request's
 * own row (written when the response closes) describes the attempt that answered.
 */
@Injectable()
export class RouteExecutor {
  private readonly tools: ExecutionTools;

  constructor(
    resolver: RouteResolver,
    cache: ResponseCache,
    requestLogger: RequestLogger,
    budgets: BudgetLedger,
    rateLimiter: RateLimiter,
    config: ConfigService<Environment, true>,
  ) {
    const timing = { baseDelayMs: config.get('RETRY_BASE_DELAY_MS', { infer: true }), maxDelayMs: config.get('RETRY_MAX_DELAY_MS', { infer: true }) };
    this.tools = { resolver, cache, requestLogger, budgets, rateLimiter, breakers: new CircuitBreakerRegistry(), timing };
  }

  /**
   * `cacheable: false` for operations whose answer must never be replayed (a DELETE, a cancel);
   * `replayable: false` for a request body that streams through once (an upload): after
   * the first attempt has been sent, no retry and no fallback. `texts`: where the
   * operation's request and answer text is, for the config's guardrails (operations
   * without it run none). `budgeted: false` for an operation that costs nothing (token
   * counting): nothing is reserved, so a spent budget does not refuse it.
   */
  execute(
    context: RequestContext,
    body: Record<string, unknown>,
    send: AttemptSender,
    options: { cacheable?: boolean; replayable?: boolean; texts?: OperationTexts; budgeted?: boolean } = {},
  ): Promise<GatewayResult> {
    const run = new ExecutionRun(this.tools, context, body, send, options.cacheable ?? true, options.replayable ?? true, options.texts ?? null, options.budgeted ?? true);
    return run.node(context.route!.root);
  }
}

interface ExecutionTools {
  resolver: RouteResolver;
  cache: ResponseCache;
  requestLogger: RequestLogger;
  budgets: BudgetLedger;
  rateLimiter: RateLimiter;
  /** Process-wide: breaker state outlives requests. */
  breakers: CircuitBreakerRegistry;
  timing: { baseDelayMs: number; maxDelayMs: number };
}

/** The state of one request's walk through its tree. */
class ExecutionRun {
  /** A failed attempt, logged as its own row once another attempt follows it. */
  private pendingFailure = false;
  /** Whether an attempt has been sent (a body that is not replayable then allows no other). */
  private sent = false;

  constructor(
    private readonly tools: ExecutionTools,
    private readonly context: RequestContext,
    private readonly body: Record<string, unknown>,
    private readonly send: AttemptSender,
    private readonly cacheable: boolean,
    private readonly replayable: boolean,
    private readonly texts: OperationTexts | null,
    private readonly budgeted: boolean,
  ) {}

  /** No other attempt can follow: the body was not replayable and has gone out. */
  private get spent(): boolean {
    return !this.replayable && this.sent;
  }

  async node(node: RouteNode): Promise<GatewayResult> {
    if (node.children.length === 0) return this.leaf(node);
    switch (node.mode) {
      case 'fallback':
        return this.fallback(node);
      case 'loadbalance':
        return this.loadbalance(node);
      case 'conditional': {
        const chosen = chooseConditional(node, { metadata: this.context.metadata, params: this.body });
        if (!chosen) {
          throw GatewayError.invalidRequest(
            `No condition of the config${node.path ? ` target ${node.path}` : ''} matched this request and it has no default target`,
            'x-gateway-config',
            'no_matching_condition',
          );
        }
        return this.node(chosen);
      }
      default:
        return this.node(node.children[0]);
    }
  }

  private async fallback(node: RouteNode): Promise<GatewayResult> {
    let lastError: unknown;
    for (const child of node.children) {
      try {
        return await this.node(child);
      } catch (error) {
        const failure = this.failureOf(error);
        if (!failure || !fallsBack(node, failure) || this.spent) throw error;
        lastError = error;
      }
    }
    throw lastError;
  }

  /** A pick whose circuit is open is set aside and the draw repeated among the rest. */
  private async loadbalance(node: RouteNode): Promise<GatewayResult> {
    const candidates = [...node.children];
    for (;;) {
      const chosen = pickWeighted(candidates, Math.random);
      if (!chosen) throw GatewayError.invalidRequest('The config has no target with weight > 0', 'x-gateway-config', 'invalid_config');
      try {
        return await this.node(chosen);
      } catch (error) {
        const others = candidates.filter((c) => c !== chosen && c.weight > 0);
        if (!(error instanceof GatewayError && error.code === 'circuit_open') || others.length === 0) throw error;
        candidates.splice(candidates.indexOf(chosen), 1);
      }
    }
  }

  private async leaf(node: RouteNode): Promise<GatewayResult> {
    const { resolver, breakers } = this.tools;
    const context = this.context;
    const target = await resolver.resolveLeaf(node, context.route!);
    // Known from here, so a refusal below (open circuit, rate limit, budget) is logged with its provider.
    context.provider ??= target.provider;
    const upstreamBody = upstreamBodyFor(this.body, target);
    // Input guardrails before anything is spent or sent (redactions land in upstreamBody); a denial is a 446.
    const inputResults = node.inputGuardrails.length && this.texts ? await this.checkInput(node, upstreamBody) : null;
    const cache = this.cacheable ? node.cache : null;
    const identity = node.circuitBreaker || cache ? upstreamIdentity(target) : '';
    const breaker = node.circuitBreaker ? breakers.get(`${identity}|${String(upstreamBody.model)}`, node.circuitBreaker) : null;
    if (breaker && !breaker.tryAcquire(Date.now())) {
      const seconds = Math.max(1, Math.ceil(breaker.retryAfterMs(Date.now()) / 1000));
      const error = new GatewayError(503, 'service_unavailable', `The circuit breaker of target ${node.path ?? '(root)'} (${target.provider}) is open after repeated failures`, 'circuit_open', null, {
        'retry-after': String(seconds),
      });
      throw error;
    }

    // Rate limits count every request, cache hits included (429 when over).
    await this.tools.rateLimiter.admit(context, target).catch((error: unknown) => {
      breaker?.release();
      throw error;
    });

    const cacheKey = cache ? responseCacheKey(context.operation ?? '', identity, upstreamBody) : null;
    context.cacheStatus = 'DISABLED';
    if (cacheKey) {
      const refresh = context.cacheForceRefresh;
      context.cacheStatus = refresh ? 'REFRESH' : 'MISS';
      const hit = refresh ? null : await this.tools.cache.get(cacheKey);
      if (hit) {
        breaker?.release();
        return this.replay(node, target, hit);
      }
    }

    // A cache hit costs nothing; anything sent upstream is reserved against the budgets first (402 when spent).
    if (this.budgeted) {
      await this.tools.budgets.reserve(context, target, upstreamBody).catch((error: unknown) => {
        breaker?.release();
        throw error;
      });
    }

    for (let retry = 0; ; retry++) {
      this.startAttempt(node, target, retry);
      if (inputResults) noteResults(context, 'input', inputResults);
      this.sent = true;
      try {
        const sent = await this.send(target, upstreamBody);
        const result = node.outputGuardrails.length && this.texts ? await this.checkOutput(node, sent) : sent;
        breaker?.onSuccess();
        return cacheKey ? this.storeInCache(cacheKey, cache!.maxAgeSeconds, result) : result;
      } catch (error) {
        const failure = this.failureOf(error);
        if (!failure) {
          breaker?.release();
          throw error;
        }
        breaker?.onFailure(failure.status, failure.unreachable, Date.now());
        this.noteFailure(error);
        const delay = this.spent || (breaker && !breaker.tryAcquire(Date.now())) ? null : retryDelayMs(node.retry, retry, failure, this.tools.timing, Math.random);
        if (delay === null) throw error;
        await sleep(delay, undefined, { signal: context.abort.signal }).catch(() => {
          throw new ClientClosedRequestError();
        });
      }
    }
  }

  private checkInput(node: RouteNode, upstreamBody: Record<string, unknown>) {
    this.context.model ??= typeof upstreamBody.model === 'string' ? upstreamBody.model : null;
    return enforceGuardrails('input', node.inputGuardrails, this.texts!.request(upstreamBody), this.context);
  }

  /**
   * Output guardrails on the answer: a JSON answer is checked whole, on the object the
   * operation parsed (`context.responseBody`), and re-encoded when a check redacted it; a stream is checked on its assembled answer at the end, where a
   * denial becomes the operation's error event before the stream's final frame (the text
   * has been sent by then: a stream cannot be taken back).
   */
  private async checkOutput(node: RouteNode, result: GatewayResult): Promise<GatewayResult> {
    const context = this.context;
    const texts = this.texts!;
    if (result.kind === 'json') {
      // The answer as the operation parsed it for the log: redactions land there, then in a re-encoded body.
      const slots = texts.answer(context.responseBody);
      const before = slots.map((slot) => slot.text);
      await enforceGuardrails('output', node.outputGuardrails, slots, context);
      if (slots.every((slot, i) => slot.text === before[i])) return result;
      return { ...result, body: Buffer.from(JSON.stringify(context.responseBody)) };
    }
    if (result.kind !== 'sse') return result;
    const frames = new Observable<string>((subscriber) => {
      const held: string[] = [];
      const inner = result.frames.subscribe({
        next: (frame) => (texts.isFinalFrame?.(frame) ? held.push(frame) : subscriber.next(frame)),
        error: (error) => subscriber.error(error),
        complete: () => {
          enforceGuardrails('output', node.outputGuardrails, texts.answer(context.responseBody), context)
            .catch((error: unknown) => {
              if (!(error instanceof GatewayError)) throw error;
              context.noteError(error); // the stream's 200 stands; the denial is in the stream and the log
              subscriber.next(texts.streamError!(error));
            })
            .catch(() => undefined)
            .finally(() => {
              held.forEach((frame) => subscriber.next(frame));
              subscriber.complete();
            });
        },
      });
      return () => inner.unsubscribe();
    });
    return { ...result, frames };
  }

  /** Logs the previous failed attempt (now that another follows) and resets the context. */
  private startAttempt(node: RouteNode, target: RouteTarget, retry: number): void {
    if (this.pendingFailure) this.tools.requestLogger.recordAttempt(this.context);
    this.pendingFailure = false;
    this.context.beginAttempt(target, node.path, retry);
  }

  /** The failed attempt's outcome stays on the context: the final row or an attempt row. */
  private noteFailure(error: unknown): void {
    this.context.noteError(error);
    this.pendingFailure = true;
  }

  /** Null for what no other target or retry can fix: the client left, a bug. */
  private failureOf(error: unknown): AttemptFailure | null {
    if (error instanceof UpstreamHttpError) return { status: error.status, unreachable: false, retryAfterMs: parseRetryAfter(error.headers) };
    if (error instanceof GatewayError) {
      const unreachable = error.code === 'upstream_unreachable' || error.code === 'request_timeout' || error.code === 'circuit_open';
      return { status: error.status, unreachable, retryAfterMs: null };
    }
    return null;
  }

  private replay(node: RouteNode, target: RouteTarget, hit: CachedResponse): GatewayResult {
    const context = this.context;
    this.startAttempt(node, target, 0);
    context.cacheStatus = 'HIT';
    context.provider = hit.provider;
    context.model = hit.model;
    context.servedModel = hit.servedModel;
    context.usage = hit.usage;
    context.responseBody = hit.responseBody;
    context.markFirstToken();
    if (hit.kind === 'sse') return { kind: 'sse', status: hit.status, frames: from(hit.frames ?? []) };
    return { kind: 'json', status: hit.status, body: Buffer.from(hit.body ?? '', 'utf8') };
  }

  /**
   * Stores a 2xx answer once complete: JSON before it is returned, a stream before its
   * last frame is flushed, so a client repeating the request right after gets the hit.
   * A store slower than CACHE_WRITE_WAIT_MS is not waited for.
   */
  private async storeInCache(key: string, maxAgeSeconds: number, result: GatewayResult): Promise<GatewayResult> {
    const context = this.context;
    // Binary answers (audio) are never cached: the operations that make them are not cacheable.
    if (result.status < 200 || result.status >= 300 || result.kind === 'binary') return result;
    const kind = result.kind;
    const store = (value: Partial<CachedResponse>) =>
      Promise.race([
        this.tools.cache.set(
          key,
          {
            kind,
            status: result.status,
            provider: context.provider!,
            model: context.model,
            servedModel: context.servedModel,
            usage: context.usage,
            responseBody: context.responseBody,
            ...value,
          },
          maxAgeSeconds,
        ),
        sleep(CACHE_WRITE_WAIT_MS, undefined, { ref: false }),
      ]);
    if (result.kind === 'json') {
      await store({ body: result.body.toString('utf8') });
      return result;
    }
    const frames: string[] = [];
    const teed = new Observable<string>((subscriber) =>
      result.frames.subscribe({
        next: (frame) => {
          frames.push(frame);
          subscriber.next(frame);
        },
        error: (error) => subscriber.error(error),
        complete: () => {
          if (context.error) return subscriber.complete();
          void store({ frames }).finally(() => subscriber.complete());
        },
      }),
    );
    return { kind: 'sse', status: result.status, frames: teed };
  }
}
