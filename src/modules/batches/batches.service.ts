import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../common/errors/gateway-error';
import { sha256, SecretBox } from '../../common/crypto/secret-box';
import { gatewayKeyOf } from '../../common/guards/gateway-key';
import { uuidv7 } from '../../common/ids';
import type { RequestContext } from '../../context/request-context';
import { routeRequest } from '../routing/provider-routing.guard';
import { RouteResolver } from '../routing/route-resolver';
import { fileReaderOf, type FileReader } from './batch-files.service';
import type { NewLine } from './batch-lines';
import { RUNNING_STATUSES, toAnthropicBatch, toOpenAiBatch, type BatchRow, type BatchShape, type LineCounts } from './batch-shapes';
import { BudgetLedger } from '../budgets/budget-ledger';
import { anthropicHeaders } from '../messages/messages.service';
import { NativeBatches } from './native-batches';

/** What a batch is created with, in either shape. */
export interface NewBatch {
  shape: BatchShape;
  endpoint: string;
  completionWindowMs: number;
  completionWindow: string;
  inputFileId: string | null;
  metadata: Record<string, string> | null;
  lines: NewLine[];
}

/** Lines inserted per statement. */
const INSERT_PAGE = 2000;

/**
 * Request headers a batch does not keep for its lines: the connection's own, the body's,
 * the caller's credentials (a line authenticates with a token of its own) and the SDKs'
 * per-request ones.
 */
const NOT_REPLAYED = new Set([
  'host',
  'connection',
  'content-length',
  'content-type',
  'transfer-encoding',
  'accept-encoding',
  'accept',
  'cookie',
  'x-csrf-token',
  'x-gateway-api-key',
  'x-gateway-batch-line',
  'x-gateway-workspace',
  'idempotency-key',
  'traceparent',
  'tracestate',
  'expect',
]);

/**
 * Batches in OpenAI's and Anthropic's shapes (CONTRACT section 17): created from an uploaded
 * file or inline requests, read, listed and cancelled. A batch routed to one provider with
 * batches of its own runs there (`native`: submitted here, in the create request, then
 * followed by NativeBatchPoller); any other is run by the gateway line by line
 * (`gateway`: BatchRunner). Either way the routing headers it was created with are kept
 * sealed (they may name a provider key), and it runs as the key that created it.
 */
@Injectable()
export class BatchesService {
  constructor(
    private readonly db: DataSource,
    private readonly resolver: RouteResolver,
    private readonly box: SecretBox,
    private readonly native: NativeBatches,
    private readonly budgets: BudgetLedger,
  ) {}

