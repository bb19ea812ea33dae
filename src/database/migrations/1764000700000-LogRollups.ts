import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rollups of the request log, so that analytics over weeks do not read every row of them
 * (issue 8: a 30-day summary read about 700 MB of heap and took about a second on a million rows).
 *
 * `request_log_rollups` holds, per UTC week (from Monday) and day, and per UTC hour for the
 * totals, per API key and per group, the sums of the log rows (requests, errors, tokens,
 * cost) and a histogram of their latencies. The groups are `total`, `user`, `model`,
 * `provider`, `operation`, `virtual_key` (its id), and `metadata` (one group per key `name`
 * and value); `all` is `total` over every API key, for the charts of the whole gateway.
 * Weeks halve what a month's summary reads: a group's histogram has about as many bins for
 * a week as for a day.
 *
 * The histogram is sparse: `latency_bins[i]` holds `latency_counts[i]` rows. Bin 0 is
 * latencies under 1 ms; bin b ≥ 1 holds [2^((b-1)/8), 2^(b/8)) ms, each bin about 9% wide,
 * so a percentile read from it is within 9% of the exact one (see latency-histogram.ts).
 *
 * Kept in step with the log, whoever writes it (the log writer's batches, a backfill, an
 * operator's retention DELETE), in two steps so that writing a log row stays cheap:
 * - a statement-level trigger copies each inserted row's grouped columns into
 *   `request_log_rollup_queue` (one narrow insert per row);
 * - `request_log_rollups_compact(n)` moves up to n queued rows into the rollups in one
 *   aggregated upsert. The gateway calls it every second (LogRollupCompactor); a second
 *   of traffic touches each group once, where an upsert per log batch would touch the busy
 *   groups (one per active user) at every batch, and the trigger would add that work to
 *   every log insert (37 ms more per 200-row batch, measured).
 * Analytics read the queue along with the rollups, so a row counts as soon as it is logged.
 * A DELETE takes rows out of the queue or, once compacted, out of the rollups; TRUNCATE
 * empties both. Metadata keys and values are cut to 512 characters, as the log writer cuts
 * over-long indexed text (a btree entry holds at most about 2.7 KB).
 *
 * `nulls not distinct` (PostgreSQL 15+): a row without a user, model or API key is a group too.
 */
export class LogRollups1764000700000 implements MigrationInterface {
  name = 'LogRollups1764000700000';

  async up(db: QueryRunner): Promise<void> {
    const [{ version, number }] = await db.query(`select current_setting('server_version') as version, current_setting('server_version_num')::int as number`);
    if (number < 150000) {
      throw new Error(
        `The request log rollups need PostgreSQL 15 or newer (nulls not distinct); the server at DATABASE_URL is ${version}. Upgrade it, or unset DATABASE_URL to use the embedded PostgreSQL.`,
      );
    }
    await db.query(`
      create function request_log_latency_bin(latency_ms integer) returns smallint
      language sql immutable parallel safe
      as $$ select (case when latency_ms < 1 then 0 else least(255, floor(8 * ln(latency_ms::float8) / ln(2::float8))::int + 1) end)::smallint $$`);
    await db.query(`
      create table request_log_rollups (
        period text not null check (period in ('hour', 'day', 'week')),
        bucket timestamptz not null,
        dimension text not null,
        name text not null default '',
        value text,
        api_key_id uuid,
        requests integer not null,
        errors integer not null,
        prompt_tokens bigint not null,
        completion_tokens bigint not null,
        cost_usd numeric not null,
        latency_bins smallint[] not null,
        latency_counts integer[] not null
      )`);
    await db.query(
      `create unique index request_log_rollups_group_idx on request_log_rollups (period, dimension, name, bucket, api_key_id, value) nulls not distinct`,
    );
    await db.query(`
      create table request_log_rollup_queue (
        id uuid primary key,
        ${QUEUED_COLUMNS.map(([column, type]) => `${column} ${type}`).join(', ')}
      )`);
    // Every row passes through and is deleted within seconds: vacuum it by the number of dead
    // rows, not by a share of a table that is nearly empty, or analytics scan what bloat it leaves.
    await db.query(
      `alter table request_log_rollup_queue set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 20000)`,
    );
    const columns = QUEUED_COLUMNS.map(([column]) => column).join(', ');
    await db.query(`
      create function request_log_rollups_enqueue() returns trigger language plpgsql as $$
      begin
        insert into request_log_rollup_queue (id, ${columns}) select id, ${columns} from inserted_rows;
        return null;
      end $$`);
    await createRollupFunctions(db, []);
    await db.query(`
      create function request_log_rollups_clear() returns trigger language plpgsql as $$
      begin
        truncate request_log_rollups, request_log_rollup_queue;
        return null;
      end $$`);
    // The triggers first: they lock the log against writers until this transaction commits, so
    // no row lands between the backfill's snapshot and the trigger.
    await db.query(
      `create trigger request_logs_rollup_insert after insert on request_logs referencing new table as inserted_rows for each statement execute function request_log_rollups_enqueue()`,
    );
    await db.query(
      `create trigger request_logs_rollup_delete after delete on request_logs referencing old table as deleted_rows for each statement execute function request_log_rollups_remove()`,
    );
    await db.query(
      `create trigger request_logs_rollup_truncate after truncate on request_logs for each statement execute function request_log_rollups_clear()`,
    );
    await db.query(`set local jit = off`);
    await db.query(`set local work_mem = '256MB'`);
    await db.query(`with ${upsert('request_logs', 1, [])} select 1`);
    await db.query('analyze request_log_rollups');
  }

  async down(db: QueryRunner): Promise<void> {
    for (const trigger of ['insert', 'delete', 'truncate']) await db.query(`drop trigger if exists request_logs_rollup_${trigger} on request_logs`);
    for (const fn of ['request_log_rollups_enqueue()', 'request_log_rollups_remove()', 'request_log_rollups_clear()', 'request_log_rollups_compact(integer)']) {
      await db.query(`drop function if exists ${fn}`);
    }
    await db.query('drop table if exists request_log_rollup_queue');
    await db.query('drop table if exists request_log_rollups');
    await db.query('drop function if exists request_log_latency_bin(integer)');
  }
}

/**
 * A count the rollups keep besides requests and errors: its column and the condition over a
 * log row (`l`) that counts it (migration LogRollupsUnpriced adds the price counts).
 */
export interface RollupCount {
  column: string;
  where: string;
}

/**
 * Which log rows the rollups take in and which of them count as requests (over `l`), and
 * when a rollup row is empty (left by deletes). Until migration LogRequestKinds every row was
 * a request; since, failed tries, tool rounds and tool calls are rows of their own (`kind`).
 */
export interface RollupRows {
  /** The rows that count in `requests`, `errors` and the latency histogram. */
  request: string;
  /** The rows rolled up at all (null: every row). */
  included: string | null;
  /** A rollup row left with nothing, deleted after a delete. */
  empty: string;
}

export const EVERY_ROW_A_REQUEST: RollupRows = { request: 'true', included: null, empty: 'requests <= 0' };

/** (Re)creates the functions that fold queued rows into the rollups and take deleted rows out, with `counts` kept too. */
export async function createRollupFunctions(db: QueryRunner, counts: RollupCount[], rows: RollupRows = EVERY_ROW_A_REQUEST): Promise<void> {
  await db.query(`
      create or replace function request_log_rollups_remove() returns trigger language plpgsql ${AGGREGATE_SETTINGS} as $$
      declare compacted_rows integer;
      begin
        with dequeued as (
               delete from request_log_rollup_queue q using deleted_rows d where q.id = d.id returning q.id
             ),
             compacted as (
               select * from deleted_rows d where not exists (select 1 from dequeued where dequeued.id = d.id)
             ),
             ${upsert('compacted', -1, counts, rows)}
        select count(*) into compacted_rows from compacted;
        if compacted_rows > 0 then
          delete from request_log_rollups where ${rows.empty};
        end if;
        return null;
      end $$`);
  await db.query(`
      create or replace function request_log_rollups_compact(max_rows integer) returns integer language plpgsql ${AGGREGATE_SETTINGS} as $$
      declare moved integer;
      begin
        -- One compaction at a time across gateway instances; the others have nothing to add.
        if not pg_try_advisory_xact_lock(${COMPACT_LOCK}) then return 0; end if;
        with batch as (
               delete from request_log_rollup_queue where id in (select id from request_log_rollup_queue limit max_rows) returning *
             ),
             ${upsert('batch', 1, counts, rows)}
        select count(*) into moved from batch;
        return moved;
      end $$`);
}

/** The log columns a queued row keeps: what the rollups group and sum (names as in request_logs). */
export const QUEUED_COLUMNS = [
  ['created_at', 'timestamptz not null'],
  ['operation', 'text'],
  ['api_key_id', 'uuid'],
  ['virtual_key_id', 'uuid'],
  ['provider', 'text'],
  ['model', 'text'],
  ['end_user', 'text'],
  ['metadata', 'jsonb'],
  ['status_code', 'integer'],
  ['error', 'jsonb'],
  ['prompt_tokens', 'integer'],
  ['completion_tokens', 'integer'],
  ['cost_usd', 'numeric'],
  ['latency_ms', 'integer'],
] as const;

/**
 * For the aggregating upserts: JIT compilation cost about 0.5 s per compaction without making
 * it faster, and the default 4 MB of work_mem sent its grouping to a disk sort (measured on
 * 15,000 queued rows: 1.5 s, then 0.7 s with these).
 */
const AGGREGATE_SETTINGS = `set jit = off set work_mem = '64MB'`;

/** pg_try_advisory_xact_lock key of the compaction (any constant the gateway uses nowhere else). */
const COMPACT_LOCK = 7_305_118_001;

/**
 * The CTE `upserted`, which adds the rows of `source` (sign 1) to the rollups or takes them away (-1).
 * Each log row counts in the hourly totals (of its API key and of all) and in one weekly
 * and one daily group per dimension (totals included);
 * cells of the same group and latency bin are summed first, then each group's histogram
 * becomes its two arrays. Groups are written in index order, so that two writers upserting
 * overlapping groups lock them in the same order (no deadlock).
 */
export function upsert(source: string, sign: 1 | -1, counts: RollupCount[], rows: RollupRows = EVERY_ROW_A_REQUEST): string {
  const columns = counts.map(({ column }) => `, ${column}`).join('');
  return `upserted as (insert into request_log_rollups as r (period, dimension, name, bucket, api_key_id, value, requests, errors, prompt_tokens, completion_tokens, cost_usd${columns}, latency_bins, latency_counts)
    select period, dimension, name, bucket, api_key_id, value,
           ${sign} * sum(n), ${sign} * sum(errors), ${sign} * sum(prompt_tokens), ${sign} * sum(completion_tokens), ${sign} * sum(cost_usd)${counts.map(({ column }) => `, ${sign} * sum(${column})`).join('')},
           coalesce(array_agg(bin order by bin) filter (where n <> 0), '{}'), coalesce(array_agg((${sign} * n)::integer order by bin) filter (where n <> 0), '{}')
    from (
      select g.period, g.dimension, g.name, g.bucket, g.api_key_id, g.value, request_log_latency_bin(l.latency_ms) as bin,
             count(*) filter (where ${rows.request}) as n,
             count(*) filter (where (${rows.request}) and (l.status_code >= 400 or l.error is not null)) as errors,
             coalesce(sum(l.prompt_tokens), 0) as prompt_tokens,
             coalesce(sum(l.completion_tokens), 0) as completion_tokens,
             coalesce(sum(l.cost_usd), 0) as cost_usd${counts.map(({ column, where }) => `,\n             count(*) filter (where ${where}) as ${column}`).join('')}
      from ${source} l
      cross join lateral (
        select date_trunc('hour', l.created_at, 'UTC') as hour, date_trunc('day', l.created_at, 'UTC') as day, date_trunc('week', l.created_at, 'UTC') as week
      ) as t
      cross join lateral (
        select 'hour', 'all', '', t.hour, null::text, null::uuid
        union all select 'hour', 'total', '', t.hour, null, l.api_key_id
        union all
        select p.period, d.dimension, d.name, p.bucket, d.value, d.api_key_id
        from (values ('day', t.day), ('week', t.week)) as p(period, bucket)
        cross join lateral (
          select 'all', '', null::text, null::uuid
          union all select 'total', '', null, l.api_key_id
          union all select 'user', '', l.end_user, l.api_key_id
          union all select 'model', '', l.model, l.api_key_id
          union all select 'provider', '', l.provider, l.api_key_id
          union all select 'operation', '', l.operation, l.api_key_id
          union all select 'virtual_key', '', l.virtual_key_id::text, l.api_key_id
          union all select 'metadata', left(m.key, 512), left(m.value, 512), l.api_key_id
                    from jsonb_each_text(case when jsonb_typeof(l.metadata) = 'object' then l.metadata else '{}' end) as m
        ) as d(dimension, name, value, api_key_id)
      ) as g(period, dimension, name, bucket, value, api_key_id)
      ${rows.included ? `where ${rows.included}` : ''}
      group by 1, 2, 3, 4, 5, 6, 7
    ) as cells
    group by 1, 2, 3, 4, 5, 6
    order by 1, 2, 3, 4, 5, 6
    on conflict (period, dimension, name, bucket, api_key_id, value) do update set
      requests = r.requests + excluded.requests,
      errors = r.errors + excluded.errors,
      prompt_tokens = r.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = r.completion_tokens + excluded.completion_tokens,
      cost_usd = r.cost_usd + excluded.cost_usd,${counts.map(({ column }) => `\n      ${column} = r.${column} + excluded.${column},`).join('')}
      (latency_bins, latency_counts) = (
        select coalesce(array_agg(bin order by bin), '{}'), coalesce(array_agg(n order by bin), '{}')
        from (select bin, sum(n)::integer as n
              from unnest(r.latency_bins || excluded.latency_bins, r.latency_counts || excluded.latency_counts) as merged(bin, n)
              group by bin) as bins
        where n <> 0))`;
}
