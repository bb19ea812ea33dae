import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import { DataSource } from 'typeorm';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { BATCH_LINE_HEADER, BatchLineToken } from '../../common/crypto/batch-line-token';
import { SecretBox } from '../../common/crypto/secret-box';
import type { Environment } from '../../config/environment';
import { Readiness } from '../health/readiness';
import { BatchFinisher } from './batch-finisher';
import type { BatchRow } from './batch-shapes';

/** How often an instance deletes the batch files that have expired. */
const SWEEP_INTERVAL_MS = 60_000;
/** Batches looked at per tick. */
const BATCHES_PER_TICK = 32;
/** How long a line may take (a model's answer can take minutes). */
const LINE_TIMEOUT_MS = 15 * 60_000;

/** What the runner keeps of a batch it is sending lines of. */
interface RunningBatch {
  id: string;
  endpoint: string;
  keyHash: string;
  headers: Record<string, string>;
}

interface LeasedLine {
  line: number;
  custom_id: string;
  body: Record<string, unknown>;
}

/**
 * Runs the batches the gateway runs itself, on every instance (CONTRACT section 17). Each
 * tick it leases a batch's pending lines (`for update skip locked`, under the batch's
 * advisory lock, so that every instance together keeps at most BATCH_CONCURRENCY of a batch
 * in flight) and sends each one through the gateway's own HTTP port, as a request of the key
 * that created the batch (BatchLineToken): routing, fallbacks, guardrails, budgets, rate
 * limits and the log treat a line like any request, and its log row names the batch.
 *
 * An instance whose event loop was busy more than BATCH_YIELD_UTILIZATION (60%) of the last tick sends one line of a
 * batch at a time, so that a batch slows down rather than the interactive requests.
 *
 * A line is sent at most once: it is marked `sending` before it goes, and a line whose
 * instance stopped renewing its lease (killed mid-flight) ends as `errored`
 * (`line_interrupted`), never sent again: whether the provider ran it is unknown. A line that
 * never reached the gateway's port goes back to `pending`. A graceful shutdown stops leasing
 * and lets the lines in flight finish. A line answered 429 (a rate limit, the key's or the
 * provider's: nothing ran) goes back to `pending` and the batch pauses for its Retry-After
 * on this instance. A line answered 401 (the key revoked or expired) ends the batch's
 * remaining lines as `api_key_invalid`; one answered 402 (a budget reached), as
 * `budget_exceeded`. At the end of the completion window the
 * lines not yet sent are `expired`; a cancel cancels them. A batch with no line left to
 * send or in flight ends (`completed`, `expired` or `cancelled`) with its output and error
 * files.
 */