  async create(context: RequestContext, batch: NewBatch): Promise<Record<string, unknown>> {
    const principal = context.principal!;
    const secret = gatewayKeyOf(context.requestHeaders);
    if (principal.kind !== 'api_key' || !secret) throw GatewayError.permission('Batches are created with an API key', 'api_key_required');
    // The route is checked now, so that a batch no line of which could run is refused at once.
    const model = batch.lines.find((line) => line.body)?.body?.model;
    await routeRequest(this.resolver, context, context.requestHeaders, model);
    const native = await this.native.runOf(context, batch.shape, batch.completionWindow);
    // Its cost is known only as its results come in: a budget already used up refuses it before anything is sent.
    if (native) await this.budgets.refuseIfSpent(context, native.target);
    const lines = native ? this.native.allowedLines(native, batch.lines) : batch.lines;
    const sent = native ? lines.filter((line): line is NewLine & { body: Record<string, unknown> } => !!line.body && !line.error) : [];
    // With no line to send, the provider has nothing to run (OpenAI refuses an empty file): the gateway ends it at once.
    const run = sent.length ? native : null;

    const id = `${batch.shape === 'anthropic' ? 'msgbatch' : 'batch'}_${uuidv7().replace(/-/g, '')}`;
    const headers = this.box.encrypt(JSON.stringify(replayedHeaders(context.requestHeaders)));
    // The rows and the provider's batch stand or fall together: a refusal rolls the rows back, and no other instance polls a batch before it exists there.
    await this.db.transaction(async (db) => {
      await db.query(
        `insert into batches (id, workspace_id, api_key_id, key_hash, shape, endpoint, completion_window, mode, provider, status, route_headers,
           input_file_id, metadata, total, in_progress_at, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, case when $10 = 'in_progress' then now() end,
           now() + $15 * interval '1 millisecond')`,
        [
          id,
          principal.workspaceId,
          principal.id,
          sha256(secret),
          batch.shape,
          batch.endpoint,
          batch.completionWindow,
          run ? 'native' : 'gateway',
          run?.target.provider ?? null,
          run ? 'validating' : 'in_progress',
          headers,
          batch.inputFileId,
          batch.metadata,
          lines.length,
          batch.completionWindowMs,
        ],
      );
      for (let start = 0; start < lines.length; start += INSERT_PAGE) {
        const page = lines.slice(start, start + INSERT_PAGE);
        await db.query(
          `insert into batch_lines (batch_id, line, custom_id, body, error, input_line, status, ended_at)
           select $1, n, c, b, e, i, case when e is null then 'pending' else 'errored' end, case when e is null then null else now() end
           from unnest($2::int[], $3::text[], $4::jsonb[], $5::jsonb[], $6::int[]) as t(n, c, b, e, i)`,
          [
            id,
            page.map((_, i) => start + i),
            page.map((line) => line.customId),
            page.map((line) => (line.body ? JSON.stringify(line.body) : null)),
            page.map((line) => (line.error ? JSON.stringify(line.error) : null)),
            page.map((line) => line.inputLine ?? null),
          ],
        );
      }
      if (!run) return;
      const state = await this.native.submit(
        run,
        {
          gatewayBatchId: id,
          endpoint: batch.endpoint,
          completionWindow: batch.completionWindow,
          metadata: batch.metadata,
          lines: sent.map((line) => ({ customId: line.customId, body: line.body })),
          headers: anthropicHeaders(context.requestHeaders),
        },
        context,
      );
      await db.query(
        `update batches set provider_batch_id = $2, status = $3, in_progress_at = case when $3 = 'validating' then null else now() end where id = $1`,
        [id, state.id, state.status],
      );
    });
    return this.retrieve(fileReaderOf(principal), batch.shape, id);
  }

  async retrieve(reader: FileReader, shape: BatchShape, id: string): Promise<Record<string, unknown>> {
    const row = await this.row(reader, shape, id);
    const [counts] = await this.counts([row.id]);
    const [cost] = await this.costs([row.id]);
    return shape === 'openai' ? toOpenAiBatch(row, counts, cost) : toAnthropicBatch(row, counts);
  }

  async list(reader: FileReader, shape: BatchShape, query: { limit?: string; after?: string; before?: string }): Promise<Record<string, unknown>> {
    const limit = Math.min(Math.max(Number(query.limit) || 20, 1), shape === 'openai' ? 100 : 1000);
    const params: unknown[] = [reader.workspaceId, shape, limit + 1];
    let where = 'workspace_id = $1 and shape = $2';
    if (reader.apiKeyId) where += ` and api_key_id = $${params.push(reader.apiKeyId)}`;
    if (query.after) where += ` and id < $${params.push(query.after)}`;
    if (query.before) where += ` and id > $${params.push(query.before)}`;
    const rows = await this.db.query<BatchRow[]>(`select * from batches where ${where} order by id ${query.before ? 'asc' : 'desc'} limit $3`, params);
    const page = rows.slice(0, limit);
    if (query.before) page.reverse();
    const counts = await this.counts(page.map((row) => row.id));
    const costs = await this.costs(page.map((row) => row.id));
    const data = page.map((row, i) => (shape === 'openai' ? toOpenAiBatch(row, counts[i], costs[i]) : toAnthropicBatch(row, counts[i])));
    const first = (data[0]?.id as string | undefined) ?? null;
    const last = (data.at(-1)?.id as string | undefined) ?? null;
    return shape === 'openai'
      ? { object: 'list', data, first_id: first, last_id: last, has_more: rows.length > limit }
      : { data, has_more: rows.length > limit, first_id: first, last_id: last };
  }

