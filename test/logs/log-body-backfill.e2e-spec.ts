/**
 * The online backfill of log bodies (issue 33, LogBodyBackfill): rows written before bodies
 * were stored as parts (their bodies whole, `body_bytes` null, inserted here as the gateway
 * stored them then) are moved to parts. The suite checks that
 *
 * - GET /v1/logs/{id}, the list with bodies and the JSON and CSV exports give back the same
 *   bodies after as before, for a recorded Claude Code session, rows of two workspaces and
 *   two days, and awkward bodies (U+FFFD where NUL or a lone surrogate was, emoji, U+2028, a
 *   `__proto__` key, bodies that are not objects, only an answer, nothing worth a part);
 * - what two old rows share (Claude Code's system prompt and tools) is stored once per
 *   workspace, dated by the newer row's day (retention reads it);
 * - search finds the words of the bodies after as before;
 * - a second pass does nothing; rows the gateway writes meanwhile, and rows without bodies,
 *   are not touched;
 * - rows of a deleted workspace (retention frees its parts) and rows PostgreSQL refuses
 *   once split stay whole for good, the others of their batch move;
 * - a pass waits for a locked row only a moment at a time (and gives up after a few tries),
 *   runs on one instance at a time,
 *   stops between batches at shutdown, and does not run with LOG_BODY_BACKFILL=false.
 */
