import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource } from 'typeorm';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { UpstreamHttpError } from '../../common/errors/gateway-error';
import { parseMetadataHeader } from '../../common/guards/metadata-header';
import type { Environment } from '../../config/environment';
import type { BudgetHold } from '../../context/budget-records';
import type { NativeBatchResult, NativeBatchState } from '../../providers/native-batches';
import { BudgetLedger } from '../budgets/budget-ledger';
import { CHAT_COMPLETIONS } from '../chat/chat-upstream';
import { openAIOpening } from '../chat/chat-dialect';
import { EMBEDDINGS } from '../embeddings/embeddings.controller';
import { RequestLogger } from '../logging/request-logger';
import { MESSAGES_DIALECT } from '../messages/messages-dialect';
import { MESSAGES } from '../messages/messages.service';
import type { ModelDialect } from '../model-operation/model-operation';
import { RESPONSES } from '../responses/responses.service';
import { usageOfAnswer, type AbortedBy, type OperationSpec } from '../upstream/upstream-attempt';
import { BatchFinisher } from './batch-finisher';
import { RUNNING_STATUSES, type BatchRow } from './batch-shapes';
import { NativeBatches, type StoredRun } from './native-batches';

/** A native batch is leased for this long while one instance polls it (renewed while its results are read). */
const LEASE_SECONDS = 300;
/** Batches polled per tick. */
const BATCHES_PER_TICK = 16;
/** Results written per statement. */
const RESULTS_PAGE = 500;

/** What a line's log row says of its operation, by the batch's endpoint: as the synchronous call's. */
const OPERATIONS: Record<string, { operation: string; spec: Pick<OperationSpec, 'usage' | 'answerUsage'>; opening: ModelDialect['opening'] }> = {
  '/v1/chat/completions': { operation: 'chat.completions', spec: CHAT_COMPLETIONS, opening: openAIOpening },
  '/v1/responses': { operation: 'responses', spec: RESPONSES, opening: openAIOpening },
  '/v1/embeddings': { operation: 'embeddings', spec: EMBEDDINGS, opening: openAIOpening },
  '/v1/messages': { operation: 'messages', spec: MESSAGES, opening: (body) => MESSAGES_DIALECT.opening(body) },
};

/** A line a result was written into. */
interface EndedLine {
  custom_id: string;
  body: Record<string, unknown> | null;
}

/**
 * Follows the batches that run at their provider (CONTRACT section 17), on every instance:
 * each tick it leases the native batches due for a poll (`batches.lease_owner` /
 * `leased_until`, `for update skip locked`: one instance at a time polls a batch, every
 * BATCH_NATIVE_POLL_MS), with the credential of the key that created it (NativeBatches.storedRun).
 * The gateway batch's status follows the provider's. A batch the provider failed ends
 * `failed` with the provider's errors. A batch that has ended there has its results read
 * (streamed) into its lines by `custom_id`, each line with a response written as a log row
 * priced at the batch price (RequestLogger.batchLineLogged), then ends as a gateway-run batch
 * does (BatchFinisher), with its output and error files. A result is written into a line
 * still `pending` only, so a poll interrupted and taken up by another instance logs no line
 * twice.
 */
