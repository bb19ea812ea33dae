import { performance } from 'node:perf_hooks';
import { describeFailure, type LoggedError } from '../common/errors/gateway-error';
import type { NormalizedUsage } from '../providers/usage';
import type { GuardrailResult } from './guardrail-records';
import type { RouteTarget } from './route-plan';

/**
 * What a provider's answer taught the gateway, returned with the answer (see GatewayResult):
 * the log row, the response cache and the output guardrails read it.
 */
export interface AnswerOutcome {
  /** The answer as the client's SDK would see it (a stream assembled), or `{type, content_type, bytes}` for a binary one. */
  responseBody: unknown;
  usage: NormalizedUsage | null;
  /** The usage is the gateway's estimate: the stream ended before the provider reported it. */
  usageEstimated?: boolean;
  /** The model name the provider reported (may carry a snapshot date), used for pricing. */
  servedModel: string | null;
  /** A cost the operation worked out itself (DALL·E per image, a fine-tuning job's training), used instead of pricing the usage. */
  costUsd?: number | null;
  /** Milliseconds from the request's start to the first token of a stream. */
  ttftMs?: number | null;
  /** An error inside a 2xx answer: a stream's error event or break after it started, an output guardrail's denial at its end. */
  error?: LoggedError | null;
}

/** An answer that came with nothing to learn from (an upload's echo, a resource list without usage). */
export const EMPTY_OUTCOME: AnswerOutcome = Object.freeze({ responseBody: null, usage: null, servedModel: null });

/**
 * One attempt of a request (a target tried once): the executor opens one per target and
 * retry, in order, on the request's context; the logger makes a row of each. The attempt
 * code writes what it learns while sending (the model sent, what its translation ignored);
 * the answer's outcome comes back as a value and is kept here by the executor.
 */
export class Attempt {
  readonly createdAt = new Date();
  private readonly startedAt = performance.now();
  /** The model sent (after routing and override_params). */
  model: string | null = null;
  readonly ignoredParams: string[] = [];
  /** Whether a request went out (a refusal before sending, a cache hit: no). */
  sent = false;
  cacheStatus = 'DISABLED';
  guardrails: { input?: GuardrailResult[]; output?: GuardrailResult[] } | null = null;
  /** A guardrail check failed without denying: the answer carries `x-gateway-guardrails: failed`. */
  guardrailsFailed = false;
  /** Set when the attempt failed: its status, error and (a provider's error answer) body. */
  failure: { status: number; error: LoggedError; responseBody?: unknown } | null = null;
  /** The HTTP status of the answer (a 2xx; a failure's is on `failure`). */
  answerStatus: number | null = null;
  /** The answer's outcome; for a stream, once it has ended (see `settled`). */
  outcome: AnswerOutcome | null = null;
  /** The promise `settled` hands out, resolved by `end()`. */
  private whenEnded: { promise: Promise<void>; resolve: () => void } | null = null;
  /** Time the attempt took; set when it ended (a stream: when it closed). */
  latencyMs: number | null = null;

  constructor(
    readonly target: RouteTarget,
    readonly targetIndex: string | null,
    readonly retry: number,
  ) {}

  /** Settles when the attempt has ended (failed, answered with JSON, its stream over); made only when someone waits, as most have ended by then. */
  get settled(): Promise<void> {
    if (this.ended) return Promise.resolve();
    if (!this.whenEnded) {
      let resolve!: () => void;
      const promise = new Promise<void>((settle) => (resolve = settle));
      this.whenEnded = { promise, resolve };
    }
    return this.whenEnded.promise;
  }

  get provider(): string {
    return this.target.provider;
  }

  /** Adds what one translation step ignored (a bridged request has two). */
  noteIgnoredParams(names: readonly string[] | undefined): void {
    if (!names?.length) return;
    for (const name of names) if (!this.ignoredParams.includes(name)) this.ignoredParams.push(name);
  }

  /** The attempt failed with `exception` (a provider's error answer, the gateway's refusal, a timeout). */
  fail(exception: unknown): void {
    this.failure = describeFailure(exception);
    this.end();
  }

  /** Keeps an answer's status and outcome; a stream's outcome arrives when it ends. */
  answered(status: number, outcome: AnswerOutcome | Promise<AnswerOutcome>): void {
    this.answerStatus = status;
    if (!(outcome instanceof Promise)) {
      this.outcome = outcome;
      this.end();
      return;
    }
    void outcome.then((settled) => {
      this.outcome = settled;
      this.end();
    });
  }

  /** Whether the attempt has ended (failed, answered, its stream over). */
  get ended(): boolean {
    return this.latencyMs !== null;
  }

  /** The error to log: the failure's, else one the answer carried. */
  get error(): LoggedError | null {
    return this.failure?.error ?? this.outcome?.error ?? null;
  }

  private end(): void {
    this.latencyMs ??= Math.round(performance.now() - this.startedAt);
    this.whenEnded?.resolve();
  }
}
