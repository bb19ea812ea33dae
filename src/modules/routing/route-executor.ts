import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { from, Observable } from 'rxjs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import type { OpenedContext, RequestContext } from '../../context/request-context';
import { forgetReceivedBytes } from '../../common/http/received-body';
import { ClientClosedRequestError, describeFailure, GatewayError, UpstreamHttpError } from '../../common/errors/gateway-error';
import type { GatewayResult } from './gateway-result';
import type { Environment } from '../../config/environment';
import { BudgetLedger } from '../budgets/budget-ledger';
import { RateLimiter } from '../budgets/rate-limiter';
import { CachedResponse, ResponseCache, responseCacheKey } from '../cache/response-cache';
import { enforceGuardrails } from '../guardrails/guardrail-stage';
import type { OperationTexts } from '../guardrails/operation-texts';
import { Attempt, type AnswerOutcome } from '../../context/attempt';
import { CircuitBreaker, CircuitBreakerRegistry } from './circuit-breaker';
import { AttemptFailure, chooseConditional, fallsBack, parseRetryAfter, pickWeighted, retryDelayMs } from './route-planner';
import type { RouteNode, RouteTarget } from '../../context/route-plan';
import { RouteResolver } from './route-resolver';

/**
 * One attempt of an operation: send `body` to `target` and turn the answer into a
 * GatewayResult carrying its outcome (usage, answer, served model; a stream's when it
 * ends). What it learns while sending (the model sent, ignored parameters) goes on
 * `attempt`. Throws UpstreamHttpError for a provider's error answer and GatewayError for
 * the gateway's own (unreachable, timeout, malformed). For a stream it must resolve only
 * once the first bytes have arrived, so that a stream failing before them can fall back.
 */
export type AttemptSender = (target: RouteTarget, body: Record<string, unknown>, attempt: Attempt) => Promise<GatewayResult>;

/** How long an answer waits for its cache write before it is sent anyway. */
const CACHE_WRITE_WAIT_MS = 250;

/**
 * The body sent to a target: the model routing chose, then the config's override_params,
 * in a copy (`copy` too for a leaf whose guardrails may redact it). Without either it is
 * the client's own object, which an adapter of the client's format sends as received (jsonPayload).
 */
export function upstreamBodyFor(body: Record<string, unknown>, target: RouteTarget, copy = false): Record<string, unknown> {
  const model = target.model ?? body.model;
  if (!copy && model === body.model && Object.keys(target.overrideParams).length === 0) return body;
  return { ...body, model, ...target.overrideParams };
}

/** What identifies an upstream for the cache and the circuit breaker; holds no secret. */
function upstreamIdentity(target: RouteTarget): string {
  const credential = target.virtualKeyId ?? (target.apiKey ? createHash('sha256').update(target.apiKey).digest('hex').slice(0, 24) : '-');
  return [target.provider, credential, target.customHost ?? '', target.organization ?? '', target.project ?? ''].join('|');
}

/**
 * Runs a request along its routing tree (see route-plan.ts): strategies choose among
 * children (route-planner.ts decides, this class does the I/O), leaves send with
 * retries, the circuit breaker and the response cache. Each attempt gets a record on the
 * context (see Attempt) with its outcome; the logger makes the request's row of the last
 * and a row of each earlier one that was sent, under the request's trace id.
 */
@Injectable()
export class RouteExecutor {
  private readonly tools: ExecutionTools;

  constructor(resolver: RouteResolver, cache: ResponseCache, budgets: BudgetLedger, rateLimiter: RateLimiter, config: ConfigService<Environment, true>) {
    const timing = { baseDelayMs: config.get('RETRY_BASE_DELAY_MS', { infer: true }), maxDelayMs: config.get('RETRY_MAX_DELAY_MS', { infer: true }) };
    this.tools = { resolver, cache, budgets, rateLimiter, breakers: new CircuitBreakerRegistry(), timing };
  }