@Injectable()
export class NativeBatchPoller implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(NativeBatchPoller.name);
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly pollMs: number;
  /** Aborts the provider calls in flight at shutdown (the batch is polled again, by this or another instance). */
  private readonly caller: AbortedBy = { abort: new AbortController() };
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private ticking: Promise<void> | null = null;

  constructor(
    private readonly db: DataSource,
    private readonly native: NativeBatches,
    private readonly finisher: BatchFinisher,
    private readonly budgets: BudgetLedger,
    private readonly requestLogger: RequestLogger,
    config: ConfigService<Environment, true>,
  ) {
    this.pollMs = config.get('BATCH_NATIVE_POLL_MS', { infer: true });
  }

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.caller.abort.abort();
    await this.ticking?.catch(() => undefined);
  }

  /** One pass: polls every native batch due (also called by tests that cannot wait for the timer). */
  async tick(): Promise<void> {
    // An UPDATE answers [rows, count].
    const [due] = await this.db.query<[BatchRow[], number]>(
      `with due as (
         select id from batches
         where mode = 'native' and status = any($2) and provider_batch_id is not null and (leased_until is null or leased_until < now())
         order by leased_until nulls first, created_at limit ${BATCHES_PER_TICK} for update skip locked)
       update batches b set lease_owner = $1, leased_until = now() + interval '${LEASE_SECONDS} seconds'
       from due where b.id = due.id
       returning b.*`,
      [this.owner, RUNNING_STATUSES],
    );
    for (const batch of due) {
      if (this.stopped) break;
      await this.poll(batch).catch((error: Error) => this.pollFailed(batch, error));
      // Polled again in BATCH_NATIVE_POLL_MS (a batch that ended has no lease left to give back).
      await this.db.query(`update batches set lease_owner = null, leased_until = now() + $3 * interval '1 millisecond' where id = $1 and lease_owner = $2`, [
        batch.id,
        this.owner,
        this.pollMs,
      ]);
    }
  }

  /**
   * A poll that failed: a provider that no longer knows the batch (404: deleted there, or
   * another account's key since) fails it with the provider's answer, since it would never
   * end otherwise; anything else (a timeout, a 5xx) is tried again at the next poll.
   */
  private async pollFailed(batch: BatchRow, error: Error): Promise<void> {
    this.logger.warn(`Native batch ${batch.id} (${batch.provider} ${batch.provider_batch_id}): ${error.message}`);
    if (!(error instanceof UpstreamHttpError) || error.status !== 404) return;
    const answer = error.body.toString('utf8').slice(0, 500);
    await this.finisher.fail(batch.id, [
      { code: 'provider_batch_not_found', message: `${batch.provider} no longer knows batch ${batch.provider_batch_id} (404: ${answer})` },
    ]);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .catch((error: Error) => this.logger.warn(`Native batch poller: ${error.message}`))
        .finally(() => {
          this.ticking = null;
          this.schedule();
        });
    }, this.pollMs);
    this.timer.unref();
  }

  private async poll(batch: BatchRow): Promise<void> {
    const run = await this.native.storedRun(batch);
    if (!run) {
      const message = `The API key that created this batch was revoked: the gateway stopped following it at ${batch.provider} (batch ${batch.provider_batch_id})`;
      return this.finisher.fail(batch.id, [{ code: 'api_key_revoked', message }]);
    }
    const state = await this.native.poll(run, batch.provider_batch_id!, this.caller);
    switch (state.status) {
      case 'validating':
      case 'in_progress':
      case 'finalizing':
      case 'cancelling':
        return this.follow(batch.id, state.status, state.progress);
      case 'failed':
        return this.finisher.fail(batch.id, await this.clientLines(batch.id, state.errors ?? []));
      default:
        return this.end(batch, run, state);
    }
  }

  /** The provider's running status, and when each began; a cancel asked through the gateway stays `cancelling`. */
  private async follow(batchId: string, status: string, progress: NativeBatchState['progress']): Promise<void> {
    await this.db.query(
      `update batches set status = case when status = 'cancelling' then status else $2 end, provider_progress = coalesce($3, provider_progress),
         in_progress_at = case when $2 in ('in_progress', 'finalizing') then coalesce(in_progress_at, now()) else in_progress_at end,
         finalizing_at = case when $2 = 'finalizing' then coalesce(finalizing_at, now()) else finalizing_at end,
         cancelling_at = case when $2 = 'cancelling' then coalesce(cancelling_at, now()) else cancelling_at end
       where id = $1`,
      [batchId, status, progress ? JSON.stringify(progress) : null],
    );
  }

  /**
   * A provider's validation errors count the lines the gateway sent (the valid ones, in
   * order): each `line` is made the client's own line of its input file.
   */
  private async clientLines(batchId: string, errors: NonNullable<NativeBatchState['errors']>): Promise<NonNullable<NativeBatchState['errors']>> {
    if (!errors.some((error) => typeof error.line === 'number')) return errors;
    const sent = await this.db.query<{ input_line: number | null }[]>(
      `select input_line from batch_lines where batch_id = $1 and status = 'pending' order by line`,
      [batchId],
    );
    return errors.map((error) => (typeof error.line === 'number' ? { ...error, line: sent[error.line - 1]?.input_line ?? error.line } : error));
  }

  /** The batch ended at its provider: its results into its lines (and the log), the lines left without one ended, then the batch with its files. */
  private async end(batch: BatchRow, run: StoredRun, state: NativeBatchState): Promise<void> {
    // A cancel made at the provider directly ends the gateway's batch cancelled too.
    if (state.status === 'cancelled')
      await this.db.query(`update batches set status = 'cancelling', cancelling_at = coalesce(cancelling_at, now()) where id = $1 and status <> 'cancelling'`, [
        batch.id,
      ]);
    let page: NativeBatchResult[] = [];
    for await (const result of this.native.results(run, state, this.caller)) {
      page.push(result);
      if (page.length < RESULTS_PAGE) continue;
      await this.write(batch, run, page);
      page = [];
    }
    await this.write(batch, run, page);
    if (state.status === 'cancelled') await this.finisher.endPending(batch.id, 'cancelled', null);
    else if (state.status === 'expired')
      await this.finisher.endPending(batch.id, 'expired', {
        code: 'batch_expired',
        message: 'The provider did not run this request within the completion window',
      });
    else await this.finisher.endPending(batch.id, 'errored', { code: 'no_result', message: `The provider's results have no line for this request` });
    await this.finisher.finishIfDone(batch.id);
  }

  /** Writes a page of results into the lines still pending (by custom_id), and a log row for each that has a response. */
  private async write(batch: BatchRow, run: StoredRun, results: NativeBatchResult[]): Promise<void> {
    if (!results.length) return;
    const [ended] = await this.db.query<[EndedLine[], number]>(
      `update batch_lines l set status = r.status, status_code = r.status_code, response = r.response, request_id = r.request_id, error = r.error,
         result_id = r.result_id, ended_at = now()
       from unnest($2::text[], $3::text[], $4::int[], $5::jsonb[], $6::text[], $7::jsonb[], $8::text[])
         as r(custom_id, status, status_code, response, request_id, error, result_id)
       where l.batch_id = $1 and l.custom_id = r.custom_id and l.status = 'pending'
       returning l.custom_id, l.body`,
      [
        batch.id,
        results.map((r) => r.customId),
        results.map((r) => r.status),
        results.map((r) => r.statusCode),
        results.map((r) => (r.body === null ? null : JSON.stringify(r.body))),
        results.map((r) => r.requestId),
        results.map((r) => (r.error ? JSON.stringify(r.error) : null)),
        results.map((r) => r.resultId),
      ],
    );
    // The lease is renewed as results come in: a batch of 50,000 lines takes a while.
    await this.db.query(`update batches set leased_until = now() + interval '${LEASE_SECONDS} seconds' where id = $1 and lease_owner = $2`, [
      batch.id,
      this.owner,
    ]);
    const byCustomId = new Map(results.map((result) => [result.customId, result]));
    const holds = new Map<string | null, BudgetHold[]>();
    for (const line of ended) {
      const result = byCustomId.get(line.custom_id)!;
      if (result.statusCode === null) continue;
      await this.logLine(batch, run, line, result, holds);
    }
  }

  /** A line with a response as its log row: the synchronous call's operation and usage, the batch's key, route and end user. */
  private async logLine(batch: BatchRow, run: StoredRun, line: EndedLine, result: NativeBatchResult, holds: Map<string | null, BudgetHold[]>): Promise<void> {
    const kind = OPERATIONS[batch.endpoint];
    const body = line.body ?? {};
    const answer = result.body !== null && typeof result.body === 'object' ? (result.body as Record<string, unknown>) : null;
    const succeeded = result.status === 'succeeded';
    // As authentication sets them: the key's own metadata wins over the header's; the body's end user over `_user`.
    const metadata = { ...parseMetadataHeader(run.headers['x-gateway-metadata']), ...run.principal.metadata };
    const user = kind?.opening(body).user ?? metadata._user ?? null;
    if (!holds.has(user)) holds.set(user, await this.budgets.holdsFor({ principal: run.principal, user }, run.target));
    const served = typeof answer?.model === 'string' ? answer.model : typeof body.model === 'string' ? body.model : null;
    this.requestLogger.batchLineLogged({
      batchId: batch.id,
      customId: line.custom_id,
      traceId: batch.id,
      createdAt: new Date(),
      operation: kind?.operation ?? batch.endpoint,
      apiKeyId: batch.api_key_id,
      workspaceId: batch.workspace_id,
      virtualKeyId: run.target.virtualKeyId,
      provider: run.target.provider,
      model: served,
      user,
      metadata,
      requestHeaders: run.headers,
      requestBody: body,
      responseBody: result.body,
      usage: succeeded && kind ? usageOfAnswer(kind.spec, answer) : null,
      statusCode: result.statusCode!,
      error: succeeded ? null : { type: 'upstream_error', code: String(result.statusCode), message: `The provider answered ${result.statusCode}` },
      budgetHolds: holds.get(user)!,
    });
  }
}
