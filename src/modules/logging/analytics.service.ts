import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { readsOwnRequestsOnly } from '../workspaces/roles';
import { DEFAULT_WORKSPACE_ID } from '../workspaces/workspace.entity';
import type { WorkspaceScope } from '../../context/caller';
import type { AnalyticsQueryDto } from './dto/analytics-query.dto';
import type { AnalyticsTimeseriesQueryDto, TimeseriesInterval } from './dto/analytics-timeseries-query.dto';
import type { AnalyticsFilterDto } from './dto/analytics-filter.dto';
import { histogramPercentile } from './latency-histogram';
import { hasFilters, METADATA_VALUE_CHARS, parseFilters, rollupFilter, rowConditions, type AnalyticsFilters } from './analytics-filters';
import { seriesOf, type SeriesRow } from './analytics-series';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const INTERVAL_MS: Record<TimeseriesInterval, number> = { minute: 60_000, hour: HOUR_MS, day: DAY_MS };
/** More buckets than a chart can show is a mistake (a year by the minute), not a query to run. */
export const MAX_BUCKETS = 1500;
/**
 * Ranges up to this long are aggregated from the log rows, with exact percentiles; longer
 * ones from the rollups (migration LogRollups) and the rows of their partial edge days or
 * hours, with percentiles read from latency histograms (bins 9% wide). Sums and
 * counts are exact either way.
 */
export const EXACT_RANGE_MAX_MS = 2 * DAY_MS;

/**
 * How a summary groups: the expression over a log row (`log`) and,
 * for the rollups (`r`), the rollup dimension and the expression giving the same key.
 * `absentIsNull`: rows without a value (metadata without the key) are rolled up nowhere,
 * their null group is worked out from the totals.
 */
interface Grouping {
  row: string;
  rollup: RollupRead;
}
/** Rollup rows read: of one dimension (and metadata key `name`), keyed by `key`, narrowed by `where` (over `r`). */
export interface RollupRead {
  dimension: string;
  name?: string;
  key: string;
  absentIsNull?: boolean;
  where?: (sql: Parameters) => string[];
}
const GROUPINGS: Record<string, Grouping> = {
  user: { row: 'log.end_user', rollup: { dimension: 'user', key: 'r.value' } },
  model: { row: 'log.model', rollup: { dimension: 'model', key: 'r.value' } },
  provider: { row: 'log.provider', rollup: { dimension: 'provider', key: 'r.value' } },
  operation: { row: 'log.operation', rollup: { dimension: 'operation', key: 'r.value' } },
  api_key: { row: 'log.api_key_id::text', rollup: { dimension: 'total', key: 'r.api_key_id::text' } },
  // Grouped by id; the slug is looked up once the groups are summed.
  virtual_key: { row: 'log.virtual_key_id::text', rollup: { dimension: 'virtual_key', key: 'r.value' } },
};

/**
 * A log row that is a client's request (migration LogRequestKinds): the rows nested under one
 * (failed tries, tool rounds) add their tokens and cost, not requests, errors or latencies.
 */
export const REQUEST = `(log.kind = 'request')`;
/** A request that failed, as its client saw it. */
const FAILED = `(${REQUEST} and (log.status_code >= 400 or log.error is not null))`;
/** A request answered after a failed try (a retry or a fallback recovered it). */
const RECOVERED = `(${REQUEST} and log.failed_attempts > 0 and log.status_code < 400 and log.error is null)`;
/**
 * A log row that used a model (tokens) at no known price: its cost is unknown, not 0 (the
 * rollups count the same rows, migration LogRollupsUnpriced). A failure that used nothing
 * (a guardrail denial, an unreachable provider) costs nothing and is not counted.
 */
export const UNPRICED = '(log.cost_usd is null and (log.prompt_tokens is not null or log.completion_tokens is not null))';
/** The cost of a row of analytics: unknown (null) when none of its requests has a price and some used a model. */
export const costOrUnknown = (priced: string, unpriced: string, cost: string) =>
  `case when ${priced} = 0 and ${unpriced} > 0 then null else coalesce(${cost}, 0)::float8 end`;
/** What every analytics row sums up over the log rows it covers (summary groups and time buckets alike). */
export const ROW_AGGREGATES = `(count(*) filter (where ${REQUEST}))::int as requests,
  (count(*) filter (where ${FAILED}))::int as errors,
  (count(*) filter (where ${RECOVERED}))::int as recovered,
  coalesce(sum(log.prompt_tokens), 0)::float8 as prompt_tokens,
  coalesce(sum(log.completion_tokens), 0)::float8 as completion_tokens,
  ${costOrUnknown('count(log.cost_usd)', `count(*) filter (where ${UNPRICED})`, 'sum(log.cost_usd)')} as cost_usd,
  (count(*) filter (where ${UNPRICED}))::int as unpriced_requests,
  (percentile_cont(0.5) within group (order by log.latency_ms) filter (where ${REQUEST}))::float8 as latency_p50_ms,
  (percentile_cont(0.95) within group (order by log.latency_ms) filter (where ${REQUEST}))::float8 as latency_p95_ms,
  count(*)::int as log_rows`;

