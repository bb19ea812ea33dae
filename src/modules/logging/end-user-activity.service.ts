import { Injectable } from '@nestjs/common';
import { roleMay } from '../workspaces/roles';
import type { WorkspaceScope } from '../../context/caller';
import { AnalyticsService, costOrUnknown, Parameters, perKey, scopeFilter, splitRange, type RollupRead } from './analytics.service';
import { parseFilters } from './analytics-filters';
import type { EndUserActivityQueryDto, EndUserActivityRangeDto, EndUserOrder } from './dto/end-user-activity-query.dto';
import { periodOf } from './dto/period-query.dto';

/** The longest rollup period (a week): a rollup cell's rows all fall within this of its day. */
const CELL_DAYS = 7;

/** What the activity read is narrowed to: one user exactly, or a prefix; a key; a page. */
interface ActivityRead {
  from: Date;
  to: Date;
  apiKeyId: string | null;
  user?: string;
  prefix?: string;
  order: EndUserOrder;
  limit: number;
  offset: number;
}

const ORDERS: Record<EndUserOrder, string> = {
  cost: 'coalesce(cost_usd, 0) desc, requests desc, end_user',
  requests: 'requests desc, coalesce(cost_usd, 0) desc, end_user',
  user: 'end_user',
};

/**
 * The end users (the `user` of requests) who made requests in a period, with their
 * requests, errors, spend (unknown spend counted apart, never $0) and first and last
 * request, and whether they have a budget record: the dashboard's End users page, and an
 * API key's end users. Over the rollups of the `user` dimension (whole UTC weeks and days,
 * with the rows queued for them) and the log rows of the partial edge days, as
 * `AnalyticsService` reads them, so a month costs about what a summary by user does.
 */
@Injectable()
export class EndUserActivityService {
  constructor(private readonly analytics: AnalyticsService) {}

  async list(scope: WorkspaceScope, query: EndUserActivityQueryDto): Promise<Record<string, unknown>> {
    const { from, to } = periodOf(query);
    const offset = query.cursor ? Number(query.cursor) : 0;
    const rows = await this.read(scope, {
      from,
      to,
      apiKeyId: query.api_key_id ?? null,
      prefix: query.q,
      order: query.order ?? 'cost',
      limit: query.limit,
      offset,
    });
    const total = rows.length ? Number(rows[0].total) : 0;
    return {
      object: 'list',
      from: from.toISOString(),
      to: to.toISOString(),
      total,
      data: rows.map((row) => toResponse(scope, row)),
      next_cursor: offset + rows.length < total ? String(offset + rows.length) : null,
    };
  }

  /** One end user's figures in the period; zeros (and no first or last request) when they made none. */
  async get(scope: WorkspaceScope, user: string, query: EndUserActivityRangeDto): Promise<Record<string, unknown>> {
    const { from, to } = periodOf(query);
    const [row] = await this.read(scope, { from, to, apiKeyId: query.api_key_id ?? null, user, order: 'user', limit: 1, offset: 0 });
    const found = row ?? { end_user: user, requests: 0, errors: 0, cost_usd: 0, unpriced_requests: 0, first_seen: null, last_seen: null, budget_id: null };
    return { object: 'analytics.end_user', from: from.toISOString(), to: to.toISOString(), ...toResponse(scope, found) };
  }