  /**
   * `cacheable: false` for operations whose answer must never be replayed (a DELETE, a cancel);
   * `replayable: false` for a request body that streams through once (an upload): after
   * the first attempt has been sent, no retry and no fallback. `texts`: where the
   * operation's request and answer text is, for the config's guardrails (operations
   * without it run none). `budgeted: false` for an operation that costs nothing (token
   * counting): nothing is reserved, so a spent budget does not refuse it. `metered: false`
   * for a walk that only opens a channel whose requests are metered one by one (the
   * Responses API's WebSocket): no rate limit counted, nothing reserved.
   */
  execute(
    context: OpenedContext,
    body: Record<string, unknown>,
    send: AttemptSender,
    options: { cacheable?: boolean; replayable?: boolean; texts?: OperationTexts; budgeted?: boolean; metered?: boolean } = {},
  ): Promise<GatewayResult> {
    const run = new ExecutionRun(
      this.tools,
      context,
      body,
      send,
      options.cacheable ?? true,
      options.replayable ?? true,
      options.texts ?? null,
      options.budgeted ?? true,
      options.metered ?? true,
    );
    return run.node(context.route!.root);
  }
}

interface ExecutionTools {
  resolver: RouteResolver;
  cache: ResponseCache;
  budgets: BudgetLedger;
  rateLimiter: RateLimiter;
  /** Process-wide: breaker state outlives requests. */
  breakers: CircuitBreakerRegistry;
  timing: { baseDelayMs: number; maxDelayMs: number };
}

/** The state of one request's walk through its tree. */
class ExecutionRun {
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
    private readonly metered: boolean,
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

  /**
   * A leaf: its stages in order. Each refusal on the way (a guardrail's denial, an open
   * circuit, a rate limit, a spent budget) fails the attempt it opened and ends the leaf.
   */
  private async leaf(node: RouteNode): Promise<GatewayResult> {
    const target = await this.tools.resolver.resolveLeaf(node, this.context.route!);
    const body = upstreamBodyFor(this.body, target, node.inputGuardrails.length > 0);
    const attempt = this.open(node, target, 0, body);
    try {
      await this.checkInput(node, attempt, body);
      const breaker = this.admitThroughBreaker(node, target, body);
      try {
        if (this.metered) await this.tools.rateLimiter.admit(this.context, target);
        const cache =
          this.cacheable && node.cache
            ? { key: responseCacheKey(this.context.operation ?? '', upstreamIdentity(target), body), maxAgeSeconds: node.cache.maxAgeSeconds }
            : null;
        const hit = cache ? await this.lookUpCache(attempt, cache.key) : null;
        if (hit) {
          breaker?.release();
          return hit;
        }
        if (this.budgeted && this.metered) await this.tools.budgets.reserve(this.context, target, body);
        const result = await this.sendWithRetries(node, target, body, attempt, breaker);
        return cache ? this.storeInCache(cache.key, cache.maxAgeSeconds, result) : result;
      } catch (error) {
        breaker?.release();
        throw error;
      }
    } catch (error) {
      // The leaf's last attempt failed, or a stage refused it before it was sent.
      const last = this.context.lastAttempt!;
      if (!last.failure && !last.outcome) last.fail(error);
      throw error;
    }
  }

  /** Opens the record of one attempt (the logger makes a row of each). */
  private open(node: RouteNode, target: RouteTarget, retry: number, body: Record<string, unknown>): Attempt {
    const attempt = new Attempt(target, node.path, retry);
    attempt.model = typeof body.model === 'string' ? body.model : null;
    this.context.attempts.push(attempt);
    return attempt;
  }

  /**
   * Input guardrails before anything is spent or sent; redactions land in `body`, a denial is a 446.
   * A redaction writes into objects `body` shares with the client's (a copy is shallow): from then
   * on the client's body, on this leaf or any other, is serialised, not sent as received.
   */
  private async checkInput(node: RouteNode, attempt: Attempt, body: Record<string, unknown>): Promise<void> {
    if (!node.inputGuardrails.length || !this.texts) return;
    forgetReceivedBytes(this.body);
    await enforceGuardrails('input', node.inputGuardrails, this.texts.request(body), { model: attempt.model, metadata: this.context.metadata }, attempt);
  }