/** The sums a rollup row keeps, as the analytics read them. */
const ROLLUP_SUMS = 'requests, errors, recovered, prompt_tokens, completion_tokens, cost_usd, priced_requests, unpriced_requests, log_rows';

/** A half-open time range [from, to). */
interface Range {
  from: Date;
  to: Date;
}
type RollupPeriod = 'week' | 'day' | 'hour';
/** Length and start of each period: weeks start on Monday (1970-01-05), as date_trunc('week') has them. */
const PERIODS: Record<RollupPeriod, { size: number; offset: number }> = {
  week: { size: 7 * DAY_MS, offset: 4 * DAY_MS },
  day: { size: DAY_MS, offset: 0 },
  hour: { size: HOUR_MS, offset: 0 },
};

/**
 * Usage, errors, cost and latency of the request log grouped by one dimension or bucketed
 * over time: what the dashboard charts and what spend per key or per user is read from.
 * Requests, errors and latencies are the clients' (a request's own row); tokens and cost
 * add up every row, the failed tries and tool rounds nested under a request included (they
 * are spend the gateway made). The scope is in every query: the rows of the visible
 * workspaces, a member's own rows only (see `scopeFilter`).
 */
@Injectable()
export class AnalyticsService {
  constructor(private readonly dataSource: DataSource) {}

  async summary(scope: WorkspaceScope, query: AnalyticsQueryDto, metadata: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const to = query.to ? new Date(query.to) : new Date();
    const from = query.from ? new Date(query.from) : new Date(to.getTime() - 30 * DAY_MS);
    if (from >= to) throw GatewayError.invalidRequest('from must be before to', 'from');
    const filters = await this.filtersOf(scope, query, metadata);
    const sql = new Parameters();
    const grouping = GROUPINGS[query.group_by] ?? metadataGrouping(query.group_by.slice('metadata.'.length), sql);
    const filter = scopeFilter(scope, sql);
    const conditions = rowConditions(filters, (value) => sql.add(value));
    const read = to.getTime() - from.getTime() <= EXACT_RANGE_MAX_MS ? null : rollupRead(grouping.rollup, filters, perKey(filter, filters));
    const exact = read === null;
    const byVirtualKey = query.group_by === 'virtual_key';
    const groups = exact
      ? `select ${grouping.row} as key, ${ROW_AGGREGATES}
         from request_logs log
         where (${rowsIn([{ from, to }], sql)}) ${filter ? `and ${filter.rows}` : ''} ${conditions.map((c) => `and ${c}`).join(' ')}
         group by 1`
      : this.histogramAggregate(read.rollup, grouping.row, splitRange(from, to, ['week', 'day']), filter, conditions, perKey(filter, filters), sql);
    // Virtual keys are grouped by id (a deleted key's slug may have been given to a new one)
    // and named by slug, the id alongside.
    const [rows, [batchLines]] = await this.aggregate<Record<string, unknown>>([
      [
        `with groups as (${groups})
         select ${byVirtualKey ? 'coalesce(vk.slug, groups.key) as key, groups.key as virtual_key_id' : 'groups.key'},
                requests, errors, recovered, prompt_tokens, completion_tokens, cost_usd, unpriced_requests,
                ${exact ? 'latency_p50_ms, latency_p95_ms' : 'latency_bins, latency_counts'}
         from groups
         ${byVirtualKey ? 'left join virtual_keys vk on vk.id::text = groups.key' : ''}
         order by cost_usd desc nulls last, requests desc
         limit 1000`,
        sql.values,
      ],
      batchLinesQuery(scope, filters, { from, to }),
    ]);
    return {
      object: 'analytics.summary',
      group_by: query.group_by,
      from: from.toISOString(),
      to: to.toISOString(),
      latency_percentiles: exact ? 'exact' : 'approximate',
      ...(hasFilters(filters) && { filtered_from: exact ? 'rows' : 'rollups' }),
      ...batchLines,
      data: exact ? rows : (rows as HistogramRow[]).map(withPercentiles),
    };
  }

