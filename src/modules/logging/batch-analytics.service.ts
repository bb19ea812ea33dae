import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import type { WorkspaceScope } from '../../context/caller';
import { countsOf, type BatchRow, type LineCounts } from '../batches/batch-shapes';
import { readsOwnRequestsOnly } from '../workspaces/roles';
import { costOrUnknown, Parameters, UNPRICED } from './analytics.service';
import { BATCH_CURSOR, type BatchAnalyticsQueryDto } from './dto/batch-analytics-query.dto';
import { periodOf } from './dto/period-query.dto';

/**
 * How much earlier than its batch a line's log row may say it started: a row's time is the
 * clock of the instance that ran the line, the batch's the database's.
 */
const CLOCK_SKEW = '1 hour';

/** A batch row as the list reads it: the columns shown, its key's name, its creation in microseconds (the cursor). */
type ListedBatch = Pick<
  BatchRow,
  | 'id'
  | 'shape'
  | 'endpoint'
  | 'status'
  | 'mode'
  | 'provider_progress'
  | 'provider'
  | 'completion_window'
  | 'created_at'
  | 'in_progress_at'
  | 'cancelling_at'
  | 'expires_at'
  | 'api_key_id'
  | 'total'
  | 'input_file_id'
  | 'output_file_id'
  | 'error_file_id'
  | 'metadata'
  | 'errors'
> & { ended_at: Date | null; api_key_name: string | null; created_us: string };

/** What a batch's log rows add up to so far. */
export interface BatchUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number | null;
  unpriced_requests: number;
}

const NO_LINES: LineCounts = { pending: 0, sending: 0, succeeded: 0, failed: 0, errored: 0, expired: 0, cancelled: 0 };
const NO_USAGE: BatchUsage = { prompt_tokens: 0, completion_tokens: 0, cost_usd: 0, unpriced_requests: 0 };

/**
 * The batches (OpenAI's and Anthropic's shapes, CONTRACT section 17) as the dashboard and
 * analytics read them, beside the requests: where each stands, its lines by status, and the
 * tokens and cost of its log rows (`request_logs.batch_id`) so far. Scoped as the other
 * analytics are: the visible workspaces' batches, a member's own key's only; another's is a 404.
 */
@Injectable()
export class BatchAnalyticsService {
  constructor(private readonly dataSource: DataSource) {}

  async list(scope: WorkspaceScope, query: BatchAnalyticsQueryDto): Promise<Record<string, unknown>> {
    const { from, to } = periodOf(query);
    const sql = new Parameters();
    const where = [`b.created_at >= ${sql.add(from)}`, `b.created_at < ${sql.add(to)}`, ...scopeConditions(scope, sql)];
    if (query.status) where.push(`b.status = any(${sql.add(query.status.split(','))}::text[])`);
    if (query.shape) where.push(`b.shape = ${sql.add(query.shape)}`);
    if (query.api_key_id) where.push(`b.api_key_id = ${sql.add(query.api_key_id)}::uuid`);
    if (query.cursor) {
      const [, micros, id] = BATCH_CURSOR.exec(query.cursor)!;
      const us = sql.add(micros);
      // Whole seconds and microseconds apart: each product is exact (a double holds integers up to 2^53 only).
      const at = `timestamptz 'epoch' + (${us}::bigint / 1000000) * interval '1 second' + (${us}::bigint % 1000000) * interval '1 microsecond'`;
      where.push(`(b.created_at, b.id) < (${at}, ${sql.add(id)})`);
    }
    const limit = query.limit;
    const rows = await this.read(where, sql, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      object: 'list',
      from: from.toISOString(),
      to: to.toISOString(),
      data: await this.withLines(page),
      next_cursor: rows.length > limit && last ? `${last.created_us}~${last.id}` : null,
    };
  }

  async get(scope: WorkspaceScope, id: string): Promise<Record<string, unknown>> {
    const sql = new Parameters();
    const [row] = await this.read([`b.id = ${sql.add(id)}`, ...scopeConditions(scope, sql)], sql, 1);
    if (!row) throw GatewayError.notFound(`No such batch: ${id}`, 'batch_not_found');
    const [batch] = await this.withLines([row]);
    return batch;
  }