import type { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { uuidv7 } from '../../src/common/ids';
import { validateEnvironment, type Environment } from '../../src/config/environment';
import { LogBodyBackfill } from '../../src/modules/logging/body-parts/log-body-backfill';
import { PartStore } from '../../src/modules/logging/body-parts/part-store';
import { LogPartitionMaintainer } from '../../src/modules/logging/log-partition-maintainer';
import { LogsService } from '../../src/modules/logging/logs.service';
import { call, createVirtualKey, openai, parseCsv, waitFor } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

/** Two turns of one Claude Code session (the second carries the Bash tool_use and its tool_result). */
const CLAUDE_CODE: { body: Record<string, any> }[] = JSON.parse(
  readFileSync(join(__dirname, '..', 'fixtures', 'clients', 'claude-code-tool.json'), 'utf8'),
).requests;
const DAY_MS = 86_400_000;
const dayOf = (time: number) => new Date(time).toISOString().slice(0, 10);
const clone = <T>(value: T): T => structuredClone(value);
/** A word no other request of the run contains (letters only: one token for the search). */
const word = (label: string) =>
  `${label}${randomBytes(6)
    .toString('hex')
    .replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)])}`;

/** What an old row holds: its bodies as the gateway stored them then (null: none). */
interface OldRow {
  workspaceId: string;
  traceId: string;
  requestBody: unknown;
  responseBody: unknown;
  /** Days before now it was logged (default 0). */
  daysAgo?: number;
}

/** An answer of Claude's, as the gateway logged a streamed one. */
const claudeAnswer = (text: string) => ({
  id: `msg_${randomBytes(8).toString('hex')}`,
  type: 'message',
  role: 'assistant',
  model: 'claude-opus-5-5',
  content: [{ type: 'text', text }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 12_000, output_tokens: 40 },
});

describe('log body backfill', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let backfill: LogBodyBackfill;
  let defaultWorkspace: string;

  const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => gateway.dataSource.query(text, params);

  /** Inserts a row as a gateway before parts stored it: bodies whole, no part columns; its id. */
  async function insertOld(row: OldRow): Promise<string> {
    // Its id made when it was logged (the list pages and searches by id), its time to the microsecond as PostgreSQL's now().
    const id = uuidv7(Date.now() - (row.daysAgo ?? 0) * DAY_MS);
    const json = (body: unknown) => (body === null ? null : JSON.stringify(body));
    await sql(
      `insert into request_logs (id, workspace_id, trace_id, created_at, operation, status_code, latency_ms, model, provider, request_body, response_body)
       values ($1, $2, $3, now() - make_interval(days => $4), 'messages', 200, 120, 'claude-opus-5-5', 'anthropic', $5::jsonb, $6::jsonb)`,
      [id, row.workspaceId, row.traceId, row.daysAgo ?? 0, json(row.requestBody), json(row.responseBody)],
    );
    return id;
  }

  /** A backfill of its own (the gateway's runs at start-up and hourly), with these settings. */
  const backfillWith = (env: Partial<Environment>) =>
    new LogBodyBackfill(gateway.dataSource, gateway.app.get(PartStore), { get: (name: keyof Environment) => env[name] } as unknown as ConfigService<
      Environment,
      true
    >);

  /** The row's columns that say how its bodies are stored. */
  const storedAs = async (id: string) =>
    (await sql(`select part_layout is not null as split, body_bytes, octet_length(request_body::text) as skeleton from request_logs where id = $1`, [id]))[0];

  /** The rows of a log list or JSON export (query string after `?`), by id. */
  async function listed(path: string): Promise<Map<string, any>> {
    const response = await call(gateway, path);
    expect(response.status).toBe(200);
    const rows: any[] = Array.isArray(response.body) ? response.body : response.body.data;
    return new Map(rows.map((row) => [row.id, row]));
  }

  /** Every read of a trace's rows: GET /v1/logs/{id}, the list, the JSON and CSV exports; bodies by id and read. */
  async function readsOf(traceId: string, ids: string[]): Promise<Record<string, unknown>> {
    const list = await listed(`/v1/logs?include_bodies=true&limit=100&trace_id=${traceId}`);
    const json = await listed(`/v1/logs/export?format=json&include_bodies=true&trace_id=${traceId}`);
    const csv = parseCsv((await call(gateway, `/v1/logs/export?format=csv&include_bodies=true&trace_id=${traceId}`)).text);
    const column = (name: string) => csv[0].indexOf(name);
    const csvRows = new Map(csv.slice(1).map((cells) => [cells[column('id')], cells]));
    const reads: Record<string, unknown> = {};
    for (const id of ids) {
      const one = await call(gateway, `/v1/logs/${id}`);
      expect(one.status).toBe(200);
      const cells = csvRows.get(id)!;
      const bodiesOf = (row: any) => ({ request_body: row.request_body, response_body: row.response_body });
      reads[id] = {
        get: bodiesOf(one.body),
        list: bodiesOf(list.get(id)),
        json: bodiesOf(json.get(id)),
        csv: { request_body: csvBody(cells[column('request_body')]), response_body: csvBody(cells[column('response_body')]) },
      };
    }
    return reads;
  }

  /** A body of the CSV export: JSON, but a string body is written as it is. */
  const csvBody = (cell: string): unknown => {
    try {
      return JSON.parse(cell);
    } catch {
      return cell;
    }
  };

  /** The ids a search finds (`q`), with the plan the list picks and straight through the index. */
  async function searchBothPlans(q: string): Promise<string[][]> {
    const logs = gateway.app.get(LogsService);
    const found: string[][] = [];
    const walk = logs.searchWalkMs;
    try {
      for (const walkMs of [walk, 0]) {
        logs.searchWalkMs = walkMs;
        found.push([...(await listed(`/v1/logs?include_bodies=false&limit=50&q=${encodeURIComponent(q)}`)).keys()]);
      }
    } finally {
      logs.searchWalkMs = walk;
    }
    return found;
  }

  async function createWorkspace(slug: string): Promise<string> {
    const created = await admin(gateway, 'POST', '/v1/workspaces', { name: slug, slug });
    expect(created.status).toBe(201);
    return created.body.id;
  }

  /** A chat completion through the gateway, with a message long enough to be a part; its request id. */
  async function sendNew(text: string): Promise<string> {
    const messages = [{ role: 'user' as const, content: `${text}: a message of today, long enough to be a part of its own.` }];
    const { response } = await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    return response.headers.get('x-gateway-request-id')!;
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await gateway.app.get(LogPartitionMaintainer).run();
    backfill = gateway.app.get(LogBodyBackfill);
    expect(await backfill.run()).toEqual({ rows: 0, parts: 0, keptWhole: 0 }); // the start-up pass, on an empty log
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-backfill-000', custom_host: `${mock.url}/v1` });
    [{ id: defaultWorkspace }] = await sql(`select id from workspaces where slug = 'default'`);
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  describe('rows of a session, two workspaces and two days, awkward bodies', () => {
    const traceId = word('trace');
    const [FIRST, TOOL, AWKWARD, ANSWERED, TEAM] = ['first', 'tool', 'awkward', 'answered', 'team'].map(word);
    const OLD_DAYS = 3;
    const [first, second] = CLAUDE_CODE.map(({ body }) => clone(body));
    first.messages[0].content.push({ type: 'text', text: `Please look at ${FIRST} first.` });
    second.messages[3].content[0].content = `${TOOL} printed fixture-ok`;
    /** What the gateway stored for a NUL and a lone surrogate (U+FFFD), emoji, U+2028 and a `__proto__` key (an own property, as JSON.parse makes it). */
    const awkward = JSON.parse(
      JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You answer in one line; the line separator \u2028 and emoji 🧪🚀 are kept as they are.' },
          { role: 'user', content: `${AWKWARD}: a NUL \ufffd and a lone surrogate \ufffd, made storable when this was logged.`, name: 'tester' },
        ],
      }).replace('"name":"tester"', '"__proto__":{"polluted":"no, an own property"},"name":"tester"'),
    );
    const ids: Record<string, string> = {};
    let newBefore: { id: string; xmin: string }[];
    let newDuring: string[];
    let reportOfPass: unknown;
    let before: Record<string, unknown>;

    beforeAll(async () => {
      const team = await createWorkspace(word('ws'));
      const [{ day }] = await sql(`select to_char((now() - make_interval(days => $1)) at time zone 'UTC', 'YYYY-MM-DD') as day`, [OLD_DAYS]);
      await sql(`select request_logs_create_partition($1::date)`, [day]);

      ids.first = await insertOld({
        workspaceId: defaultWorkspace,
        traceId,
        requestBody: first,
        responseBody: claudeAnswer(`Running the command now, as ${ANSWERED} asked.`),
      });
      ids.second = await insertOld({
        workspaceId: defaultWorkspace,
        traceId,
        requestBody: second,
        responseBody: claudeAnswer('The command printed fixture-ok.'),
        daysAgo: OLD_DAYS,
      });
      ids.otherWorkspace = await insertOld({
        workspaceId: team,
        traceId,
        requestBody: { ...clone(CLAUDE_CODE[1].body), metadata: { team: TEAM } },
        responseBody: claudeAnswer('The command printed fixture-ok.'),
      });
      ids.awkward = await insertOld({
        workspaceId: defaultWorkspace,
        traceId,
        requestBody: awkward,
        responseBody: { choices: [{ index: 0, message: { role: 'assistant', content: '🧪 ok' } }] },
      });
      ids.notObjects = await insertOld({
        workspaceId: defaultWorkspace,
        traceId,
        requestBody: 'audio bytes were here, as a string',
        responseBody: [{ a: 1 }, 'two', null],
      });
      ids.answerOnly = await insertOld({
        workspaceId: defaultWorkspace,
        traceId,
        requestBody: null,
        responseBody: claudeAnswer('Only an answer was logged for this request, long enough to be a part.'),
      });
      ids.small = await insertOld({
        workspaceId: defaultWorkspace,
        traceId,
        requestBody: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
        responseBody: { ok: true },
      });
      ids.noBodies = await insertOld({ workspaceId: defaultWorkspace, traceId, requestBody: null, responseBody: null });
      expect(
        (await sql(`select count(*)::int as n from request_logs where trace_id = $1 and part_layout is null and body_bytes is null`, [traceId]))[0].n,
      ).toBe(8);

      // Rows the gateway writes (as parts) before and during the pass.
      const written = [await sendNew(word('before')), await sendNew(word('before'))];
      await gateway.flushLogs();
      newBefore = await sql(`select id, xmin::text as xmin from request_logs where id = any($1::uuid[]) order by id`, [written]);
      expect(newBefore).toHaveLength(2);

      before = await readsOf(traceId, Object.values(ids));
      expect((before[ids.first] as any).get.request_body).toEqual(first);
      expect((before[ids.awkward] as any).get.request_body).toEqual(awkward);

      const sending = Promise.all([word('during'), word('during'), word('during')].map(sendNew));
      [reportOfPass, newDuring] = await Promise.all([backfill.run(), sending]);
      await gateway.flushLogs();
    });

    it('moves every row with a body, and only those', async () => {
      expect(reportOfPass).toEqual({ rows: 7, parts: expect.any(Number), keptWhole: 0 });
      expect((reportOfPass as { parts: number }).parts).toBeGreaterThan(10);
      for (const name of ['first', 'second', 'otherWorkspace', 'awkward', 'answerOnly']) {
        expect({ name, ...(await storedAs(ids[name])) }).toMatchObject({ name, split: true, body_bytes: expect.any(Number) });
      }
      // Claude Code's turn keeps a small skeleton; the parts hold the rest.
      expect((await storedAs(ids.first)).skeleton).toBeLessThan(Buffer.byteLength(JSON.stringify(first)) / 10);
      // Nothing worth a part: whole as before, and done.
      for (const name of ['notObjects', 'small']) expect(await storedAs(ids[name])).toMatchObject({ split: false, body_bytes: expect.any(Number) });
      expect(await storedAs(ids.noBodies)).toEqual({ split: false, body_bytes: null, skeleton: null });
    });

    it('GET /v1/logs/{id}, the list and the JSON and CSV exports give back the bodies as before', async () => {
      expect(await readsOf(traceId, Object.values(ids))).toEqual(before);
      const awkwardRead: any = (await call(gateway, `/v1/logs/${ids.awkward}`)).body.request_body;
      expect(Object.getOwnPropertyNames(awkwardRead.messages[1])).toContain('__proto__');
      expect(JSON.stringify((await call(gateway, `/v1/logs/${ids.first}`)).body)).not.toContain('_missing_part');
    });

    it('stores what two rows share once per workspace, dated by the newer row', async () => {
      for (const field of ['system', 'tools']) {
        const parts = await sql(
          `select p.workspace_id, p.hash::text as hash, to_char(p.last_seen_day, 'YYYY-MM-DD') as last_seen_day from log_body_parts p where p.body = $1::jsonb order by p.workspace_id = $2 desc`,
          [JSON.stringify(first[field]), defaultWorkspace],
        );
        // Once in the default workspace (both turns), once in the other.
        expect(parts.map((part) => part.workspace_id)).toEqual([defaultWorkspace, expect.not.stringMatching(defaultWorkspace)]);
        expect(parts[0].last_seen_day).toBe(dayOf(Date.now()));
        const referencing = await sql(`select id from request_logs where $1::uuid = any(part_hashes) and trace_id = $2 order by id`, [parts[0].hash, traceId]);
        expect(referencing.map((row) => row.id).sort()).toEqual([ids.first, ids.second, ids.otherWorkspace].sort());
      }
      // A message only the older row has is dated by that row's day.
      const [onlyOlder] = await sql(`select to_char(last_seen_day, 'YYYY-MM-DD') as day from log_body_parts where workspace_id = $1 and body = $2::jsonb`, [
        defaultWorkspace,
        JSON.stringify(second.messages[3]),
      ]);
      expect(onlyOlder.day).toBe(dayOf(Date.now() - OLD_DAYS * DAY_MS));
    });

    it('search finds the words of the bodies, in the request, the answer and both workspaces', async () => {
      expect(await searchBothPlans(AWKWARD)).toEqual([[ids.awkward], [ids.awkward]]);
      expect(await searchBothPlans(ANSWERED)).toEqual([[ids.first], [ids.first]]);
      expect(await searchBothPlans(TEAM)).toEqual([[ids.otherWorkspace], [ids.otherWorkspace]]);
      // Past the first 20,000 characters of Claude Code's body (its tools come first), which the row's own search document stops at.
      expect(await searchBothPlans(FIRST)).toEqual([[ids.first], [ids.first]]);
      expect(await searchBothPlans(`${TOOL} fixture`)).toEqual([[ids.second], [ids.second]]);
      expect(await searchBothPlans(`${FIRST} -${ANSWERED}`)).toEqual([[], []]);
    });

    it('leaves the rows the gateway writes alone, before and during the pass', async () => {
      expect(await sql(`select id, xmin::text as xmin from request_logs where id = any($1::uuid[]) order by id`, [newBefore.map((row) => row.id)])).toEqual(
        newBefore,
      );
      expect(newDuring).toHaveLength(3);
      for (const id of newDuring) {
        const log = (await call(gateway, `/v1/logs/${id}`)).body;
        expect(log.request_body.messages[0].content).toMatch(/^during\w+: a message of today/);
        expect(await storedAs(id)).toMatchObject({ split: true });
      }
    });

    it('a second pass does nothing', async () => {
      const xmins = await sql(`select id, xmin::text as xmin from request_logs where trace_id = $1 order by id`, [traceId]);
      expect(await backfill.run()).toEqual({ rows: 0, parts: 0, keptWhole: 0 });
      expect(await sql(`select id, xmin::text as xmin from request_logs where trace_id = $1 order by id`, [traceId])).toEqual(xmins);
    });
  });

  it('keeps the rows of a deleted workspace whole (retention frees its parts), for good', async () => {
    const slug = word('gone');
    const workspaceId = await createWorkspace(slug);
    expect((await admin(gateway, 'DELETE', `/v1/workspaces/${slug}`)).status).toBe(200);
    const traceId = word('trace');
    const body = clone(CLAUDE_CODE[0].body);
    const id = await insertOld({ workspaceId, traceId, requestBody: body, responseBody: claudeAnswer('Kept whole with its deleted workspace.') });

    expect(await backfill.run()).toEqual({ rows: 0, parts: 0, keptWhole: 1 });
    expect(await storedAs(id)).toMatchObject({ split: false, body_bytes: expect.any(Number) });
    expect((await sql(`select count(*)::int as n from log_body_parts where workspace_id = $1`, [workspaceId]))[0].n).toBe(0);
    expect((await call(gateway, `/v1/logs/${id}`)).body.request_body).toEqual(body);
    expect(await backfill.run()).toEqual({ rows: 0, parts: 0, keptWhole: 0 });
  });

  it('keeps a row PostgreSQL refuses once split (a data error) whole with a warning, and moves the rest of its batch', async () => {
    const traceId = word('trace');
    const refused = word('refused');
    const refusedBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `${refused}: the database will not take this message as a part.` }] };
    const keptBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `${word('kept')}: this one it takes, in the same batch as the other.` }] };
    const refusedId = await insertOld({ workspaceId: defaultWorkspace, traceId, requestBody: refusedBody, responseBody: null });
    const movedId = await insertOld({ workspaceId: defaultWorkspace, traceId, requestBody: keptBody, responseBody: null });
    // A check the refused row's part fails (23514, a data error), the others pass.
    await sql(`alter table log_body_parts add constraint backfill_test_refuses check (body::text not like '%${refused}%') not valid`);
    try {
      expect(await backfill.run()).toEqual({ rows: 1, parts: 1, keptWhole: 1 });
    } finally {
      await sql(`alter table log_body_parts drop constraint backfill_test_refuses`);
    }
    expect(await storedAs(refusedId)).toMatchObject({ split: false, body_bytes: expect.any(Number) });
    expect(await storedAs(movedId)).toMatchObject({ split: true });
    expect((await call(gateway, `/v1/logs/${refusedId}`)).body.request_body).toEqual(refusedBody);
    expect((await call(gateway, `/v1/logs/${movedId}`)).body.request_body).toEqual(keptBody);
    expect(await searchBothPlans(refused)).toEqual([[refusedId], [refusedId]]);
    expect(await backfill.run()).toEqual({ rows: 0, parts: 0, keptWhole: 0 });
  });

  describe('a row another transaction holds', () => {
    /** An old row, and a connection holding it locked (as a long transaction would) until `release`. */
    async function lockedOldRow(): Promise<{ id: string; body: unknown; release: () => Promise<void> }> {
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `${word('locked')}: a message long enough to be a part of its own.` }] };
      const id = await insertOld({ workspaceId: defaultWorkspace, traceId: word('trace'), requestBody: body, responseBody: null });
      const other = new Client({ connectionString: gateway.databaseUrl });
      await other.connect();
      await other.query('begin');
      await other.query('select 1 from request_logs where id = $1 for update', [id]);
      return { id, body, release: () => other.query('rollback').then(() => other.end()) };
    }

    it('is waited for a moment at a time, and the batch tried again once it is free', async () => {
      const { id, body, release } = await lockedOldRow();
      const pass = backfill.run();
      await new Promise((resolve) => setTimeout(resolve, 700)); // past one lock timeout
      await release();
      expect(await pass).toMatchObject({ rows: 1 });
      expect((await call(gateway, `/v1/logs/${id}`)).body.request_body).toEqual(body);
    });

    it('held for long, the pass gives up (the next one moves it) instead of waiting', async () => {
      const { id, body, release } = await lockedOldRow();
      try {
        const started = Date.now();
        expect(await backfill.run()).toBeNull();
        expect(Date.now() - started).toBeLessThan(15_000);
      } finally {
        await release();
      }
      expect(await storedAs(id)).toMatchObject({ split: false, body_bytes: null });
      expect(await backfill.run()).toMatchObject({ rows: 1 });
      expect((await call(gateway, `/v1/logs/${id}`)).body.request_body).toEqual(body);
    });
  });

  it('runs on one instance at a time', async () => {
    const id = await insertOld({
      workspaceId: defaultWorkspace,
      traceId: word('trace'),
      requestBody: { messages: [{ role: 'user', content: 'Another instance moves this one, not this backfill.' }] },
      responseBody: null,
    });
    const other = new Client({ connectionString: gateway.databaseUrl });
    await other.connect();
    try {
      await other.query('select pg_advisory_lock(7305118003)');
      expect(await backfill.run()).toBeNull();
      expect(await storedAs(id)).toMatchObject({ body_bytes: null });
    } finally {
      await other.end();
    }
    expect(await backfill.run()).toMatchObject({ rows: 1 });
  });

  it('stops between batches at shutdown: the batch under way is finished, the rest waits for the next pass', async () => {
    const traceId = word('trace');
    const total = 2_000;
    await sql(
      `insert into request_logs (id, workspace_id, trace_id, created_at, operation, status_code, latency_ms, request_body)
       select gen_random_uuid(), $1, $2, now() - make_interval(secs => i), 'chat.completions', 200, 10,
         jsonb_build_object('messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content', 'Message ' || i || ' of many, long enough to be a part of its own.')))
       from generate_series(1, $3::int) as i`,
      [defaultWorkspace, traceId, total],
    );
    const movedCount = async () => (await sql(`select count(*)::int as n from request_logs where trace_id = $1 and body_bytes is not null`, [traceId]))[0].n;
    const stopped = backfillWith({ LOG_BODY_BACKFILL: true });
    const pass = stopped.run();
    await waitFor(async () => (await movedCount()) > 0, 10_000);
    await stopped.beforeApplicationShutdown();
    const report = await pass;
    // Whole batches only (each is one statement), and not all of them.
    expect(report!.rows).toBeGreaterThan(0);
    expect(report!.rows).toBeLessThan(total);
    expect(report!.rows % 200).toBe(0);
    expect(await movedCount()).toBe(report!.rows);
    expect(await stopped.run()).toEqual({ rows: 0, parts: 0, keptWhole: 0 });

    expect(await backfill.run()).toMatchObject({ rows: total - report!.rows });
    expect(await movedCount()).toBe(total);
  }, 60_000);

  describe('LOG_BODY_BACKFILL', () => {
    it('is on by default; false turns it off', () => {
      const base = { DATA_DIR: '/tmp' };
      expect(validateEnvironment(base).LOG_BODY_BACKFILL).toBe(true);
      expect(validateEnvironment({ ...base, LOG_BODY_BACKFILL: 'false' }).LOG_BODY_BACKFILL).toBe(false);
    });

    it('false: no pass at start-up or later; true: a pass at start-up', async () => {
      const id = await insertOld({
        workspaceId: defaultWorkspace,
        traceId: word('trace'),
        requestBody: { messages: [{ role: 'user', content: 'Moved at start-up only when the backfill is on.' }] },
        responseBody: null,
      });
      const off = backfillWith({ LOG_BODY_BACKFILL: false });
      const offRun = jest.spyOn(off, 'run');
      off.onApplicationBootstrap();
      await off.beforeApplicationShutdown();
      expect(offRun).not.toHaveBeenCalled();
      expect(await storedAs(id)).toMatchObject({ body_bytes: null });

      const on = backfillWith({ LOG_BODY_BACKFILL: true });
      const onRun = jest.spyOn(on, 'run');
      on.onApplicationBootstrap();
      expect(onRun).toHaveBeenCalledTimes(1);
      await on.run(); // joins the start-up pass
      await on.beforeApplicationShutdown();
      expect(await storedAs(id)).toMatchObject({ split: true });
    });
  });
});