  /** The target's circuit breaker, if it has one, taking this request; a 503 when it is open. */
  private admitThroughBreaker(node: RouteNode, target: RouteTarget, body: Record<string, unknown>): CircuitBreaker | null {
    if (!node.circuitBreaker) return null;
    const breaker = this.tools.breakers.get(`${upstreamIdentity(target)}|${String(body.model)}`, node.circuitBreaker);
    if (breaker.tryAcquire(Date.now())) return breaker;
    const seconds = Math.max(1, Math.ceil(breaker.retryAfterMs(Date.now()) / 1000));
    throw new GatewayError(
      503,
      'service_unavailable',
      `The circuit breaker of target ${node.path ?? '(root)'} (${target.provider}) is open after repeated failures`,
      'circuit_open',
      null,
      {
        'retry-after': String(seconds),
      },
    );
  }

  /** A cached answer replayed (a hit costs nothing), or null: the attempt goes to the provider. */
  private async lookUpCache(attempt: Attempt, key: string): Promise<GatewayResult | null> {
    const refresh = this.context.cacheForceRefresh;
    attempt.cacheStatus = refresh ? 'REFRESH' : 'MISS';
    const hit = refresh ? null : await this.tools.cache.get(key);
    if (!hit) return null;
    attempt.cacheStatus = 'HIT';
    attempt.model = hit.model;
    const outcome: AnswerOutcome = { usage: hit.usage, responseBody: hit.responseBody, servedModel: hit.servedModel, ttftMs: this.context.elapsedMs() };
    attempt.answered(hit.status, outcome);
    if (hit.kind === 'sse') return { kind: 'sse', status: hit.status, frames: from(hit.frames ?? []), outcome: Promise.resolve(outcome) };
    return { kind: 'json', status: hit.status, body: Buffer.from(hit.body ?? '', 'utf8'), outcome };
  }

  /** Sends, retrying as the leaf's policy says; each retry is an attempt of its own. */
  private async sendWithRetries(
    node: RouteNode,
    target: RouteTarget,
    body: Record<string, unknown>,
    first: Attempt,
    breaker: CircuitBreaker | null,
  ): Promise<GatewayResult> {
    let attempt = first;
    for (let retry = 0; ; retry++) {
      if (retry > 0) attempt = this.retryOf(node, target, retry, body, first);
      attempt.sent = this.sent = true;
      try {
        const sent = await this.send(target, body, attempt);
        // Kept before the output check: an answer denied there is logged with the usage it cost.
        if (sent.kind === 'json') attempt.outcome = sent.outcome;
        const result = await this.checkOutput(node, attempt, sent);
        attempt.answered(result.status, result.outcome);
        breaker?.onSuccess();
        return result;
      } catch (error) {
        const failure = this.failureOf(error);
        if (!failure) throw error;
        attempt.fail(error);
        breaker?.onFailure(failure.status, failure.unreachable, Date.now());
        const delay =
          this.spent || (breaker && !breaker.tryAcquire(Date.now())) ? null : retryDelayMs(node.retry, retry, failure, this.tools.timing, Math.random);
        if (delay === null) throw error;
        await sleep(delay, undefined, { signal: this.context.abort.signal }).catch(() => {
          throw new ClientClosedRequestError();
        });
      }
    }
  }

  /** A retry's record: the same target and body, the input guardrails' results carried over. */
  private retryOf(node: RouteNode, target: RouteTarget, retry: number, body: Record<string, unknown>, first: Attempt): Attempt {
    const attempt = this.open(node, target, retry, body);
    attempt.cacheStatus = first.cacheStatus;
    if (first.guardrails?.input) attempt.guardrails = { input: first.guardrails.input };
    attempt.guardrailsFailed = first.guardrailsFailed;
    return attempt;
  }