  /**
   * The log bucketed over time (UTC buckets of a minute, an hour or a day): requests,
   * errors, tokens, cost and latency percentiles per bucket. Every bucket of the range is
   * returned, empty ones with zeros (and null latencies), so a chart needs no gap filling.
   * With `group_by`, also `series`: the same buckets per group for the `top` groups (by
   * cost, then requests, over the range) and one `other` series for the rest, which add up
   * to `data` bucket by bucket (both read in one snapshot).
   */
  async timeseries(scope: WorkspaceScope, query: AnalyticsTimeseriesQueryDto, metadata: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const to = query.to ? new Date(query.to) : new Date();
    const from = query.from ? new Date(query.from) : new Date(to.getTime() - DAY_MS);
    if (from >= to) throw GatewayError.invalidRequest('from must be before to', 'from');
    const span = to.getTime() - from.getTime();
    const interval: TimeseriesInterval = query.interval ?? (span <= 3 * HOUR_MS ? 'minute' : span <= 14 * DAY_MS ? 'hour' : 'day');
    const start = truncate(from, interval);
    const buckets = Math.ceil((to.getTime() - start.getTime()) / INTERVAL_MS[interval]);
    if (buckets > MAX_BUCKETS) {
      throw GatewayError.invalidRequest(
        `The range from ${from.toISOString()} to ${to.toISOString()} holds ${buckets} ${interval} buckets, more than ${MAX_BUCKETS}: choose a larger interval or a shorter range`,
        'interval',
      );
    }
    const tz = await this.timeZone(query.tz);
    const filters = await this.filtersOf(scope, query, metadata);
    const groupBy = query.group_by;
    // A minute interval never reaches the rollups: 1,500 minutes are under EXACT_RANGE_MAX_MS.
    const long = span > EXACT_RANGE_MAX_MS && interval !== 'minute';
    // Buckets are the zone's wall-clock minutes, hours or days (tz is a name PostgreSQL knows, of [A-Za-z0-9_+-/] only).
    const bucketOf = (timestamp: string) => `date_trunc('${interval}', ${timestamp} at time zone '${tz}')`;
    const grouping = (sql: Parameters): Grouping | null => (groupBy ? (GROUPINGS[groupBy] ?? metadataGrouping(groupBy.slice('metadata.'.length), sql)) : null);
    // The rollups are UTC hours, days and weeks, and keep hours for the totals (and per API key)
    // only: other dimensions, by the day. Another zone's days are UTC hours added up, when its
    // offset is whole hours over the range; else (India's +5:30) the rows are read.
    const utc = tz === 'UTC';
    const hoursAlign = utc || wholeHourOffsets(tz, from, to);
    const usable = (read: { rollup: RollupRead; hours: boolean } | null) => (read && hoursAlign && (read.hours || (utc && interval === 'day')) ? read : null);
    // The scope as it narrows the rollups (whether they are read per API key) does not depend on the parameters.
    const scoped = perKey(scopeFilter(scope, new Parameters()), filters);
    const totalsRead = long ? usable(rollupRead(null, filters, scoped)) : null;
    const seriesRead = long && groupBy ? usable(rollupRead(grouping(new Parameters())!.rollup, filters, scoped)) : null;
    const exact = !totalsRead || (groupBy !== undefined && !seriesRead);
    const periodsOf = (hours: boolean): RollupPeriod[] => (interval === 'day' && utc ? (hours ? ['day', 'hour'] : ['day']) : ['hour']);

    const sql = new Parameters();
    const [toParam, intervalParam, fromParam] = [sql.add(to), sql.add(interval), sql.add(from)];
    const filter = scopeFilter(scope, sql);
    const conditions = rowConditions(filters, (value) => sql.add(value));
    const aggregated = exact
      ? `select ${bucketOf('log.created_at')} as key, ${ROW_AGGREGATES}
         from request_logs log
         where (${rowsIn([{ from, to }], sql)}) ${filter ? `and ${filter.rows}` : ''} ${conditions.map((c) => `and ${c}`).join(' ')}
         group by 1`
      : this.histogramAggregate(
          { ...totalsRead.rollup, key: bucketOf('r.bucket') },
          bucketOf('log.created_at'),
          splitRange(from, to, periodsOf(totalsRead.hours)),
          filter,
          conditions,
          perKey(filter, filters),
          sql,
        );
    const latencies = exact ? 'agg.latency_p50_ms, agg.latency_p95_ms' : 'agg.latency_bins, agg.latency_counts';
    const series = groupBy
      ? this.seriesQuery(
          scope,
          filters,
          { from, to },
          bucketOf,
          tz,
          grouping,
          exact ? null : seriesRead!,
          exact ? null : periodsOf(seriesRead!.hours),
          query.top ?? 8,
          groupBy === 'virtual_key',
        )
      : null;
    // Aggregate first (one pass over the range), then lay the result over every bucket.
    const [rows, seriesRows] = await this.aggregate<Record<string, unknown>>([
      [
        `with agg as (${aggregated})
         select to_char(s.bucket at time zone '${tz}' at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.000"Z"') as bucket,
                coalesce(agg.requests, 0) as requests,
                coalesce(agg.errors, 0) as errors,
                coalesce(agg.recovered, 0) as recovered,
                coalesce(agg.prompt_tokens, 0) as prompt_tokens,
                coalesce(agg.completion_tokens, 0) as completion_tokens,
                case when agg.key is null then 0 else agg.cost_usd end as cost_usd,
                coalesce(agg.unpriced_requests, 0) as unpriced_requests,
                ${latencies}
         from generate_series(date_trunc(${intervalParam}, ${fromParam}::timestamptz at time zone '${tz}'), (${toParam}::timestamptz at time zone '${tz}') - interval '1 microsecond', ('1 ' || ${intervalParam})::interval) as s(bucket)
         left join agg on agg.key = s.bucket
         order by s.bucket`,
        sql.values,
      ],
      ...(series ? [series] : []),
    ]);
    return {
      object: 'analytics.timeseries',
      interval,
      tz,
      from: from.toISOString(),
      to: to.toISOString(),
      latency_percentiles: exact ? 'exact' : 'approximate',
      ...(hasFilters(filters) && { filtered_from: exact ? 'rows' : 'rollups' }),
      data: exact ? rows : (rows as unknown as HistogramRow[]).map(withPercentiles),
      ...(groupBy && {
        group_by: groupBy,
        top: query.top ?? 8,
        series: seriesOf(
          rows.map((row) => row.bucket as string),
          seriesRows as SeriesRow[],
          query.top ?? 8,
        ),
      }),
    };
  }