  private async read(scope: WorkspaceScope, read: ActivityRead): Promise<Record<string, unknown>[]> {
    const sql = new Parameters();
    const filters = parseFilters({ api_key_id: read.apiKeyId ?? undefined }, {}, null);
    const filter = scopeFilter(scope, sql);
    const apiKey = read.apiKeyId ? sql.add(read.apiKeyId) : null;
    const exact = read.user !== undefined ? sql.add(read.user) : null;
    const prefix = read.prefix !== undefined ? sql.add(`${read.prefix.replace(/[\\%_]/g, '\\$&')}%`) : null;
    // The same narrowing on the log rows and the queue (`log`), and on the rollups' user values (`r`).
    const narrowing = (user: string, key: string) => [
      ...(exact ? [`${user} = ${exact}`] : []),
      ...(prefix ? [`${user} ilike ${prefix}`] : []),
      ...(apiKey ? [`${key} = ${apiKey}::uuid`] : []),
    ];
    const rollup: RollupRead = { dimension: 'user', key: 'r.value', where: () => narrowing('r.value', 'r.api_key_id') };
    const cells = this.analytics.sumCells(
      rollup,
      (timestamp) => `date_trunc('day', ${timestamp}, 'UTC')`,
      'log.end_user',
      splitRange(read.from, read.to, ['week', 'day']),
      filter,
      narrowing('log.end_user', 'log.api_key_id'),
      perKey(filter, filters),
      sql,
    );
    // A budget record is the acting workspace's; an API key's end users are those who used it.
    const budgets = roleMay(scope.caller.role, 'resources.read') && !apiKey;
    const [from, to] = [sql.add(read.from), sql.add(read.to)];
    // Added only when read: PostgreSQL refuses a parameter it cannot type.
    const budgetFilter = () => [
      `b.workspace_id = ${sql.add(scope.workspaceId)}`,
      'b.deleted_at is null',
      ...(exact ? [`b."user" = ${exact}`] : []),
      ...(prefix ? [`b."user" ilike ${prefix}`] : []),
    ];
    const [limit, offset] = [sql.add(read.limit), sql.add(read.offset)];
    const probeFilter = `${filter ? `and ${filter.rows}` : ''} ${apiKey ? `and log.api_key_id = ${apiKey}::uuid` : ''}`;
    // First and last request: `cells` tells the first and the last day (or week) holding the
    // user's rows; within it, the index on (end_user, created_at) finds the row (one descent
    // per partition of that week at most, for the page's users only). Measured against
    // min/max(created_at) per user over the whole period, which visits every row of a busy
    // user, and against the rollup buckets alone, which say only the day. A row whose
    // partition retention dropped while its rollup stays (LOG_RETENTION_DAYS shorter than
    // ROLLUP_RETENTION_DAYS) is not found: then the day is given.
    const probe = (day: string, direction: 'asc' | 'desc') =>
      `coalesce((select log.created_at from request_logs log
                 where log.end_user = page.end_user and log.created_at >= greatest(${from}::timestamptz, ${day})
                   and log.created_at < least(${to}::timestamptz, ${day} + interval '${CELL_DAYS} days') ${probeFilter}
                 order by log.created_at ${direction} limit 1),
                greatest(${from}::timestamptz, ${day}))`;
    const [rows] = await this.analytics.aggregate<Record<string, unknown>>([
      [
        `with cells as (${cells}),
         users as (
           select key as end_user, sum(requests)::int as requests, sum(errors)::int as errors,
                  ${costOrUnknown('sum(priced_requests)', 'sum(unpriced_requests)', 'sum(cost_usd)')} as cost_usd,
                  coalesce(sum(unpriced_requests), 0)::int as unpriced_requests,
                  min(bucket) as first_day, max(bucket) as last_day
           from cells
           where key is not null
           group by key
           having sum(requests) <> 0
         ),
         listed as (
           ${
             budgets
               ? `select coalesce(u.end_user, b."user") as end_user, coalesce(u.requests, 0) as requests, coalesce(u.errors, 0) as errors,
                         case when u.end_user is null then 0 else u.cost_usd end as cost_usd, coalesce(u.unpriced_requests, 0) as unpriced_requests,
                         u.first_day, u.last_day, b.id as budget_id, b.budget_limit_usd, b.budget_period
                  from users u
                  full join (select * from end_users b where ${budgetFilter().join(' and ')}) b on b."user" = u.end_user`
               : `select u.*, null::uuid as budget_id, null::numeric as budget_limit_usd, null::text as budget_period from users u`
           }
         ),
         page as (
           select *, count(*) over () as total from listed
           order by ${ORDERS[read.order]}
           limit ${limit} offset ${offset}
         )
         select end_user, requests, errors, cost_usd, unpriced_requests, budget_id, budget_limit_usd::float8 as budget_limit_usd, budget_period, total,
                case when first_day is null then null else ${probe('page.first_day', 'asc')} end as first_seen,
                case when last_day is null then null else ${probe('page.last_day', 'desc')} end as last_seen
         from page
         order by ${ORDERS[read.order]}`,
        sql.values,
      ],
    ]);
    return rows;
  }
}

/** A row as the API answers it; the budget only for roles that may read end users' records. */
function toResponse(scope: WorkspaceScope, row: Record<string, unknown>): Record<string, unknown> {
  const iso = (value: unknown) =>
    value instanceof Date ? value.toISOString() : value === null || value === undefined ? null : new Date(value as string).toISOString();
  return {
    user: row.end_user,
    requests: row.requests,
    errors: row.errors,
    cost_usd: row.cost_usd,
    unpriced_requests: row.unpriced_requests,
    first_seen: iso(row.first_seen),
    last_seen: iso(row.last_seen),
    ...(roleMay(scope.caller.role, 'resources.read') && {
      budget: row.budget_id ? { id: row.budget_id, budget_limit_usd: row.budget_limit_usd, budget_period: row.budget_period } : null,
    }),
  };
}