  private read(where: string[], sql: Parameters, limit: number): Promise<ListedBatch[]> {
    return this.dataSource.query<ListedBatch[]>(
      `select b.id, b.shape, b.endpoint, b.status, b.mode, b.provider_progress, b.provider, b.completion_window, b.created_at, b.in_progress_at, b.cancelling_at,
              coalesce(b.completed_at, b.failed_at, b.expired_at, b.cancelled_at) as ended_at, b.expires_at,
              b.api_key_id, k.name as api_key_name, b.total, b.input_file_id, b.output_file_id, b.error_file_id, b.metadata, b.errors,
              (extract(epoch from b.created_at) * 1000000)::bigint::text as created_us
       from batches b
       left join api_keys k on k.id = b.api_key_id
       where ${where.join(' and ')}
       order by b.created_at desc, b.id desc
       limit ${sql.add(limit)}`,
      sql.values,
    );
  }

  /** The batches with their lines by status and their log rows' usage, read for the page at once. */
  private async withLines(batches: ListedBatch[]): Promise<Record<string, unknown>[]> {
    if (!batches.length) return [];
    const ids = batches.map((batch) => batch.id);
    const earliest = new Date(Math.min(...batches.map((batch) => batch.created_at.getTime())));
    const [counts, usage] = await Promise.all([
      this.dataSource.query<{ batch_id: string; status: keyof LineCounts; n: number }[]>(
        `select batch_id, status, count(*)::int as n from batch_lines where batch_id = any($1) group by batch_id, status`,
        [ids],
      ),
      // Every row of a line (its failed tries too) names the batch: the partial index request_logs_batch finds them,
      // in the day partitions from the earliest batch's creation on.
      this.dataSource.query<(BatchUsage & { batch_id: string })[]>(
        `select log.batch_id, coalesce(sum(log.prompt_tokens), 0)::float8 as prompt_tokens, coalesce(sum(log.completion_tokens), 0)::float8 as completion_tokens,
                ${costOrUnknown('count(log.cost_usd)', `count(*) filter (where ${UNPRICED})`, 'sum(log.cost_usd)')} as cost_usd,
                (count(*) filter (where ${UNPRICED}))::int as unpriced_requests
         from request_logs log
         where log.batch_id = any($1) and log.created_at >= $2::timestamptz - interval '${CLOCK_SKEW}'
         group by log.batch_id`,
        [ids, earliest],
      ),
    ]);
    return batches.map((batch) => {
      const lines = { ...NO_LINES };
      for (const row of counts) if (row.batch_id === batch.id && row.status in lines) lines[row.status] = row.n;
      return toBatchResponse(batch, countsOf(batch, lines), usage.find((row) => row.batch_id === batch.id) ?? NO_USAGE);
    });
  }
}

/** The scope as conditions on a batch (`b`): the visible workspaces' batches, a member's own key's only. */
function scopeConditions(scope: WorkspaceScope, sql: Parameters): string[] {
  return [
    ...(scope.visible === null ? [] : [`b.workspace_id = any(${sql.add(scope.visible)}::uuid[])`]),
    ...(readsOwnRequestsOnly(scope.caller.role) ? [`b.api_key_id = ${sql.add(scope.caller.id)}`] : []),
  ];
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** A batch as the API answers it (BatchAnalyticsResponseDto). */
export function toBatchResponse(batch: Omit<ListedBatch, 'created_us'>, lines: LineCounts, usage: BatchUsage): Record<string, unknown> {
  return {
    object: 'analytics.batch',
    id: batch.id,
    shape: batch.shape,
    endpoint: batch.endpoint,
    status: batch.status,
    mode: batch.mode,
    provider: batch.provider,
    completion_window: batch.completion_window,
    created_at: batch.created_at.toISOString(),
    in_progress_at: iso(batch.in_progress_at),
    cancelling_at: iso(batch.cancelling_at),
    ended_at: iso(batch.ended_at),
    expires_at: batch.expires_at.toISOString(),
    api_key_id: batch.api_key_id,
    api_key_name: batch.api_key_name,
    lines: { ...lines, total: batch.total },
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cost_usd: usage.cost_usd,
    unpriced_requests: usage.unpriced_requests,
    input_file_id: batch.input_file_id,
    output_file_id: batch.output_file_id,
    error_file_id: batch.error_file_id,
    metadata: batch.metadata,
    errors: batch.errors?.length ? batch.errors : null,
  };
}