  /** The zone names PostgreSQL knows (read once): a name Node knows and PostgreSQL not is a 400, not a failed query. */
  private zones: Promise<Set<string>> | null = null;

  private async timeZone(name: string | undefined): Promise<string> {
    if (name === undefined || name === 'UTC') return 'UTC';
    this.zones ??= this.dataSource.query<{ name: string }[]>('select name from pg_timezone_names').then((rows) => new Set(rows.map((row) => row.name)));
    if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name) || !(await this.zones).has(name)) {
      throw GatewayError.invalidRequest(`tz '${name}' is not a time zone this gateway's database knows`, 'tz');
    }
    return name;
  }

  /** The filters of a request, a virtual key slug looked up in the acting workspace (the newest key of that slug, deleted ones included, as the log list does). */
  private async filtersOf(scope: WorkspaceScope, query: AnalyticsFilterDto, metadata: Record<string, string>): Promise<AnalyticsFilters> {
    let virtualKeyId: string | null = null;
    if (query.virtual_key !== undefined) {
      if (isUuid(query.virtual_key)) virtualKeyId = query.virtual_key;
      else {
        const [key] = await this.dataSource.query(`select id from virtual_keys where slug = $1 and workspace_id = $2 order by created_at desc limit 1`, [
          query.virtual_key,
          scope.workspaceId,
        ]);
        virtualKeyId = key?.id ?? '00000000-0000-0000-0000-000000000000';
      }
    }
    return parseFilters(query, metadata, virtualKeyId);
  }

  /**
   * The SQL of the breakdown over time: per bucket, one row per top group (`rank` ≤ top) and
   * one for the rest together (`key` null, `other`), with `groups`, how many groups there are.
   * Groups are ranked over the whole range by cost (unknown as 0), then requests, then key.
   */
  private seriesQuery(
    scope: WorkspaceScope,
    filters: AnalyticsFilters,
    range: Range,
    bucketOf: (timestamp: string) => string,
    tz: string,
    groupingOf: (sql: Parameters) => Grouping | null,
    read: { rollup: RollupRead } | null,
    periods: RollupPeriod[] | null,
    top: number,
    byVirtualKey: boolean,
  ): [string, unknown[]] {
    const sql = new Parameters();
    const grouping = groupingOf(sql)!;
    const filter = scopeFilter(scope, sql);
    const conditions = rowConditions(filters, (value) => sql.add(value));
    const parts: RangeParts = read && periods ? splitRange(range.from, range.to, periods) : { rollups: [], rows: [range] };
    const cells = this.sumCells(read ? read.rollup : null, bucketOf, grouping.row, parts, filter, conditions, perKey(filter, filters), sql);
    const topParam = sql.add(top);
    return [
      `with cells as (${cells}),
       per_bucket as (
         select bucket, key, sum(requests) as requests, sum(errors) as errors, sum(prompt_tokens) as prompt_tokens, sum(completion_tokens) as completion_tokens,
                sum(cost_usd) as cost_usd, sum(priced_requests) as priced_requests, sum(unpriced_requests) as unpriced_requests
         from cells group by bucket, key
         having sum(log_rows) <> 0
       ),
       ranked as (
         select *, dense_rank() over (order by group_cost desc, group_requests desc, key nulls last) as rank
         from (select *, coalesce(sum(cost_usd) over w, 0) as group_cost, sum(requests) over w as group_requests
               from per_bucket window w as (partition by key)) as g
       ),
       grouped as (
         select bucket, case when rank <= ${topParam} then key end as key, rank > ${topParam} as other, min(rank)::int as rank,
                sum(requests)::int as requests, sum(errors)::int as errors,
                coalesce(sum(prompt_tokens), 0)::float8 as prompt_tokens, coalesce(sum(completion_tokens), 0)::float8 as completion_tokens,
                ${costOrUnknown('sum(priced_requests)', 'sum(unpriced_requests)', 'sum(cost_usd)')} as cost_usd,
                coalesce(sum(unpriced_requests), 0)::int as unpriced_requests
         from ranked
         group by 1, 2, 3
       )
       select to_char(bucket at time zone '${tz}' at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.000"Z"') as bucket,
              ${byVirtualKey ? 'case when grouped.key is null then null else coalesce(vk.slug, grouped.key) end as key, grouped.key as virtual_key_id' : 'grouped.key'},
              other, rank, (select max(rank) from ranked)::int as groups,
              requests, errors, prompt_tokens, completion_tokens, cost_usd, unpriced_requests
       from grouped
       ${byVirtualKey ? 'left join virtual_keys vk on vk.id::text = grouped.key' : ''}
       order by rank, bucket`,
      sql.values,
    ];
  }

  /**
   * The SQL of signed partial sums per (bucket, key) over the rollups of `parts.rollups` (with
   * the rows queued for them) and the log rows of `parts.rows`: no latency histograms, which
   * a breakdown does not need and which are the costly part of `histogramAggregate`.
   */
  sumCells(
    rollup: RollupRead | null,
    bucketOf: (timestamp: string) => string,
    rowKey: string,
    parts: RangeParts,
    filter: ScopeFilter | null,
    conditions: string[],
    perKey: boolean,
    sql: Parameters,
  ): string {
    const rowFilters = `${filter ? `and ${filter.rows}` : ''} ${conditions.map((c) => `and ${c}`).join(' ')}`;
    const logSums = (table: string, ranges: Range[], scoped: string) =>
      `select ${bucketOf('log.created_at')}, ${rowKey}, count(*) filter (where ${REQUEST}), count(*) filter (where ${FAILED}), sum(log.prompt_tokens), sum(log.completion_tokens),
              sum(log.cost_usd), count(log.cost_usd), count(*) filter (where ${UNPRICED}), count(*)
       from ${table} log
       where (${ranges.length ? rowsIn(ranges, sql) : 'false'}) ${scoped}
       group by 1, 2`;
    if (!rollup || !parts.rollups.length) {
      return `select ${bucketOf('log.created_at')} as bucket, ${rowKey} as key, count(*) filter (where ${REQUEST}) as requests, count(*) filter (where ${FAILED}) as errors,
                     sum(log.prompt_tokens) as prompt_tokens, sum(log.completion_tokens) as completion_tokens, sum(log.cost_usd) as cost_usd,
                     count(log.cost_usd) as priced_requests, count(*) filter (where ${UNPRICED}) as unpriced_requests, count(*) as log_rows
              from request_logs log
              where (${parts.rows.length ? rowsIn(parts.rows, sql) : 'false'}) ${rowFilters}
              group by 1, 2`;
    }
    const rows = logSums('request_logs', parts.rows, rowFilters);
    const inRange = this.rollupRange(rollup, parts, filter, sql);
    const [dimension, name] = [sql.add(rollup.dimension), sql.add(rollup.name ?? '')];
    const sums = 'requests, errors, prompt_tokens, completion_tokens, cost_usd, priced_requests, unpriced_requests, log_rows';
    const absent = rollup.absentIsNull
      ? `union all
         select ${bucketOf('r.bucket')}, null, ${sums
           .split(', ')
           .map((column) => `case when r.dimension = ${dimension} then -1 else 1 end * ${column}`)
           .join(', ')}
         from request_log_rollups r
         where ((r.dimension = ${dimension} and r.name = ${name}) or (r.dimension = ${sql.add(perKey ? 'total' : 'all')} and r.name = '')) and ${inRange}`
      : '';
    return `select ${bucketOf('r.bucket')} as bucket, ${rollup.key} as key, ${sums}
            from request_log_rollups r
            where r.dimension = ${dimension} and r.name = ${name} and ${inRange}
            ${absent}
            union all
            ${rows}
            union all
            -- Logged rows not compacted into the rollups yet (they have the log's column names).
            ${logSums('request_log_rollup_queue', parts.rollups, `${filter ? `and ${filter.byKey('log.api_key_id')}` : ''} ${conditions.map((c) => `and ${c}`).join(' ')}`)}`;
  }

  /** The rollup rows of `parts.rollups` that the scope and `rollup.where` let through (over `r`). */
  private rollupRange(rollup: RollupRead, parts: RangeParts, filter: ScopeFilter | null, sql: Parameters): string {
    const periods = parts.rollups.map(
      ({ period, from, to }) => `(r.period = ${sql.add(period)} and r.bucket >= ${sql.add(from)} and r.bucket < ${sql.add(to)})`,
    );
    const narrowed = [...(filter ? [filter.byKey('r.api_key_id')] : []), ...(rollup.where?.(sql) ?? [])];
    return `(${periods.join(' or ') || 'false'}) ${narrowed.map((c) => `and ${c}`).join(' ')}`;
  }

  /**
   * The SQL of one row per group (`key`) with its sums and merged latency histogram, over
   * the rollups of `parts.rollups` and the log rows of `parts.rows`. The histograms are
   * merged by (group, bin) apart from the sums, which are added up per rollup row: the
   * merge is the costly part (a 30-day summary by 1,000 users spreads into about half a
   * million bins), so it carries nothing else. Both meet in one final grouping by key.
   */
  private histogramAggregate(
    rollup: RollupRead,
    rowKey: string,
    parts: RangeParts,
    filter: ScopeFilter | null,
    conditions: string[],
    perKey: boolean,
    sql: Parameters,
  ): string {
    const inRange = this.rollupRange(rollup, parts, filter, sql);
    const filtered = conditions.map((c) => `and ${c}`).join(' ');
    const [dimension, name] = [sql.add(rollup.dimension), sql.add(rollup.name ?? '')];
    // Rows without the metadata key have no rollup of their own: their (null) group is every
    // row of the totals less the rows with the key (sign -1 takes those away again).
    const absent = rollup.absentIsNull
      ? `union all
         select null, case when r.dimension = ${dimension} then -1 else 1 end, ${ROLLUP_SUMS}, latency_bins, latency_counts
         from request_log_rollups r
         where ((r.dimension = ${dimension} and r.name = ${name}) or (r.dimension = ${sql.add(perKey ? 'total' : 'all')} and r.name = '')) and ${inRange}`
      : '';
    return `with rollup_rows as (
              select ${rollup.key} as key, 1 as sign, ${ROLLUP_SUMS}, latency_bins, latency_counts
              from request_log_rollups r
              where r.dimension = ${dimension} and r.name = ${name} and ${inRange}
              ${absent}
            ),
            log_rows as (
              select ${rowKey} as key, request_log_latency_bin(log.latency_ms) as bin, ${REQUEST}::int as request, ${FAILED}::int as errors, ${RECOVERED}::int as recovered,
                     log.prompt_tokens, log.completion_tokens, log.cost_usd, ${UNPRICED}::int as unpriced
              from request_logs log
              where (${parts.rows.length ? rowsIn(parts.rows, sql) : 'false'}) ${filter ? `and ${filter.rows}` : ''} ${filtered}
              union all
              -- Logged rows not compacted into the rollups yet (they have the log's column names).
              select ${rowKey}, request_log_latency_bin(log.latency_ms), ${REQUEST}::int, ${FAILED}::int, ${RECOVERED}::int,
                     log.prompt_tokens, log.completion_tokens, log.cost_usd, ${UNPRICED}::int
              from request_log_rollup_queue log
              where (${parts.rollups.length ? rowsIn(parts.rollups, sql) : 'false'}) ${filter ? `and ${filter.byKey('log.api_key_id')}` : ''} ${filtered}
            ),
            bins as (
              select key, bin, sum(n)::int as n
              from (select key, unnest(latency_bins) as bin, sign * unnest(latency_counts) as n from rollup_rows
                    union all
                    select key, bin, 1 from log_rows where request = 1) as cells
              group by key, bin
              having sum(n) <> 0
            )
            select key,
                   sum(requests)::int as requests,
                   sum(errors)::int as errors,
                   sum(recovered)::int as recovered,
                   coalesce(sum(prompt_tokens), 0)::float8 as prompt_tokens,
                   coalesce(sum(completion_tokens), 0)::float8 as completion_tokens,
                   ${costOrUnknown('sum(priced_requests)', 'sum(unpriced_requests)', 'sum(cost_usd)')} as cost_usd,
                   coalesce(sum(unpriced_requests), 0)::int as unpriced_requests,
                   -- In the same (any) order, so that PostgreSQL can hash this grouping; sorted when read.
                   array_agg(bin) filter (where bin is not null) as latency_bins,
                   array_agg(n) filter (where bin is not null) as latency_counts
            from (select key, sign * requests as requests, sign * errors as errors, sign * recovered as recovered, sign * prompt_tokens as prompt_tokens,
                         sign * completion_tokens as completion_tokens, sign * cost_usd as cost_usd,
                         sign * priced_requests as priced_requests, sign * unpriced_requests as unpriced_requests, sign * log_rows as log_rows,
                         null::smallint as bin, null::int as n
                  from rollup_rows
                  union all
                  select key, sum(request), sum(errors), sum(recovered), sum(prompt_tokens), sum(completion_tokens), sum(cost_usd), count(cost_usd), sum(unpriced), count(*), null, null
                  from log_rows group by key
                  union all
                  select key, null, null, null, null, null, null, null, null, null, bin, n from bins) as parts
            group by key
            having sum(log_rows) <> 0`;
  }

  /**
   * One aggregate over a range of the log. These scan up to millions of rows, sort for the
   * percentiles and run for a few hundred ms: JIT compilation (on by default in PostgreSQL)
   * added about 80 ms to each without making it faster, and the default 4 MB of work_mem
   * sent the sorts to disk. Both are set for this transaction only.
   */
  aggregate<T>(queries: [string, unknown[]][]): Promise<T[][]> {
    // Repeatable read: the totals and the breakdown of one answer see the same rows.
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      await manager.query(`set local jit = off`);
      await manager.query(`set local work_mem = '64MB'`);
      const results: T[][] = [];
      for (const [sql, params] of queries) results.push(await manager.query(sql, params));
      return results;
    });
  }
}

