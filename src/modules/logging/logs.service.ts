import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Between, In, Repository, SelectQueryBuilder } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { listPage, ListPage } from '../../common/http/list.dto';
import { VirtualKeyEntity } from '../keys/entities/virtual-key.entity';
import { readsOwnRequestsOnly } from '../workspaces/roles';
import { scopeWhere } from '../workspaces/workspace-scope';
import { type WorkspaceScope } from '../../context/caller';
import { LogQueryDto } from './dto/log-query.dto';
import { LogBodyReader } from './body-parts/log-body-reader';
import { applySearchFilters, SEARCH_PLAN_SQL, searchPlan } from './log-filters';
import { RequestLogEntity } from './entities/request-log.entity';
import { searchSnippet, searchWords } from './search-snippet';

const DAY_MS = 86_400_000;
/** A row that used a model at no known price (as analytics count them). */
const UNPRICED_ROW = 'cost_usd is null and (prompt_tokens is not null or completion_tokens is not null)';
/** What an unknown slug filters on: no row has it. */
const NO_ID = '00000000-0000-0000-0000-000000000000';
const BODY_COLUMNS = new Set(['requestBody', 'responseBody', 'requestHeaders', 'partHashes', 'partLayout']);
/** Rows read per query of an export. */
const EXPORT_BATCH = 1_000;
/** How long a search may walk the log newest first before the GIN index is made its plan. */
const SEARCH_WALK_MS = 100;
/** The smallest UUIDv7 of a millisecond: ids below it were made before. */
const idAt = (ms: number) => {
  const hex = Math.floor(ms).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`;
};
/** PostgreSQL's code for a statement ended by statement_timeout. */
const QUERY_CANCELED = '57014';

/**
 * Reading the request log: filtered, newest first, keyset-paged on the UUIDv7 id. The scope
 * is part of every query (CONTRACT section 13): the rows of the visible workspaces, a
 * member's own requests only; another workspace's row is unknown.
 */
@Injectable()
export class LogsService {
  constructor(
    @InjectRepository(RequestLogEntity) private readonly logs: Repository<RequestLogEntity>,
    @InjectRepository(VirtualKeyEntity) private readonly virtualKeys: Repository<VirtualKeyEntity>,
    private readonly bodies: LogBodyReader,
  ) {}

  async list(scope: WorkspaceScope, query: LogQueryDto, metadata: Record<string, string>): Promise<ListPage<Record<string, unknown>>> {
    const rows = await this.read(await this.filteredQuery(scope, query, metadata), query.limit + 1, query.q !== undefined);
    const page = listPage(rows.map(toLogResponse), query.limit, (row) => row.id as string);
    if (query.q !== undefined) await this.addSnippets(page.data, rows, searchWords(query.q));
    return page;
  }

  /**
   * A search's rows each with `snippet`: where its bodies hold a word searched for, marked
   * (search-snippet.ts). A page read without its bodies reads them here, for its rows only.
   */
  private async addSnippets(listed: Record<string, unknown>[], rows: RequestLogEntity[], words: string[]): Promise<void> {
    const shown = new Set(listed.map((row) => row.id as string));
    let withBodies = rows.filter((row) => shown.has(row.id));
    if (withBodies.some((row) => row.requestBody === undefined)) {
      withBodies = withBodies.length ? await this.logs.find({ where: { id: In(withBodies.map((row) => row.id)) } }) : [];
      await this.bodies.join(withBodies);
    }
    const byId = new Map(withBodies.map((row) => [row.id, row]));
    for (const row of listed) {
      const full = byId.get(row.id as string);
      row.snippet = full ? searchSnippet(full.requestBody, full.responseBody, words) : null;
    }
  }

  /** Every row the filters select, newest first, in batches read one after another (keyset on the id): an export of any size. */
  async *exportBatches(scope: WorkspaceScope, query: LogQueryDto, metadata: Record<string, string>): AsyncGenerator<Record<string, unknown>[]> {
    let cursor = query.cursor;
    for (;;) {
      const rows = await this.read(await this.filteredQuery(scope, { ...query, cursor }, metadata), EXPORT_BATCH, query.q !== undefined);
      yield rows.map(toLogResponse);
      if (rows.length < EXPORT_BATCH) return;
      cursor = rows[rows.length - 1].id;
    }
  }

  /** The first `limit` rows of a filtered query (a full-text search through `search`), their bodies whole. */
  private async read(qb: SelectQueryBuilder<RequestLogEntity>, limit: number, searching: boolean): Promise<RequestLogEntity[]> {
    const rows = await (searching ? this.search(qb, limit) : qb.take(limit).getMany());
    await this.bodies.join(rows);
    return rows;
  }

  /**
   * A full-text search has two good plans, and PostgreSQL cannot tell them apart from its
   * word statistics (a word it has no count of is guessed at about 0.5% of the rows):
   * walking the log newest first and testing each row, fast when many rows match, or
   * reading the matches from the GIN index and sorting them, fast when few do (a rare word
   * walked a million rows for 27 s in `npm run bench:analytics`). The walk gets
   * SEARCH_WALK_MS. Past that the index is the plan, window by window back in time (the
   * last day, the week before, then the rest), so that a word in 1% of a month's rows
   * sorts a day's matches, not the month's.
   */
  /** SEARCH_WALK_MS; 0 goes to the index at once (the tests' way to the second plan). */
  searchWalkMs = SEARCH_WALK_MS;

  private async search(qb: SelectQueryBuilder<RequestLogEntity>, limit: number): Promise<RequestLogEntity[]> {
    const run = (settings: string[], query: SelectQueryBuilder<RequestLogEntity>) =>
      this.logs.manager.transaction(async (tx) => {
        for (const setting of settings) await tx.query(setting);
        return query.setQueryRunner(tx.queryRunner!).getMany();
      });
    if (this.searchWalkMs > 0) {
      try {
        return await run([`set local statement_timeout = ${this.searchWalkMs}`], qb.clone().take(limit));
      } catch (error) {
        if ((error as { driverError?: { code?: string } }).driverError?.code !== QUERY_CANCELED) throw error;
      }
    }
    const found: RequestLogEntity[] = [];
    let newer: number | null = null;
    for (const ago of [DAY_MS, 7 * DAY_MS, null]) {
      const window = qb.clone().take(limit - found.length);
      const older = ago === null ? null : Date.now() - ago;
      // Bounds on the id (UUIDv7: its time first), the order of the list; the created_at bound, a day looser, lets the planner skip partitions.
      if (older !== null) window.andWhere('log.id >= :olderId and log.created_at >= :olderDay', { olderId: idAt(older), olderDay: new Date(older - DAY_MS) });
      if (newer !== null) window.andWhere('log.id < :newerId', { newerId: idAt(newer) });
      found.push(...(await run(['set local enable_indexscan = off', 'set local enable_seqscan = off'], window)));
      if (found.length >= limit || older === null) break;
      newer = older;
    }
    return found;
  }

  /** The rows a caller may read that the filters select, newest first (alias `log`). */
  private async filteredQuery(scope: WorkspaceScope, query: LogQueryDto, metadata: Record<string, string>): Promise<SelectQueryBuilder<RequestLogEntity>> {
    const qb = this.logs.createQueryBuilder('log').orderBy('log.id', 'DESC');
    if (!query.include_bodies) {
      const columns = this.logs.metadata.columns.filter((c) => !BODY_COLUMNS.has(c.propertyName));
      qb.select(columns.map((c) => `log.${c.propertyName}`));
    }
    if (scope.visible !== null) qb.andWhere('log.workspace_id in (:...workspaces)', { workspaces: scope.visible });
    // A member reads only its own requests.
    const apiKeyId = readsOwnRequestsOnly(scope.caller.role) ? scope.caller.id : query.api_key_id;
    const filters: [string, unknown][] = [
      ['trace_id', query.trace_id],
      ['parent_id', query.parent_id],
      ['batch_id', query.batch_id],
      ['api_key_id', apiKeyId],
    ];
    const search = query.q === undefined ? undefined : searchPlan((await this.logs.query(SEARCH_PLAN_SQL, [query.q]))[0].query);
    applySearchFilters(qb, query, scope.visible, search);
    filters.forEach(([column, value], i) => {
      if (value !== undefined) qb.andWhere(`log.${column} = :f${i}`, { [`f${i}`]: value });
    });
    if (query.virtual_key) qb.andWhere('log.virtual_key_id = :vk', { vk: await this.virtualKeyId(scope, query.virtual_key) });
    if (query.config) qb.andWhere('log.config_id = :config', { config: await this.slugId('configs', scope, query.config) });
    if (query.prompt) qb.andWhere('log.prompt_id = :prompt', { prompt: await this.slugId('prompts', scope, query.prompt) });
    if (query.from) qb.andWhere('log.created_at >= :from', { from: query.from });
    if (query.to) qb.andWhere('log.created_at < :to', { to: query.to });
    if (Object.keys(metadata).length) qb.andWhere('log.metadata @> :metadata', { metadata: JSON.stringify(metadata) });
    if (query.cursor) {
      if (!isUuid(query.cursor)) throw GatewayError.invalidRequest('cursor is not a cursor this endpoint returned', 'cursor');
      qb.andWhere('log.id < :cursor', { cursor: query.cursor });
    }
    return qb;
  }

  async get(scope: WorkspaceScope, id: string): Promise<Record<string, unknown>> {
    const row = isUuid(id) ? await this.find(scope, id) : null;
    if (!row) throw GatewayError.notFound(`No log with id '${id}'`, 'log_not_found');
    await this.bodies.join([row]);
    return { ...toLogResponse(row), ...(row.kind === 'request' && { totals: await this.requestTotals(row) }) };
  }

  /**
   * A request's tokens and cost with the rows nested under it (failed tries, tool rounds):
   * what the request cost in all. The nested rows were made while it ran, so they lie
   * between its start and its end (the request logger waits at most 10 s past the close).
   */
  private async requestTotals(row: RequestLogEntity): Promise<Record<string, unknown>> {
    const [totals] = await this.logs.query<Record<string, unknown>[]>(
      `select count(*)::int as rows,
              coalesce(sum(prompt_tokens), 0)::float8 as prompt_tokens,
              coalesce(sum(completion_tokens), 0)::float8 as completion_tokens,
              coalesce(sum(total_tokens), 0)::float8 as total_tokens,
              case when count(cost_usd) = 0 and count(*) filter (where ${UNPRICED_ROW}) > 0 then null else coalesce(sum(cost_usd), 0)::float8 end as cost_usd,
              (count(*) filter (where ${UNPRICED_ROW}))::int as unpriced_rows
       from request_logs
       where (id = $1 or parent_id = $1) and workspace_id = $2 and created_at >= $3 and created_at < $4`,
      [row.id, row.workspaceId, row.createdAt, new Date(row.createdAt.getTime() + row.latencyMs + DAY_MS)],
    );
    return totals;
  }

  /**
   * The log is partitioned by day of created_at (migration PartitionRequestLogs): a UUIDv7's
   * timestamp says where to look. The gateway makes a row's id when the row's time is taken,
   * or later (an earlier attempt's row gets its id when the request ends), so a day either
   * side reads at most three partitions; only an id not found there is looked up in all.
   */
  private async find(scope: WorkspaceScope, id: string): Promise<RequestLogEntity | null> {
    const where = { id, ...scopeWhere(scope), ...(readsOwnRequestsOnly(scope.caller.role) && { apiKeyId: scope.caller.id }) };
    const stamped = id[14] === '7' ? parseInt(id.slice(0, 8) + id.slice(9, 13), 16) : null;
    if (stamped !== null) {
      const near = await this.logs.findOneBy({ ...where, createdAt: Between(new Date(stamped - DAY_MS), new Date(stamped + DAY_MS)) });
      if (near) return near;
    }
    return this.logs.findOneBy(where);
  }

  /**
   * What the log stores by UTC day, newest first: its rows and the bytes of their bodies as
   * received (`body_bytes`; for a row written before parts, its bodies' JSON text), the parts
   * first stored that day, and the bytes stored: the rows' body columns and the new parts,
   * as PostgreSQL holds them (compressed), plus the parts in an object store
   * (LOG_BODY_STORE; `bytes_in_object_store`, their JSON size). Sizes are read row by row:
   * an admin's occasional question, bounded by `days`.
   */
  async storage(scope: WorkspaceScope, days: number): Promise<Record<string, unknown>> {
    const since = new Date(Math.floor(Date.now() / DAY_MS - days + 1) * DAY_MS);
    const visible = scope.visible;
    const inScope = (column: string) => (visible === null ? '' : `and ${column} = any($2::uuid[])`);
    const params = visible === null ? [since] : [since, visible];
    type Day = { day: string; rows: number; parts: number; bytes_received: number; bytes_stored: number; bytes_in_object_store: number };
    const data: Day[] = await this.logs.query(
      `with logged as (
         select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as rows,
           sum(coalesce(body_bytes, octet_length(coalesce(request_body::text, '')) + octet_length(coalesce(response_body::text, '')))) as received,
           sum(coalesce(pg_column_size(request_body), 0) + coalesce(pg_column_size(response_body), 0)
             + coalesce(pg_column_size(part_hashes), 0) + coalesce(pg_column_size(part_layout), 0)) as stored
         from request_logs where created_at >= $1 ${inScope('workspace_id')} group by 1),
       parts as (
         select to_char(first_seen_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as parts,
           sum(coalesce(pg_column_size(body), 0) + coalesce(pg_column_size(document), 0)) as stored,
           sum(case when body is null then bytes else 0 end) as in_object_store
         from log_body_parts where first_seen_at >= $1 ${inScope('workspace_id')} group by 1)
       select day, coalesce(l.rows, 0)::float8 as rows, coalesce(p.parts, 0)::float8 as parts, coalesce(l.received, 0)::float8 as bytes_received,
         (coalesce(l.stored, 0) + coalesce(p.stored, 0) + coalesce(p.in_object_store, 0))::float8 as bytes_stored,
         coalesce(p.in_object_store, 0)::float8 as bytes_in_object_store
       from logged l full join parts p using (day) order by day desc`,
      params,
    );
    const total = { rows: 0, parts: 0, bytes_received: 0, bytes_stored: 0, bytes_in_object_store: 0 };
    for (const day of data) for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += day[key];
    return { object: 'log_storage', since: since.toISOString(), total, data };
  }

  /** A virtual key slug names the newest key of that slug (deleted ones included) in the acting workspace. */
  private async virtualKeyId(scope: WorkspaceScope, slugOrId: string): Promise<string | null> {
    if (isUuid(slugOrId)) return slugOrId;
    const key = await this.virtualKeys.findOne({ where: { slug: slugOrId, workspaceId: scope.workspaceId }, order: { createdAt: 'DESC' }, withDeleted: true });
    return key?.id ?? NO_ID;
  }

  /** The same for a config or a prompt slug: the newest of that slug, deleted ones included, in the acting workspace. */
  private async slugId(table: 'configs' | 'prompts', scope: WorkspaceScope, slugOrId: string): Promise<string> {
    if (isUuid(slugOrId)) return slugOrId;
    const [row] = await this.logs.query(`select id from ${table} where slug = $1 and workspace_id = $2 order by created_at desc limit 1`, [
      slugOrId,
      scope.workspaceId,
    ]);
    return row?.id ?? NO_ID;
  }
}

/** The wire shape of a log row (CONTRACT section 6): snake_case, as stored. */
export function toLogResponse(log: RequestLogEntity): Record<string, unknown> {
  return {
    id: log.id,
    object: 'request_log',
    trace_id: log.traceId,
    kind: log.kind,
    parent_id: log.parentId,
    failed_attempts: log.failedAttempts,
    nested_rows: log.nestedRows,
    batch_id: log.batchId,
    custom_id: log.customId,
    created_at: log.createdAt?.toISOString(),
    operation: log.operation,
    workspace_id: log.workspaceId,
    api_key_id: log.apiKeyId,
    virtual_key_id: log.virtualKeyId,
    config_id: log.configId,
    prompt_id: log.promptId,
    prompt_version: log.promptVersion,
    provider: log.provider,
    model: log.model,
    status_code: log.statusCode,
    is_stream: log.isStream,
    prompt_tokens: log.promptTokens,
    completion_tokens: log.completionTokens,
    total_tokens: log.totalTokens,
    cached_tokens: log.cachedTokens,
    cache_write_tokens: log.cacheWriteTokens,
    reasoning_tokens: log.reasoningTokens,
    billed_units: log.billedUnits ?? null,
    cost_usd: log.costUsd,
    latency_ms: log.latencyMs,
    ttft_ms: log.ttftMs,
    user: log.user,
    metadata: log.metadata,
    error: log.error,
    retry_count: log.retryCount,
    cache_status: log.cacheStatus,
    target_index: log.targetIndex,
    guardrails: log.guardrails,
    ignored_params: log.ignoredParams ?? null,
    tool_calls: log.toolCalls ?? null,
    ...(log.requestHeaders !== undefined ? { request_headers: log.requestHeaders } : {}),
    ...(log.requestBody !== undefined ? { request_body: log.requestBody } : {}),
    ...(log.responseBody !== undefined ? { response_body: log.responseBody } : {}),
  };
}