  /**
   * Cancels a batch still running (its lines not yet sent are cancelled; those in flight
   * finish); a batch that ended is a 409. A native batch is cancelled at its provider first
   * (its refusal is the answer); the poller then sees it end there.
   */
  async cancel(context: RequestContext, reader: FileReader, shape: BatchShape, id: string): Promise<Record<string, unknown>> {
    const row = await this.row(reader, shape, id);
    if (row.mode === 'native' && row.provider_batch_id && RUNNING_STATUSES.includes(row.status) && row.status !== 'cancelling') {
      const run = await this.native.storedRun(row);
      if (!run) throw GatewayError.conflict(`The API key that created batch ${id} was revoked: the gateway no longer acts on it`, 'batch_not_cancellable');
      await this.native.cancel(run, row.provider_batch_id, context);
    }
    // An UPDATE answers [rows, count].
    const [, cancelled] = await this.db.query<[unknown[], number]>(
      `update batches set status = 'cancelling', cancelling_at = now() where id = $1 and status in ('validating', 'in_progress', 'finalizing')`,
      [id],
    );
    if (!cancelled) {
      const current = await this.row(reader, shape, id);
      if (current.status !== 'cancelling')
        throw GatewayError.conflict(`Batch ${id} has ended (${current.status}): it cannot be cancelled`, 'batch_not_cancellable');
    }
    return this.retrieve(reader, shape, id);
  }

  /** A batch the reader may read, of this shape (404 otherwise: another shape's id is not found, like an unknown one). */
  async row(reader: FileReader, shape: BatchShape, id: string): Promise<BatchRow> {
    const params: unknown[] = [id, reader.workspaceId, shape];
    const own = reader.apiKeyId ? ` and api_key_id = $${params.push(reader.apiKeyId)}` : '';
    const [row] = await this.db.query<BatchRow[]>(`select * from batches where id = $1 and workspace_id = $2 and shape = $3${own}`, params);
    if (!row) throw GatewayError.notFound(`No such batch: ${id}`, 'batch_not_found');
    return row;
  }

  /** Lines by status, per batch, in the order given. */
  private async counts(ids: string[]): Promise<LineCounts[]> {
    const rows = await this.db.query<{ batch_id: string; status: string; n: string }[]>(
      `select batch_id, status, count(*) as n from batch_lines where batch_id = any($1) group by batch_id, status`,
      [ids],
    );
    return ids.map((id) => {
      const counts: LineCounts = { pending: 0, sending: 0, succeeded: 0, failed: 0, errored: 0, expired: 0, cancelled: 0 };
      for (const row of rows) if (row.batch_id === id) counts[row.status as keyof LineCounts] = Number(row.n);
      return counts;
    });
  }

  /** What each batch's lines cost so far, from their log rows (null: none priced yet). */
  private async costs(ids: string[]): Promise<(number | null)[]> {
    if (!ids.length) return [];
    const rows = await this.db.query<{ batch_id: string; cost: string | null }[]>(
      `select batch_id, sum(cost_usd) as cost from request_logs where batch_id = any($1) group by batch_id`,
      [ids],
    );
    return ids.map((id) => {
      const cost = rows.find((row) => row.batch_id === id)?.cost;
      return cost === undefined || cost === null ? null : Number(cost);
    });
  }
}

/** The request headers a batch's lines are sent with: the routing and provider headers, not the caller's gateway key. */
export function replayedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  const gatewayKey = gatewayKeyOf(headers);
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NOT_REPLAYED.has(name) || name.startsWith('x-stainless-')) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    // The gateway key sent as the client's API key (Bearer, x-api-key, x-goog-api-key) is the caller's credential, not a provider's.
    if (gatewayKey && text.includes(gatewayKey)) continue;
    kept[name] = text;
  }
  return kept;
}