/**
 * The batch lines among the summary's rows (`request_logs.batch_id`, issue 37): their
 * requests, cost (unknown apart) and unpriced rows, under the same scope and filters. Read
 * from the rows whatever the range (the rollups do not tell batch lines apart): the partial
 * index `request_logs_batch` holds the batch lines' rows only, so this reads those and no other.
 */
function batchLinesQuery(scope: WorkspaceScope, filters: AnalyticsFilters, range: Range): [string, unknown[]] {
  const sql = new Parameters();
  const filter = scopeFilter(scope, sql);
  const conditions = rowConditions(filters, (value) => sql.add(value));
  return [
    `select (count(*) filter (where ${REQUEST}))::int as batch_requests,
            ${costOrUnknown('count(log.cost_usd)', `count(*) filter (where ${UNPRICED})`, 'sum(log.cost_usd)')} as batch_cost_usd,
            (count(*) filter (where ${UNPRICED}))::int as batch_unpriced_requests
     from request_logs log
     where log.batch_id is not null and (${rowsIn([range], sql)}) ${filter ? `and ${filter.rows}` : ''} ${conditions.map((c) => `and ${c}`).join(' ')}`,
    sql.values,
  ];
}

/** Query parameters as they are added: `add` gives the placeholder of a value. */
export class Parameters {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * The scope as SQL conditions: `rows` on a log row (`log`), `byKey` on the API key column of
 * a rollup or queued row, which have no workspace column: a rollup row counts for the
 * workspace of its API key (a key never changes workspace), and the rows without a key are
 * the default workspace's, as the log writer files them. Null for an unnarrowed owner (every
 * row). With a filter, the rollups are read per API key (dimension `total`, not `all`).
 */