  /**
   * Output guardrails on the answer: a JSON answer is checked whole, on its outcome's
   * object, and re-encoded when a check redacted it; a stream is checked on its assembled
   * answer at the end, where a denial becomes the operation's error event before the
   * stream's final frame (the text has been sent by then: a stream cannot be taken back)
   * and the outcome's error.
   */
  private async checkOutput(node: RouteNode, attempt: Attempt, result: GatewayResult): Promise<GatewayResult> {
    if (!node.outputGuardrails.length || !this.texts) return result;
    const texts = this.texts;
    const request = { model: attempt.model, metadata: this.context.metadata };
    if (result.kind === 'json') {
      const slots = texts.answer(result.outcome.responseBody);
      const before = slots.map((slot) => slot.text);
      await enforceGuardrails('output', node.outputGuardrails, slots, request, attempt);
      if (slots.every((slot, i) => slot.text === before[i])) return result;
      return { ...result, body: Buffer.from(JSON.stringify(result.outcome.responseBody)) };
    }
    if (result.kind !== 'sse') return result;
    let settle!: (outcome: AnswerOutcome) => void;
    const outcome = new Promise<AnswerOutcome>((resolve) => (settle = resolve));
    const frames = new Observable<string>((subscriber) => {
      const held: string[] = [];
      let checking = false;
      const inner = result.frames.subscribe({
        next: (frame) => (texts.isFinalFrame?.(frame) ? held.push(frame) : subscriber.next(frame)),
        error: (error) => subscriber.error(error),
        complete: () => {
          checking = true;
          void result.outcome.then(async (answered) => {
            let denial: GatewayError | null = null;
            await enforceGuardrails('output', node.outputGuardrails, texts.answer(answered.responseBody), request, attempt).catch((error: unknown) => {
              if (error instanceof GatewayError) denial = error;
            });
            // The stream's 200 stands; a denial is in the stream and the log.
            if (denial) subscriber.next(texts.streamError(denial));
            settle(denial ? { ...answered, error: answered.error ?? describeFailure(denial).error } : answered);
            held.forEach((frame) => subscriber.next(frame));
            subscriber.complete();
          });
        },
      });
      return () => {
        inner.unsubscribe();
        // A client gone before the end: the stream's own outcome, unchecked. Gone during the
        // check (it had the last frame: Codex leaves at `response.completed`): the check settles it.
        if (!checking) void result.outcome.then(settle);
      };
    });
    return { ...result, frames, outcome };
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

  /**
   * Stores a 2xx answer once complete: JSON before it is returned, a stream before its
   * last frame is flushed, so a client repeating the request right after gets the hit.
   * A store slower than CACHE_WRITE_WAIT_MS is not waited for. A stream that ended with an error is not stored.
   */
  private async storeInCache(key: string, maxAgeSeconds: number, result: GatewayResult): Promise<GatewayResult> {
    // Binary answers (audio) are never cached: the operations that make them are not cacheable.
    if (result.status < 200 || result.status >= 300 || result.kind === 'binary') return result;
    const attempt = this.context.lastAttempt!;
    const kind = result.kind;
    const store = (outcome: AnswerOutcome, value: Pick<CachedResponse, 'body' | 'frames'>) =>
      Promise.race([
        this.tools.cache.set(
          key,
          {
            kind,
            status: result.status,
            provider: attempt.provider,
            model: attempt.model,
            servedModel: outcome.servedModel,
            usage: outcome.usage,
            responseBody: outcome.responseBody,
            ...value,
          },
          maxAgeSeconds,
        ),
        sleep(CACHE_WRITE_WAIT_MS, undefined, { ref: false }),
      ]);
    if (result.kind === 'json') {
      await store(result.outcome, { body: result.body.toString('utf8') });
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
          void result.outcome.then((outcome) => (outcome.error ? undefined : store(outcome, { frames }))).finally(() => subscriber.complete());
        },
      }),
    );
    return { ...result, frames: teed };
  }
}
