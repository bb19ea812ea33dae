/**
 * What the mock upstream's two batch APIs share (mock-openai-batches.ts, mock-anthropic-batches.ts):
 *   - `CapturedResponse`: a stand-in for `http.ServerResponse` that keeps the answer in memory, so
 *     mock-upstream.ts can run a batch's request through its own routes (`Dispatch`) and a line gets
 *     exactly what a synchronous call would have (bodies, usage, model switches), without a socket
 *     and without being recorded in `requests`
 *   - `BatchPace`: the batches' clock, per mock server: how long each state lasts (`stepMs`), the
 *     pause before each request (`lineMs`), when a batch expires (`expiresInMs`), and `hold()` to
 *     keep every batch in a state until `release()`. Its timers are unref'd and cleared by close().
 */
import { EventEmitter } from 'node:events';
import type * as http from 'node:http';

/** An answer of the mock's own routes, as a client would have read it. */
export interface CapturedReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The route dropped the connection (mock-drop, mock-cut-body, …): no usable answer. */
  dropped: boolean;
}

/** One request the mock runs for itself: its answer, and a way to give up on it (the client "went away"). */
export interface InternalCall {
  reply: Promise<CapturedReply>;
  abort(): void;
}

/** Runs a JSON request through the mock upstream's routes without recording it (see startMockUpstream). */
export type Dispatch = (method: string, path: string, headers: http.IncomingHttpHeaders, body: unknown) => InternalCall;

/** The parts of `http.ServerResponse` the mock's routes use, kept in memory. */
export class CapturedResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  destroyed = false;
  writableEnded = false;
  writableFinished = false;
  readonly reply: Promise<CapturedReply>;
  private headers: Record<string, string> = {};
  private chunks: Buffer[] = [];
  private settle!: (reply: CapturedReply) => void;
  private settled = false;

  constructor() {
    super();
    this.reply = new Promise((resolve) => (this.settle = resolve));
  }

  writeHead(status: number, headers?: Record<string, string | number | readonly string[]>): this {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers ?? {})) this.headers[name.toLowerCase()] = String(value);
    this.headersSent = true;
    return this;
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.headers[name.toLowerCase()] = String(value);
    return this;
  }

  getHeader(name: string): string | undefined {
    return this.headers[name.toLowerCase()];
  }

  flushHeaders(): void {
    this.headersSent = true;
  }

  write(chunk: string | Buffer, callback?: () => void): boolean {
    if (this.destroyed || this.writableEnded) return false;
    this.headersSent = true;
    this.chunks.push(Buffer.from(chunk));
    if (callback) setImmediate(callback);
    return true;
  }

  end(chunk?: string | Buffer | (() => void), callback?: () => void): this {
    if (this.destroyed || this.writableEnded) return this;
    if (typeof chunk === 'function') callback = chunk;
    else if (chunk !== undefined) this.chunks.push(Buffer.from(chunk));
    this.headersSent = true;
    this.writableEnded = this.writableFinished = true;
    this.finish(false);
    this.emit('finish');
    this.emit('close');
    if (callback) setImmediate(callback);
    return this;
  }

  /** The route dropped the connection. */
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.finish(true);
    this.emit('close');
    return this;
  }

  /** The caller gives up (a cancelled or expired batch): the route's timers stop as on a client abort. */
  abort(): void {
    if (this.writableEnded) return;
    this.destroy();
  }

  private finish(dropped: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.settle({ status: this.statusCode, headers: this.headers, body: Buffer.concat(this.chunks).toString(), dropped });
  }
}

/** Where a batch may be held (OpenAI's and Anthropic's non-terminal states). */
export type HoldState = 'validating' | 'in_progress' | 'finalizing' | 'cancelling' | 'canceling';

export const DEFAULT_STEP_MS = 50;
export const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The pace of one mock server's batches. Tests set the fields directly; reset() restores them.
 *   stepMs       how long a batch stays in each state (validating, in_progress before its first
 *                request, finalizing, cancelling), default 50
 *   lineMs       the pause before each request of a batch in progress, default 0
 *   expiresInMs  from creation to expiry (expires_at, and when unrun requests expire), default 24 h
 */
export class BatchPace {
  stepMs = DEFAULT_STEP_MS;
  lineMs = 0;
  expiresInMs = DAY_MS;
  private held: { state: HoldState; afterLines: number } | null = null;
  private timers = new Set<NodeJS.Timeout>();
  private waiters = new Set<() => void>();
  private closed = false;

  /**
   * Keeps every batch that reaches `state` there until release() (a cancel or an expiry still
   * moves it on). For in_progress, `afterLines` requests run first (default 0: none).
   */
  hold(state: HoldState, options: { afterLines?: number } = {}): void {
    this.held = { state, afterLines: options.afterLines ?? 0 };
    this.wake();
  }

  release(): void {
    this.held = null;
    this.wake();
  }

  /** Whether a batch in `state` with `linesDone` requests run must wait. */
  holds(state: HoldState, linesDone = 0): boolean {
    return this.held !== null && this.held.state === state && linesDone >= this.held.afterLines;
  }

  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => this.after(ms, resolve));
  }

  /** Runs `fn` after `ms` (an unref'd timer, cleared by close()); returns a function that clears it. */
  after(ms: number, fn: () => void): () => void {
    if (this.closed) return () => {};
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.add(timer);
    return () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    };
  }

  /** Resolves once `ready()` is true; checked again on every wake(). */
  async until(ready: () => boolean): Promise<void> {
    while (!ready()) await new Promise<void>((resolve) => this.waiters.add(resolve));
  }

  /** Something a waiting batch may be waiting for changed (a release, a cancel, an expiry). */
  wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const resolve of waiters) resolve();
  }

  reset(): void {
    this.stepMs = DEFAULT_STEP_MS;
    this.lineMs = 0;
    this.expiresInMs = DAY_MS;
    this.release();
  }

  /** The mock server closes: batches stop where they are. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.waiters.clear();
  }
}

/** Counts one more execution of `customId`. */
export function countExecution(executions: Map<string, number>, customId: string): void {
  executions.set(customId, (executions.get(customId) ?? 0) + 1);
}