export interface ScopeFilter {
  rows: string;
  byKey: (column: string) => string;
}

export function scopeFilter(scope: WorkspaceScope, sql: Parameters): ScopeFilter | null {
  const own = readsOwnRequestsOnly(scope.caller.role) ? sql.add(scope.caller.id) : null;
  if (scope.visible === null) return own ? { rows: `log.api_key_id = ${own}`, byKey: (column) => `${column} = ${own}` } : null;
  const workspaces = sql.add(scope.visible);
  const keyless = scope.visible.includes(DEFAULT_WORKSPACE_ID) ? ' or COLUMN is null' : '';
  return {
    rows: `log.workspace_id = any(${workspaces}::uuid[])${own ? ` and log.api_key_id = ${own}` : ''}`,
    byKey: (column) =>
      own
        ? `${column} = ${own}`
        : `(${column} in (select k.id from api_keys k where k.workspace_id = any(${workspaces}::uuid[]))${keyless.replace('COLUMN', column)})`,
  };
}

function metadataGrouping(key: string, sql: Parameters): Grouping {
  return {
    row: `left(log.metadata ->> ${sql.add(key)}, ${METADATA_VALUE_CHARS})`,
    rollup: { dimension: 'metadata', name: key, key: 'r.value', absentIsNull: true },
  };
}

