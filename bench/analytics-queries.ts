/**
 * Dashboard query benchmark: fills a throwaway database with generated request logs and
 * times every query the dashboard makes, through the gateway's own services (the SQL and
 * the TypeORM work the API does), against the real migrations and their indexes.
 *
 *   npm run bench:analytics -- [--rows 1000000] [--runs 5] [--reuse]
 *
 *   --rows N    log rows to generate, spread over the last 30 days (default 1,000,000)
 *   --runs N    timed runs per query after one warm-up run; the median and the worst are shown
 *   --reuse     keep the database of an earlier run when it holds --rows rows (skips the fill)
 *
 * The server: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres when it
 * answers, else an embedded PostgreSQL in a temporary directory. The database
 * `bench_analytics` on it is dropped and made again (left in place for --reuse).
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options';
import { EmbeddedPostgres } from '../src/database/embedded-postgres';
import { SpendService } from '../src/modules/keys/spend.service';
import { VirtualKeyEntity } from '../src/modules/keys/entities/virtual-key.entity';
import { AnalyticsService } from '../src/modules/logging/analytics.service';
import { PartStore } from '../src/modules/logging/body-parts/part-store';
import { AnalyticsQueryDto } from '../src/modules/logging/dto/analytics-query.dto';
import { AnalyticsTimeseriesQueryDto } from '../src/modules/logging/dto/analytics-timeseries-query.dto';
import { LogQueryDto } from '../src/modules/logging/dto/log-query.dto';
import { DEFAULT_WORKSPACE_ID } from '../src/modules/workspaces/workspace.entity';
import type { WorkspaceScope } from '../src/context/caller';
import { RequestLogEntity } from '../src/modules/logging/entities/request-log.entity';
import { LogBodyReader } from '../src/modules/logging/body-parts/log-body-reader';
import { LogsService } from '../src/modules/logging/logs.service';
import { LogPartitionMaintainer } from '../src/modules/logging/log-partition-maintainer';
import type { ConfigService } from '@nestjs/config';
import type { Environment } from '../src/config/environment';

const DATABASE = 'bench_analytics';
const TARGET_MS = 200;
const DAY_MS = 86_400_000;
const API_KEYS = 20;
const VIRTUAL_KEYS = 10;
const USERS = 1000;

interface Args {
  rows: number;
  runs: number;
  reuse: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { rows: 1_000_000, runs: 5, reuse: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => Number(inline ?? argv[++i]);
    if (flag === '--rows') args.rows = value();
    else if (flag === '--runs') args.runs = value();
    else if (flag === '--reuse') args.reuse = true;
    else throw new Error(`unknown argument ${argv[i]} (see the header of bench/analytics-queries.ts)`);
  }
  if (!(args.rows >= 1000)) throw new Error('--rows must be at least 1000');
  if (!(args.runs >= 1)) throw new Error('--runs must be at least 1');
  return args;
}

const log = (message: string) => process.stdout.write(`${message}\n`);

async function reachable(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/** The admin URL of a server to create the bench database on, and how to stop it after. */
async function server(): Promise<{ adminUrl: string; stop: () => Promise<void> }> {
  if (process.env.DATABASE_URL) return { adminUrl: process.env.DATABASE_URL, stop: async () => {} };
  const local = 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await reachable(local)) return { adminUrl: local, stop: async () => {} };
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-analytics-pg-'));
  const embedded = new EmbeddedPostgres({ dataDir, database: 'postgres', ephemeral: true, log });
  const adminUrl = await embedded.start();
  return {
    adminUrl,
    stop: async () => {
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function withDatabase(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Keys, virtual keys and `rows` log rows over the last 30 days, made by the server itself. */
async function fill(dataSource: DataSource, rows: number): Promise<void> {
  await dataSource.query(
    `insert into api_keys (id, name, role, key_hash, key_hint, budget_limit_usd, budget_period)
     select ('00000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, 'bench key ' || i, case when i = 1 then 'admin' else 'member' end,
            md5('key' || i), 'gk-…' || i, case when i % 2 = 0 then 100 else null end, case when i % 2 = 0 then 'monthly' else null end
     from generate_series(1, ${API_KEYS}) as i`,
  );
  await dataSource.query(
    `insert into virtual_keys (id, name, slug, provider, key_hint, budget_limit_usd, budget_period)
     select ('00000000-0000-4000-9000-' || lpad(to_hex(i), 12, '0'))::uuid, 'bench vk ' || i, 'vk-' || i,
            (array['openai', 'anthropic', 'google', 'groq', 'mistral'])[1 + i % 5], 'sk-…' || i, 50, 'monthly'
     from generate_series(1, ${VIRTUAL_KEYS}) as i`,
  );
  // Row i is (rows - i) / rows of 30 days old, so ids (UUIDv7: the creation time in the
  // first 48 bits) rise with created_at as they do in a real log. In chunks, to keep each
  // transaction and its WAL small.
  const chunk = 100_000;
  const started = Date.now();
  const now = Date.now();
  for (let first = 1; first <= rows; first += chunk) {
    const last = Math.min(rows, first + chunk - 1);
    await dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, api_key_id, virtual_key_id, provider, model, status_code, is_stream,
                                 request_headers, request_body, response_body, prompt_tokens, completion_tokens, total_tokens, cached_tokens,
                                 reasoning_tokens, cost_usd, latency_ms, ttft_ms, end_user, metadata, error, retry_count, cache_status, target_index)
       select (lpad(to_hex(ms), 12, '0') || '7' || substr(h, 1, 3) || '8' || substr(h, 4, 15))::uuid,
              'trace-' || (i / 3 * 2 + i % 2),
              to_timestamp(ms / 1000.0),
              case when i % 20 = 0 then 'embeddings' when i % 13 = 0 then 'responses' else 'chat.completions' end,
              ('00000000-0000-4000-8000-' || lpad(to_hex(1 + i % ${API_KEYS}), 12, '0'))::uuid,
              ('00000000-0000-4000-9000-' || lpad(to_hex(1 + i % ${VIRTUAL_KEYS}), 12, '0'))::uuid,
              (array['openai', 'anthropic', 'google', 'groq', 'mistral'])[1 + (1 + i % ${VIRTUAL_KEYS}) % 5],
              'model-' || (i * 7 % 30),
              case when i % 37 = 0 then 500 when i % 53 = 0 then 429 else 200 end,
              i % 3 = 0,
              '{"content-type": "application/json", "x-gateway-api-key": "[REDACTED]"}'::jsonb,
              jsonb_build_object('model', 'model-' || (i * 7 % 30), 'messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content', 'Question ' || i || ' about the weather in city ' || (i % 97)))),
              jsonb_build_object('id', 'chatcmpl-' || i, 'object', 'chat.completion', 'choices', jsonb_build_array(jsonb_build_object('index', 0, 'message', jsonb_build_object('role', 'assistant', 'content', 'An answer of a few words to question ' || i)))),
              20 + i % 500, 5 + i % 300, 25 + i % 500 + i % 300, case when i % 4 = 0 then 10 else 0 end, 0,
              case when i % 19 = 0 then null else ((20 + i % 500) * 0.15 + (5 + i % 300) * 0.6) / 1e6 end,
              80 + ('x' || substr(h, 19, 6))::bit(24)::int % 2000, case when i % 3 = 0 then 40 + i % 300 else null end,
              'user-' || (i * 31 % ${USERS}),
              jsonb_build_object('team', (array['search', 'ads', 'support', 'growth', 'infra', 'ml', 'mobile', 'web'])[1 + i % 8], 'env', case when i % 5 = 0 then 'staging' else 'prod' end, 'feature', 'feature-' || (i % 40)),
              case when i % 37 = 0 then '{"message": "upstream failed", "type": "upstream_error"}'::jsonb else null end,
              case when i % 41 = 0 then 1 else 0 end,
              case when i % 11 = 0 then 'HIT' else 'MISS' end,
              '0'
       from (select i, (${now} - (${rows} - i)::float8 / ${rows} * ${30 * DAY_MS})::bigint as ms, md5(i::text) as h
             from generate_series(${first}, ${last}) as i) as g`,
    );
    process.stdout.write(`\r  ${last.toLocaleString('en-US')} rows (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  process.stdout.write('\n');
  // As the gateway does at start-up: each day's rows move out of the default partition into their own.
  const partitioning = Date.now();
  const noSettings = { get: () => undefined } as unknown as ConfigService<Environment, true>;
  await new LogPartitionMaintainer(dataSource, new PartStore(noSettings), noSettings).run();
  log(`  rows moved into day partitions (${((Date.now() - partitioning) / 1000).toFixed(0)} s)`);
  // The gateway folds queued rows into the rollups every second; here, once, all of them.
  const compacting = Date.now();
  while ((await dataSource.query('select request_log_rollups_compact(100000) as moved'))[0].moved > 0);
  log(`  rollups compacted (${((Date.now() - compacting) / 1000).toFixed(0)} s)`);
  await dataSource.query('vacuum analyze request_logs');
  await dataSource.query('vacuum analyze request_log_rollups, request_log_rollup_queue');
  await dataSource.query('analyze api_keys');
  await dataSource.query('analyze virtual_keys');
}

const isExport = (r: Measured) => r.name.startsWith('export:');

interface Measured {
  name: string;
  rows: number;
  median: number;
  worst: number;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const { adminUrl, stop } = await server();
  const url = withDatabase(adminUrl, DATABASE);
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  let dataSource: DataSource | undefined;
  try {
    const exists = (await admin.query('select 1 from pg_database where datname = $1', [DATABASE])).rowCount === 1;
    let fresh = !args.reuse || !exists;
    if (!fresh) {
      dataSource = await new DataSource({ ...dataSourceOptions(url), logging: false }).initialize();
      await dataSource.runMigrations();
      const [{ n }] = await dataSource.query('select count(*)::int as n from request_logs');
      if (n !== args.rows) {
        log(`database ${DATABASE} holds ${n} rows, not ${args.rows}: filling it again`);
        await dataSource.destroy();
        dataSource = undefined;
        fresh = true;
      } else {
        log(`reusing ${DATABASE} (${n.toLocaleString('en-US')} rows)`);
      }
    }
    if (fresh) {
      await admin.query(`drop database if exists ${DATABASE} with (force)`);
      await admin.query(`create database ${DATABASE}`);
      dataSource = await new DataSource({ ...dataSourceOptions(url), logging: false }).initialize();
      await dataSource.runMigrations();
      log(`filling ${DATABASE} on ${new URL(adminUrl).host} with ${args.rows.toLocaleString('en-US')} log rows over 30 days`);
      await fill(dataSource, args.rows);
    }
    const ds = dataSource!;
    const [{ version }] = await ds.query('select version()');
    const [{ size }] = await ds.query(
      `select pg_size_pretty(sum(pg_total_relation_size(inhrelid))) as size from pg_inherits where inhparent = 'request_logs'::regclass`,
    );
    log(`${String(version).split(',')[0]}; request_logs ${size} with its indexes (its partitions')`);

    const logs = new LogsService(
      ds.getRepository(RequestLogEntity),
      ds.getRepository(VirtualKeyEntity),
      new LogBodyReader(ds, new PartStore({ get: () => undefined } as unknown as ConfigService<Environment, true>)),
    );
    const analytics = new AnalyticsService(ds);
    const spend = new SpendService(ds);
    // The scopes the key guard gives: an admin and a member of the (default) workspace every row is in, an owner seeing every workspace.
    const scopeOf = (id: string, role: WorkspaceScope['caller']['role']): WorkspaceScope => ({
      caller: { kind: 'api_key', id, name: 'bench', role },
      workspaceId: DEFAULT_WORKSPACE_ID,
      visible: role === 'owner' ? null : [DEFAULT_WORKSPACE_ID],
    });
    const adminKey = scopeOf('00000000-0000-4000-8000-000000000001', 'admin');
    const userKey = scopeOf('00000000-0000-4000-8000-000000000002', 'member');
    const ownerKey = scopeOf('00000000-0000-4000-8000-000000000001', 'owner');
    const logQuery = (fields: Partial<LogQueryDto>) => Object.assign(new LogQueryDto(), { limit: 50, include_bodies: false }, fields);
    const now = Date.now();
    const ago = (ms: number) => new Date(now - ms).toISOString();
    const summary = (group_by: string, range: number, caller = adminKey) =>
      analytics.summary(caller, Object.assign(new AnalyticsQueryDto(), { group_by, from: ago(range), to: ago(0) }));
    const timeseries = (interval: 'minute' | 'hour' | 'day', range: number, caller = adminKey) =>
      analytics.timeseries(caller, Object.assign(new AnalyticsTimeseriesQueryDto(), { interval, from: ago(range), to: ago(0) }));

    // A cursor from the middle of the log, and a trace id that exists.
    const firstPage = await logs.list(adminKey, logQuery({}), {});
    const middle = (await ds.query(`select id, trace_id from request_logs order by id desc offset ${Math.floor(args.rows / 2)} limit 1`))[0];

    /** An export read to its end (what GET /v1/logs/export streams), its rows counted. */
    const exportAll = async (query: LogQueryDto) => {
      const rows: unknown[] = [];
      for await (const batch of logs.exportBatches(adminKey, query, {})) rows.push(...batch.map(() => null));
      return rows;
    };
    const queries: [string, () => Promise<{ data: unknown[] } | unknown>][] = [
      ['logs: first page', () => logs.list(adminKey, logQuery({}), {})],
      ['logs: next page (cursor)', () => logs.list(adminKey, logQuery({ cursor: firstPage.next_cursor! }), {})],
      ['logs: page deep in the log (cursor)', () => logs.list(adminKey, logQuery({ cursor: middle.id }), {})],
      ['logs: with bodies (limit 50)', () => logs.list(adminKey, logQuery({ include_bodies: true }), {})],
      ['logs: user=', () => logs.list(adminKey, logQuery({ user: 'user-17' }), {})],
      ['logs: model=', () => logs.list(adminKey, logQuery({ model: 'model-3' }), {})],
      ['logs: provider=', () => logs.list(adminKey, logQuery({ provider: 'groq' }), {})],
      ['logs: status=500', () => logs.list(adminKey, logQuery({ status: '500' }), {})],
      ['logs: api_key_id=', () => logs.list(adminKey, logQuery({ api_key_id: '00000000-0000-4000-8000-000000000005' }), {})],
      ['logs: virtual_key= (slug)', () => logs.list(adminKey, logQuery({ virtual_key: 'vk-3' }), {})],
      ['logs: operation=embeddings', () => logs.list(adminKey, logQuery({ operation: 'embeddings' }), {})],
      ['logs: trace_id=', () => logs.list(adminKey, logQuery({ trace_id: middle.trace_id }), {})],
      ['logs: metadata.team=', () => logs.list(adminKey, logQuery({}), { team: 'ads' })],
      ['logs: metadata.feature= (rarer)', () => logs.list(adminKey, logQuery({}), { feature: 'feature-7' })],
      ['logs: metadata.team + env', () => logs.list(adminKey, logQuery({}), { team: 'ads', env: 'staging' })],
      ['logs: from/to (a past hour)', () => logs.list(adminKey, logQuery({ from: ago(10 * DAY_MS), to: ago(10 * DAY_MS - 3_600_000) }), {})],
      ['logs: user= + model= + last 24 h', () => logs.list(adminKey, logQuery({ user: 'user-17', model: 'model-3', from: ago(DAY_MS) }), {})],
      ['logs: user= + metadata.team=', () => logs.list(adminKey, logQuery({ user: 'user-17' }), { team: 'ads' })],
      ['logs: user-role key, first page', () => logs.list(userKey, logQuery({}), {})],
      ['logs: one log by id', () => logs.get(adminKey, middle.id)],
      ['search: q= one row (a rare word), 30 d', () => logs.list(adminKey, logQuery({ q: `"question ${Math.floor(args.rows / 2)}"` }), {})],
      ['search: q= 1% of rows ("city 42"), 30 d', () => logs.list(adminKey, logQuery({ q: '"city 42"' }), {})],
      ['search: q= every row (weather), 30 d', () => logs.list(adminKey, logQuery({ q: 'weather' }), {})],
      ['search: q= + model= + last 24 h', () => logs.list(adminKey, logQuery({ q: '"city 42"', model: 'model-3', from: ago(DAY_MS) }), {})],
      ['search: q= + status=error, 30 d', () => logs.list(adminKey, logQuery({ q: '"city 42"', status: 'error' }), {})],
      ['logs: model_contains= + status=4xx,5xx', () => logs.list(adminKey, logQuery({ model_contains: 'EL-2', status: '4xx,5xx' }), {})],
      ['export: model= last 24 h, every row', () => exportAll(logQuery({ model: 'model-3', from: ago(DAY_MS) }))],
      ['export: status=error, 30 d, every row', () => exportAll(logQuery({ status: 'error' }))],
    ];
    for (const [label, range] of [
      ['24 h', DAY_MS],
      ['30 d', 30 * DAY_MS],
    ] as const) {
      for (const groupBy of ['user', 'model', 'provider', 'operation', 'api_key', 'virtual_key', 'metadata.team']) {
        queries.push([`summary by ${groupBy}, ${label}`, () => summary(groupBy, range)]);
      }
    }
    queries.push(['summary by model, 30 d, user-role key', () => summary('model', 30 * DAY_MS, userKey)]);
    queries.push(['summary by model, 30 d, owner (every workspace)', () => summary('model', 30 * DAY_MS, ownerKey)]);
    queries.push(['timeseries minute, 3 h', () => timeseries('minute', 3 * 3_600_000)]);
    queries.push(['timeseries hour, 24 h', () => timeseries('hour', DAY_MS)]);
    queries.push(['timeseries hour, 7 d', () => timeseries('hour', 7 * DAY_MS)]);
    queries.push(['timeseries day, 30 d', () => timeseries('day', 30 * DAY_MS)]);
    queries.push(['timeseries hour, 30 d', () => timeseries('hour', 30 * DAY_MS)]);
    queries.push(['timeseries day, 30 d, user-role key', () => timeseries('day', 30 * DAY_MS, userKey)]);
    queries.push(['timeseries day, 30 d, owner (every workspace)', () => timeseries('day', 30 * DAY_MS, ownerKey)]);
    queries.push([
      `keys page: spent_usd of ${API_KEYS} API keys`,
      async () => {
        const keys = await ds.query('select id, budget_limit_usd, budget_period from api_keys');
        return Promise.all(
          keys.map((k: any) => spend.budgetStatus('api_key_id', { id: k.id, budgetLimitUsd: k.budget_limit_usd, budgetPeriod: k.budget_period })),
        );
      },
    ]);
    queries.push([
      `keys page: spent_usd of ${VIRTUAL_KEYS} virtual keys`,
      async () => {
        const keys = await ds.query('select id, budget_limit_usd, budget_period from virtual_keys');
        return Promise.all(
          keys.map((k: any) => spend.budgetStatus('virtual_key_id', { id: k.id, budgetLimitUsd: k.budget_limit_usd, budgetPeriod: k.budget_period })),
        );
      },
    ]);

    const results: Measured[] = [];
    for (const [name, run] of queries) {
      const result = (await run()) as { data?: unknown[] } | unknown[];
      const rows = Array.isArray(result) ? result.length : Array.isArray(result?.data) ? result.data.length : 1;
      const times: number[] = [];
      for (let i = 0; i < args.runs; i++) {
        const started = process.hrtime.bigint();
        await run();
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      times.sort((a, b) => a - b);
      const measured = { name, rows, median: times[Math.floor(times.length / 2)], worst: times[times.length - 1] };
      results.push(measured);
      log(`  ${name.padEnd(44)} ${measured.median.toFixed(1).padStart(8)} ms`);
    }

    log('');
    log(`| query | rows | median ms | worst ms | under ${TARGET_MS} ms |`);
    log('|---|---:|---:|---:|:---:|');
    for (const r of results) {
      // An export is a download streamed while it is read: its measure is a rate, not a page's time.
      const verdict = isExport(r) ? `n/a: ${Math.round(r.rows / (r.median / 1000)).toLocaleString('en-US')} rows/s` : r.median < TARGET_MS ? 'yes' : '**no**';
      log(`| ${r.name} | ${r.rows} | ${r.median.toFixed(1)} | ${r.worst.toFixed(1)} | ${verdict} |`);
    }
    const slow = results.filter((r) => !isExport(r) && r.median >= TARGET_MS);
    log('');
    log(
      slow.length === 0
        ? `every query under ${TARGET_MS} ms (median of ${args.runs})`
        : `${slow.length} of ${results.length} queries at or over ${TARGET_MS} ms`,
    );
  } finally {
    await dataSource?.destroy();
    await admin.end();
    await stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