@Injectable()
export class BatchRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(BatchRunner.name);
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly concurrency: number;
  private readonly pollMs: number;
  /** Over this share of its time busy (the last tick), an instance sends one line of a batch at a time: interactive requests come first. */
  private readonly yieldUtilization: number;
  /** LOG_RETENTION_DAYS: ended batches are kept as long as their log rows (sweep). */
  private readonly retentionDays: number | undefined;
  /** A sending line's lease: renewed on every tick by its instance; one not renewed this long is an instance gone (at least three ticks). */
  private readonly leaseSeconds: number;
  private readonly agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly running = new Map<string, RunningBatch>();
  private readonly leasing = new Set<string>();
  /** Batches answered 429: when their lines may go out again (pause). */
  private readonly pausedUntil = new Map<string, number>();
  private baseUrl: string | null = null;
  private sweptAt = 0;
  private loopMark: EventLoopUtilization = performance.eventLoopUtilization();
  /** How busy the event loop was over the last tick (0 to 1). */
  private utilization = 0;

  constructor(
    private readonly db: DataSource,
    private readonly box: SecretBox,
    private readonly finisher: BatchFinisher,
    private readonly readiness: Readiness,
    private readonly adapterHost: HttpAdapterHost,
    config: ConfigService<Environment, true>,
  ) {
    this.concurrency = config.get('BATCH_CONCURRENCY', { infer: true });
    this.pollMs = config.get('BATCH_POLL_MS', { infer: true });
    this.yieldUtilization = config.get('BATCH_YIELD_UTILIZATION', { infer: true });
    this.retentionDays = config.get('LOG_RETENTION_DAYS', { infer: true });
    this.leaseSeconds = Math.max(config.get('BATCH_LEASE_SECONDS', { infer: true }), Math.ceil((this.pollMs * 3) / 1000));
  }

  onApplicationBootstrap(): void {
    this.schedule();
  }

  /**
   * Stops leasing; the lines in flight finish (their requests are open ones the shutdown
   * waits for) and are recorded, before any module closes (the database pool among them).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
    await this.agent.close().catch(() => undefined);
  }

  /** One pass: what a tick does (also called by tests that cannot wait for the timer). */
  async tick(): Promise<void> {
    const mark = performance.eventLoopUtilization();
    this.utilization = performance.eventLoopUtilization(mark, this.loopMark).utilization;
    this.loopMark = mark;
    if (this.inFlight.size) await this.renewLeases();
    await this.recoverInterrupted();
    if (Date.now() - this.sweptAt > SWEEP_INTERVAL_MS) {
      this.sweptAt = Date.now();
      await this.sweep();
    }
    const batches = await this.db.query<BatchRow[]>(
      `select id, endpoint, key_hash, route_headers, status, expires_at from batches
       where status in ('in_progress', 'cancelling') and mode = 'gateway' order by created_at limit ${BATCHES_PER_TICK}`,
    );
    for (const batch of batches) {
      if (batch.status === 'cancelling') await this.finisher.endPending(batch.id, 'cancelled', null);
      else if (batch.expires_at.getTime() <= Date.now())
        await this.finisher.endPending(batch.id, 'expired', {
          code: 'batch_expired',
          message: 'The batch did not reach this line within its completion window',
        });
      else if (this.readiness.ready && !this.stopped) await this.fill(this.runningBatch(batch));
      if (await this.finisher.finishIfDone(batch.id)) {
        this.running.delete(batch.id);
        this.pausedUntil.delete(batch.id);
      }
    }
  }

  /**
   * Deletes what has outlived its keeping: uploaded batch files past their expires_at (a
   * batch made from one keeps its lines), and, with LOG_RETENTION_DAYS, the batches that
   * ended longer ago than that (their lines and output and error files with them), as the
   * log drops their rows.
   */
  async sweep(): Promise<void> {
    await this.db.query(`delete from batch_files where expires_at < now() and batch_id is null`);
    if (this.retentionDays === undefined) return;
    await this.db.query(
      `with gone as (
         delete from batches where coalesce(completed_at, failed_at, expired_at, cancelled_at) < now() - $1 * interval '1 day' returning id)
       delete from batch_files where batch_id in (select id from gone)`,
      [this.retentionDays],
    );
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tick()
        .catch((error: Error) => this.logger.warn(`Batch runner: ${error.message}`))
        .finally(() => this.schedule());
    }, this.pollMs);
    this.timer.unref();
  }

  private runningBatch(row: BatchRow): RunningBatch {
    let batch = this.running.get(row.id);
    if (!batch) {
      const headers = JSON.parse(this.box.decrypt(row.route_headers)) as Record<string, string>;
      batch = { id: row.id, endpoint: row.endpoint, keyHash: row.key_hash, headers };
      this.running.set(row.id, batch);
    }
    return batch;
  }

  /** Leases as many of the batch's pending lines as its concurrency leaves room for, and sends them. */
  private async fill(batch: RunningBatch): Promise<void> {
    if (this.leasing.has(batch.id) || this.stopped || !this.readiness.ready) return;
    if ((this.pausedUntil.get(batch.id) ?? 0) > Date.now()) return;
    this.leasing.add(batch.id);
    try {
      const lines = await this.db.transaction(async (q) => {
        await q.query(`select pg_advisory_xact_lock(hashtext($1))`, [batch.id]);
        return q.query<LeasedLine[]>(
          // `picked` is materialized: a subquery joined in the UPDATE could be scanned again per row, leasing past its limit.
          `with room as (select $3::int - count(*)::int as n from batch_lines where batch_id = $1 and status = 'sending'),
           picked as materialized (select line from batch_lines where batch_id = $1 and status = 'pending' order by line
                 limit greatest((select n from room), 0) for update skip locked)
           update batch_lines l set status = 'sending', lease_owner = $2, leased_until = now() + $4 * interval '1 second'
           from picked where l.batch_id = $1 and l.line = picked.line
           returning l.line, l.custom_id, l.body`,
          [batch.id, this.owner, this.utilization > this.yieldUtilization ? 1 : this.concurrency, this.leaseSeconds],
        );
      });
      // An UPDATE answers [rows, count].
      const [leased] = lines as unknown as [LeasedLine[], number];
      for (const line of leased) this.track(this.send(batch, line));
    } finally {
      this.leasing.delete(batch.id);
    }
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /** Sends one line through the gateway's own port and records its answer; then the batch's next lines. */
  private async send(batch: RunningBatch, line: LeasedLine): Promise<void> {
    const token = BatchLineToken.sign(this.box, { keyHash: batch.keyHash, batchId: batch.id, customId: line.custom_id });
    let outcome: { status: number; body: unknown; requestId: string | null } | null = null;
    try {
      const answer = await request(`${this.base()}${batch.endpoint}`, {
        method: 'POST',
        headers: { ...batch.headers, 'content-type': 'application/json', [BATCH_LINE_HEADER]: token },
        body: JSON.stringify(line.body),
        dispatcher: this.agent,
        headersTimeout: LINE_TIMEOUT_MS,
        bodyTimeout: LINE_TIMEOUT_MS,
      });
      const text = await answer.body.text();
      const requestId = answer.headers['x-gateway-request-id'];
      outcome = { status: answer.statusCode, body: parseAnswer(text), requestId: typeof requestId === 'string' ? requestId : null };
      if (answer.statusCode === 429) {
        // Refused for now (the key's rate limit, or the provider's): nothing ran, so the line waits its turn again and the batch pauses.
        this.pause(batch.id, answer.headers['retry-after']);
        await this.release(batch.id, line.line);
        return;
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      // Refused at connect: the request never reached the gateway, so the line can go out later.
      if (code === 'ECONNREFUSED' || code === 'UND_ERR_CONNECT_TIMEOUT') {
        await this.release(batch.id, line.line);
        return;
      }
      await this.record(batch.id, line.line, 'errored', {
        error: { code: 'line_interrupted', message: `The line's request failed on its way (${(error as Error).message}); it is not sent again` },
      });
      return;
    }
    await this.record(batch.id, line.line, outcome.status < 300 ? 'succeeded' : 'failed', outcome);
    if (outcome.status === 402) {
      await this.finisher.endPending(batch.id, 'errored', {
        code: 'budget_exceeded',
        message: 'A budget was reached while the batch ran: this line was not sent',
      });
    } else if (outcome.status === 401) {
      await this.finisher.endPending(batch.id, 'errored', {
        code: 'api_key_invalid',
        message: 'The API key that created the batch no longer authenticates (revoked or expired): this line was not sent',
      });
    }
    if (!this.stopped) await this.fill(batch).catch((error: Error) => this.logger.warn(`Batch ${batch.id}: ${error.message}`));
  }

  /** No line of the batch leaves this instance until `retryAfter` (seconds; 1 to 60, 1 when unsaid) has passed. */
  private pause(batchId: string, retryAfter: string | string[] | undefined): void {
    const seconds = Math.min(Math.max(Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) || 1, 1), 60);
    this.pausedUntil.set(batchId, Date.now() + seconds * 1000);
  }

  private async record(
    batchId: string,
    line: number,
    status: 'succeeded' | 'failed' | 'errored',
    outcome: { status?: number; body?: unknown; requestId?: string | null; error?: { code: string; message: string } },
  ): Promise<void> {
    await this.db.query(
      `update batch_lines set status = $3, status_code = $4, response = $5, request_id = $6, error = $7, ended_at = now(), lease_owner = null, leased_until = null
       where batch_id = $1 and line = $2 and status = 'sending'`,
      [
        batchId,
        line,
        status,
        outcome.status ?? null,
        outcome.body === undefined ? null : JSON.stringify(outcome.body),
        outcome.requestId ?? null,
        outcome.error ? JSON.stringify(outcome.error) : null,
      ],
    );
  }

  private async release(batchId: string, line: number): Promise<void> {
    await this.db.query(
      `update batch_lines set status = 'pending', lease_owner = null, leased_until = null where batch_id = $1 and line = $2 and status = 'sending'`,
      [batchId, line],
    );
  }

  private async renewLeases(): Promise<void> {
    await this.db.query(`update batch_lines set leased_until = now() + $2 * interval '1 second' where lease_owner = $1 and status = 'sending'`, [
      this.owner,
      this.leaseSeconds,
    ]);
  }

  /** Lines whose instance stopped renewing their lease: sent or not, they are not sent again. */
  private async recoverInterrupted(): Promise<void> {
    await this.db.query(
      `update batch_lines set status = 'errored', ended_at = now(), lease_owner = null, leased_until = null,
         error = '{"code": "line_interrupted", "message": "The gateway instance sending this line stopped before its answer; it is not sent again, since the provider may have run it"}'
       where status = 'sending' and leased_until < now()`,
    );
  }

  /** The gateway's own HTTP address, as it listens (a wildcard address reached on loopback). */
  private base(): string {
    if (!this.baseUrl) {
      const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
      const address = server.address() as AddressInfo | null;
      if (!address) throw new Error('The gateway is not listening yet');
      const host = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
      this.baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
    }
    return this.baseUrl;
  }
}

/** A line's answer as its result keeps it: JSON, or the text of anything else. */
function parseAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}