/** The condition that a log row falls in one of `ranges`. */
function rowsIn(ranges: Range[], sql: Parameters): string {
  return ranges.map(({ from, to }) => `(log.created_at >= ${sql.add(from)} and log.created_at < ${sql.add(to)})`).join(' or ');
}

/** A range as the rollups can answer it: whole periods from the rollups, the rest from the log rows. */
export interface RangeParts {
  rollups: (Range & { period: RollupPeriod })[];
  rows: Range[];
}

/**
 * [from, to) split into whole UTC periods (the largest first: the whole weeks inside it, then
 * the whole days of what is left, and so on) and the edges no period covers.
 */
export function splitRange(from: Date, to: Date, periods: RollupPeriod[]): RangeParts {
  const rollups: RangeParts['rollups'] = [];
  let rest: Range[] = [{ from, to }];
  for (const period of periods) {
    const { size, offset } = PERIODS[period];
    const left: Range[] = [];
    for (const range of rest) {
      const start = new Date(Math.ceil((range.from.getTime() - offset) / size) * size + offset);
      const end = new Date(Math.floor((range.to.getTime() - offset) / size) * size + offset);
      if (start >= end) {
        left.push(range);
        continue;
      }
      rollups.push({ period, from: start, to: end });
      if (range.from < start) left.push({ from: range.from, to: start });
      if (end < range.to) left.push({ from: end, to: range.to });
    }
    rest = left;
  }
  return { rollups, rows: rest };
}

interface HistogramRow {
  latency_bins: number[] | null;
  latency_counts: number[] | null;
  [column: string]: unknown;
}

/** A row with its histogram read into p50 and p95 (null for a group or bucket without rows). */
function withPercentiles({ latency_bins: bins, latency_counts: counts, ...row }: HistogramRow): Record<string, unknown> {
  if (!bins || !counts) return { ...row, latency_p50_ms: null, latency_p95_ms: null };
  const order = bins.map((_, i) => i).sort((a, b) => bins[a] - bins[b]);
  const [sortedBins, sortedCounts] = [order.map((i) => bins[i]), order.map((i) => counts[i])];
  return {
    ...row,
    latency_p50_ms: histogramPercentile(sortedBins, sortedCounts, 0.5),
    latency_p95_ms: histogramPercentile(sortedBins, sortedCounts, 0.95),
  };
}

/** Whether `zone`'s offset from UTC is whole hours all over [from, to] (sampled every 6 hours: offsets change at most twice a year). */
export function wholeHourOffsets(zone: string, from: Date, to: Date): boolean {
  const format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
  for (let t = from.getTime(); ; t = Math.min(t + 6 * HOUR_MS, to.getTime())) {
    const offset = format.formatToParts(new Date(t)).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
    // "GMT", "GMT+02:00", "GMT-09:30"
    if (/:(?!00)\d\d$/.test(offset)) return false;
    if (t >= to.getTime()) return true;
  }
}

/** The start (UTC) of the bucket holding `date`. */
function truncate(date: Date, interval: TimeseriesInterval): Date {
  const size = INTERVAL_MS[interval];
  return new Date(Math.floor(date.getTime() / size) * size);
}

/** Whether the rollups are read per API key (`total`) rather than over all of them (`all`). */
export function perKey(filter: ScopeFilter | null, filters: AnalyticsFilters): boolean {
  return filter !== null || filters.apiKeyId !== null;
}

/**
 * The rollup rows that answer a grouping (null: the totals, keyed by the caller) under the
 * filters, and whether they exist per hour; null when the rollups cannot answer (two
 * filtered dimensions, or a grouping by another dimension than the filtered one).
 */
function rollupRead(grouping: RollupRead | null, filters: AnalyticsFilters, perKey: boolean): { rollup: RollupRead; hours: boolean } | null {
  const narrowed = rollupFilter(filters);
  if (!narrowed) return null;
  const apiKey = filters.apiKeyId;
  const byKey = (sql: Parameters) => (apiKey ? [`r.api_key_id = ${sql.add(apiKey)}::uuid`] : []);
  const dimension = narrowed.dimension;
  if (!dimension) {
    if (!grouping) return { rollup: { dimension: perKey ? 'total' : 'all', key: '', where: byKey }, hours: true };
    return { rollup: { ...grouping, where: byKey }, hours: grouping.dimension === 'total' };
  }
  const where = (sql: Parameters) => [...byKey(sql), `r.value = any(${sql.add(dimension.values)}::text[])`];
  const read = { dimension: dimension.dimension, name: dimension.name, where };
  if (!grouping) return { rollup: { ...read, key: '' }, hours: false };
  // By API key: every dimension's rollups are kept per key. By the filtered dimension itself: its rows of the chosen values.
  if (grouping.dimension === 'total' || (grouping.dimension === dimension.dimension && (grouping.name ?? '') === dimension.name)) {
    return { rollup: { ...read, key: grouping.key }, hours: false };
  }
  return null;
}
