/**
 * Log bodies stored as parts (issue 33, CONTRACT section 14), driven as clients drive the
 * gateway: the recorded Claude Code and Codex requests of test/fixtures/clients/ sent with
 * the official `@anthropic-ai/sdk` and `openai` clients. The suite checks that
 *
 * - GET /v1/logs/{id}, the list with bodies and the JSON and CSV exports give back the
 *   bodies as sent and answered, though the row keeps only their skeleton;
 * - what a session resends (system prompt, tools, earlier messages) is stored once
 *   (log_body_parts), and GET /v1/logs/storage shows far fewer bytes stored than received;
 * - each workspace has its own parts, reads keep the role rules, the storage report is
 *   for admins only;
 * - a secret in a message is redacted before the part is hashed: no part holds it;
 * - search finds a word in a part, AND and `-word` over all of a row's parts, a phrase
 *   within one part (both search plans);
 * - a part that is gone reads `{"_missing_part": "<hash>"}` in its place, never a 500;
 * - hostile bodies (20,000 messages, 6,000 part-sized ones, the deepest nesting the
 *   gateway takes) are logged and read back whole;
 * - retention frees the parts only dropped rows referenced and keeps those of kept rows;
 *   deleting a workspace frees its parts;
 * - rows written before parts existed read (and are found) as before;
 * - a request logged while PostgreSQL is unreachable reads back whole once it is back.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { ConfigService } from '@nestjs/config';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { uuidv7 } from '../../src/common/ids';
import type { Environment } from '../../src/config/environment';
import { LogPartitionMaintainer } from '../../src/modules/logging/log-partition-maintainer';
import { PartStore } from '../../src/modules/logging/body-parts/part-store';
import { LogWriter } from '../../src/modules/logging/log-writer';
import { LogsService } from '../../src/modules/logging/logs.service';
import { call, createVirtualKey, openai, parseCsv, sleep, waitFor } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTcpProxy, TcpProxy } from '../support/tcp-proxy';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

interface RecordedRequest {
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
}
const recorded = (file: string): RecordedRequest[] => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'clients', file), 'utf8')).requests;
/** Two turns of one Claude Code session (the second carries the Bash tool_use and its tool_result), streamed. */
const CLAUDE_CODE = recorded('claude-code-tool.json');
/** Two turns of one Codex session on /v1/responses (the second carries the exec_command call and its output), streamed. */
const CODEX = recorded('codex-tool.json');

const DAY_MS = 86_400_000;
const dayOf = (time: number) => new Date(time).toISOString().slice(0, 10);
/** A part's key: the first 128 bits of the SHA-256 of its JSON text, as a UUID. */
const sha256 = (value: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(value))
    .digest('hex')
    .slice(0, 32)
    .replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
const clone = <T>(value: T): T => structuredClone(value);
/** A word no other request of the run contains (letters only: one token for the search). */
const word = (label: string) =>
  `${label}${randomBytes(6)
    .toString('hex')
    .replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)])}`;

/** Claude Code's second turn with a text block added to its first user message. */
function claudeTurnWith(text: string): Record<string, any> {
  const body = clone(CLAUDE_CODE[1].body);
  body.messages[0].content.push({ type: 'text', text });
  return body;
}

/** Codex's second turn with one more user message at the end. */
function codexTurnWith(text: string): Record<string, any> {
  const body = clone(CODEX[1].body);
  body.input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
  return body;
}

/** Nesting of a JSON value counted as opening brackets, as the gateway's body parser counts it. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

describe('log bodies stored as parts', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => gateway.dataSource.query(text, params);
  /** The row's part references, in order. */
  const partHashesOf = async (id: string): Promise<string[]> =>
    (
      await sql<{ hash: string }>(`select h::text as hash from request_logs, unnest(part_hashes) with ordinality as u(h, n) where id = $1 order by n`, [id])
    ).map((row) => row.hash);
  /** The parts stored for a workspace: key → bytes. */
  const partsOf = async (workspaceId: string): Promise<Map<string, number>> =>
    new Map(
      (await sql<{ hash: string; bytes: number }>(`select hash::text as hash, bytes from log_body_parts where workspace_id = $1`, [workspaceId])).map((row) => [
        row.hash,
        row.bytes,
      ]),
    );
  const defaultWorkspace = async () => (await sql<{ id: string }>(`select id from workspaces where slug = 'default'`))[0].id;

  interface Route {
    /** x-gateway-api-key (default: the bootstrap admin key). */
    apiKey?: string;
    virtualKey?: string;
    traceId?: string;
  }
  const routing = (route: Route, fallbackKey: string) => ({
    'x-gateway-virtual-key': route.virtualKey ?? fallbackKey,
    ...(route.traceId ? { 'x-gateway-trace-id': route.traceId } : {}),
  });

  /** A Claude Code body sent as Claude Code sends it (beta Messages API, its anthropic-beta header); the request id. */
  async function sendClaudeCode(body: Record<string, any>, route: Route = {}): Promise<string> {
    const client = new Anthropic({
      baseURL: gateway.url,
      apiKey: 'dummy-key',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': route.apiKey ?? gateway.adminKey,
        'anthropic-beta': CLAUDE_CODE[1].headers['anthropic-beta'],
        ...routing(route, 'anthropic-prod'),
      },
    });
    const { data, response } = await client.beta.messages.create(body as any).withResponse();
    if (body.stream) for await (const _event of data as unknown as AsyncIterable<unknown>);
    return response.headers.get('x-gateway-request-id')!;
  }

  /** A Codex body sent with the OpenAI SDK's responses.create, streamed when it says so; the request id. */
  async function sendCodex(body: Record<string, any>, route: Route = {}): Promise<string> {
    const client = openai(gateway, routing(route, 'openai-prod'), 'unused', route.apiKey ?? gateway.adminKey);
    const { data, response } = await client.responses.create(body as any).withResponse();
    if (body.stream) for await (const _event of data as unknown as AsyncIterable<unknown>);
    return response.headers.get('x-gateway-request-id')!;
  }

  /** GET /v1/logs/{id} (after the queue is flushed), expecting 200. */
  async function readLog(id: string, apiKey = gateway.adminKey): Promise<any> {
    await gateway.flushLogs();
    const response = await call(gateway, `/v1/logs/${id}`, { apiKey });
    expect(response.status).toBe(200);
    return response.body;
  }

  /** The rows of a log list or JSON export (query string after `?`), by id. */
  async function listed(path: string, apiKey = gateway.adminKey): Promise<Map<string, any>> {
    const response = await call(gateway, path, { apiKey });
    expect(response.status).toBe(200);
    const rows: any[] = Array.isArray(response.body) ? response.body : response.body.data;
    return new Map(rows.map((row) => [row.id, row]));
  }

  /** The ids a search finds (`q`), newest first, with the plan the list picks and straight through the index. */
  async function searchBothPlans(q: string): Promise<string[][]> {
    const logs = gateway.app.get(LogsService);
    const found: string[][] = [];
    const walk = logs.searchWalkMs;
    try {
      for (const walkMs of [walk, 0]) {
        logs.searchWalkMs = walkMs;
        const page = await listed(`/v1/logs?include_bodies=false&limit=50&q=${encodeURIComponent(q)}`);
        found.push([...page.keys()]);
      }
    } finally {
      logs.searchWalkMs = walk;
    }
    return found;
  }

  interface Workspace {
    id: string;
    slug: string;
    keys: Record<'admin' | 'member' | 'member2' | 'viewer', { id: string; key: string }>;
  }

  /** A workspace with a key of each role and its own Anthropic and OpenAI virtual keys (anthropic-team, openai-team). */
  async function workspaceWithKeys(slug: string): Promise<Workspace> {
    const created = await admin(gateway, 'POST', '/v1/workspaces', { name: slug, slug });
    expect(created.status).toBe(201);
    const keys = {} as Workspace['keys'];
    for (const name of ['admin', 'member', 'member2', 'viewer'] as const) {
      const key = await admin(gateway, 'POST', '/v1/api-keys', { name: `${slug} ${name}`, workspace: slug, role: name === 'member2' ? 'member' : name });
      expect(key.status).toBe(201);
      keys[name] = key.body;
    }
    for (const [vk, provider] of [
      ['anthropic-team', 'anthropic'],
      ['openai-team', 'openai'],
    ]) {
      const made = await call(gateway, '/v1/virtual-keys', {
        apiKey: keys.admin.key,
        body: { name: vk, slug: vk, provider, key: `sk-${slug}-${provider}`, custom_host: `${mock.url}/v1` },
      });
      expect(made.status).toBe(201);
    }
    return { id: created.body.id, slug, keys };
  }

  const maintainer = (env: Partial<Environment>) =>
    new LogPartitionMaintainer(gateway.dataSource, gateway.app.get(PartStore), { get: (name: keyof Environment) => env[name] } as unknown as ConfigService<
      Environment,
      true
    >);

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await gateway.app.get(LogPartitionMaintainer).run(); // the start-up pass, joined
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: 'sk-ant-parts-000000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-parts-000000', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  describe('round trip', () => {
    it.each([
      ['Claude Code', CLAUDE_CODE, 'messages'],
      ['Codex', CODEX, 'input'],
    ] as const)('%s: both turns read back as sent from GET /v1/logs/{id}, the list and the JSON and CSV exports', async (client, turns, conversation) => {
      const traceId = word('trace');
      const send = client === 'Codex' ? sendCodex : sendClaudeCode;
      const ids: string[] = [];
      for (const turn of turns) ids.push(await send(turn.body, { traceId }));
      await gateway.flushLogs();

      const list = await listed(`/v1/logs?include_bodies=true&trace_id=${traceId}`);
      const json = await listed(`/v1/logs/export?format=json&include_bodies=true&trace_id=${traceId}`);
      const csv = parseCsv((await call(gateway, `/v1/logs/export?format=csv&include_bodies=true&trace_id=${traceId}`)).text);
      const csvRows = new Map(csv.slice(1).map((cells) => [cells[csv[0].indexOf('id')], cells]));
      expect([list.size, json.size, csvRows.size]).toEqual([2, 2, 2]);

      for (const [turn, id] of ids.entries()) {
        const sent = turns[turn].body;
        const log = await readLog(id);
        expect(log.request_body).toEqual(sent);
        expect(log.response_body).toEqual(expect.any(Object));
        for (const read of [list.get(id), json.get(id)])
          expect({ request_body: read.request_body, response_body: read.response_body }).toEqual({ request_body: sent, response_body: log.response_body });
        const cells = csvRows.get(id)!;
        expect(JSON.parse(cells[csv[0].indexOf('request_body')])).toEqual(sent);
        expect(JSON.parse(cells[csv[0].indexOf('response_body')])).toEqual(log.response_body);

        // Stored as parts indeed: the row holds a small skeleton and references each message and the tools.
        const [row] = await sql(`select octet_length(request_body::text) as skeleton, body_bytes from request_logs where id = $1`, [id]);
        expect(row.body_bytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(sent)));
        expect(row.skeleton).toBeLessThan(Buffer.byteLength(JSON.stringify(sent)) / 10);
        const hashes = await partHashesOf(id);
        expect(hashes).toEqual(expect.arrayContaining([sha256(sent.tools), ...sent[conversation].map(sha256)]));
      }
    });

    it('an answer read back equals what the client received (Codex and Claude Code, not streamed)', async () => {
      const codex = await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' })
        .responses.create({ ...codexTurnWith(word('answer')), stream: false } as any)
        .asResponse();
      const codexAnswer: any = await codex.json();
      expect(codexAnswer.output.length).toBeGreaterThan(0);
      const codexLog = await readLog(codex.headers.get('x-gateway-request-id')!);
      expect(codexLog.response_body).toEqual(codexAnswer);

      // The mock echoes a last user text that starts with "echo:": an answer block long enough to be a part.
      const echoed = `echo: ${word('long')} ${'and so on '.repeat(20)}`;
      const body: Record<string, any> = { ...clone(CLAUDE_CODE[0].body), stream: false, max_tokens: 4096 };
      body.messages.push({ role: 'user', content: echoed });
      const claude = new Anthropic({
        baseURL: gateway.url,
        apiKey: 'dummy-key',
        maxRetries: 0,
        defaultHeaders: {
          'x-gateway-api-key': gateway.adminKey,
          'x-gateway-virtual-key': 'anthropic-prod',
          'anthropic-beta': CLAUDE_CODE[0].headers['anthropic-beta'],
        },
      });
      const response = await claude.beta.messages.create(body as any).asResponse();
      const answer: any = await response.json();
      expect(JSON.stringify(answer.content)).toContain(echoed.slice(6).trim());
      const id = response.headers.get('x-gateway-request-id')!;
      const log = await readLog(id);
      expect(log.request_body).toEqual(body);
      expect(log.response_body).toEqual(answer);
      expect(await partHashesOf(id)).toEqual(expect.arrayContaining(answer.content.map(sha256)));
    });
  });

  it('a system prompt or instructions given as one string is a part and reads back as sent', async () => {
    const prompt = `You are a terse assistant; ${word('prompt')} is the project, and this prompt is one plain string long enough to be a part.`;
    const claude = new Anthropic({
      baseURL: gateway.url,
      apiKey: 'dummy-key',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'anthropic-prod' },
    });
    const messagesBody = { model: 'claude-opus-5-5', max_tokens: 100, system: prompt, messages: [{ role: 'user' as const, content: 'hi' }] };
    const responsesBody = { model: 'gpt-5.5', instructions: prompt, input: 'hi' };
    const sent = [
      [messagesBody, (await claude.messages.create(messagesBody).withResponse()).response],
      [responsesBody, (await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' }).responses.create(responsesBody).withResponse()).response],
    ] as const;
    for (const [body, response] of sent) {
      const id = response.headers.get('x-gateway-request-id')!;
      expect((await readLog(id)).request_body).toEqual(body);
      expect(await partHashesOf(id)).toContain(sha256(prompt));
    }
  });

  describe('one session, stored once', () => {
    it("Claude Code's system prompt, tools and earlier messages are stored once; the second turn stores only its new messages and answer", async () => {
      const session = await workspaceWithKeys('session');
      const route = () => ({ apiKey: session.keys.admin.key, virtualKey: 'anthropic-team' });
      const [first, second] = CLAUDE_CODE;
      const firstId = await sendClaudeCode(first.body, route());
      await gateway.flushLogs();
      const before = await partsOf(session.id);
      const secondId = await sendClaudeCode(second.body, route());
      await gateway.flushLogs();
      const after = await partsOf(session.id);

      // One row each for the tools and the system prompt, whose hash both turns reference.
      for (const field of ['tools', 'system']) {
        const stored = await sql(`select hash::text as hash from log_body_parts where workspace_id = $1 and body = $2::jsonb`, [
          session.id,
          JSON.stringify(second.body[field]),
        ]);
        expect(stored).toEqual([{ hash: sha256(second.body[field]) }]);
        expect(await partHashesOf(firstId)).toContain(stored[0].hash);
        expect(await partHashesOf(secondId)).toContain(stored[0].hash);
      }
      // What the second turn resends as it was (tools, system prompt, its first message; Claude Code rewrites its environment message) is not stored again.
      const partsOfBody = (body: Record<string, any>) => [body.tools, body.system, ...body.messages].map(sha256);
      const resent = partsOfBody(second.body).filter((hash) => partsOfBody(first.body).includes(hash));
      const fresh = partsOfBody(second.body).filter((hash) => !resent.includes(hash));
      expect(resent).toEqual(expect.arrayContaining([sha256(second.body.tools), sha256(second.body.system)]));
      const added = [...after.keys()].filter((hash) => !before.has(hash));
      expect(added).toEqual(expect.arrayContaining(fresh));
      for (const hash of resent) expect(added).not.toContain(hash);
      const addedBytes = added.reduce((sum, hash) => sum + after.get(hash)!, 0);
      const [{ body_bytes: secondBytes }] = await sql(`select body_bytes from request_logs where id = $1`, [secondId]);
      expect(addedBytes).toBeLessThan(secondBytes / 3);
    });

    it('GET /v1/logs/storage: rows, parts and bytes of the workspace, far fewer bytes stored than received', async () => {
      // Four turns of a session in a workspace of their own, the last two resending the conversation as an agent loop does.
      const storing = await workspaceWithKeys('storage');
      const turns = [CLAUDE_CODE[0].body, CLAUDE_CODE[1].body, CLAUDE_CODE[1].body, CLAUDE_CODE[1].body];
      for (const body of turns) await sendClaudeCode(body, { apiKey: storing.keys.admin.key, virtualKey: 'anthropic-team' });
      await gateway.flushLogs();

      const yesterday = () => Math.floor(Date.now() / DAY_MS - 1) * DAY_MS;
      const sinceBefore = yesterday();
      const storage = await call(gateway, '/v1/logs/storage?days=2', { apiKey: storing.keys.admin.key });
      expect(storage.status).toBe(200);
      const { object, since, total, data } = storage.body;
      expect(object).toBe('log_storage');
      expect([sinceBefore, yesterday()]).toContain(Date.parse(since)); // the start of yesterday (UTC), even across midnight
      const [counts] = await sql(`select (select count(*)::int from log_body_parts where workspace_id = $1) as parts`, [storing.id]);
      expect(total).toMatchObject({ rows: 4, parts: counts.parts });
      const sentBytes = turns.reduce((sum, body) => sum + Buffer.byteLength(JSON.stringify(body)), 0);
      expect(total.bytes_received).toBeGreaterThanOrEqual(sentBytes);
      expect(total.bytes_received).toBeLessThan(sentBytes * 1.5);
      expect(total.bytes_stored).toBeGreaterThan(0);
      expect(total.bytes_stored).toBeLessThan(total.bytes_received / 2);
      // The days add up to the total.
      expect(data.map((day: any) => day.day)).toEqual(expect.arrayContaining([dayOf(Date.now())]));
      for (const field of ['rows', 'parts', 'bytes_received', 'bytes_stored'])
        expect(data.reduce((sum: number, day: any) => sum + day[field], 0)).toBe(total[field]);
    });
  });

  describe('workspaces and roles', () => {
    let teamA: Workspace;
    let teamB: Workspace;
    const route = (key: { key: string }) => ({ apiKey: key.key, virtualKey: 'anthropic-team' });

    beforeAll(async () => {
      teamA = await workspaceWithKeys('team-a');
      teamB = await workspaceWithKeys('team-b');
    });

    it('the same body sent from two workspaces is stored as parts in each; neither reads the other', async () => {
      const body = CLAUDE_CODE[0].body;
      const idA = await sendClaudeCode(body, route(teamA.keys.member));
      const idB = await sendClaudeCode(body, route(teamB.keys.member));
      await gateway.flushLogs();
      const [partsA, partsB] = [await partsOf(teamA.id), await partsOf(teamB.id)];
      expect([...partsA.keys()]).toEqual(expect.arrayContaining(await partHashesOf(idA)));
      expect([...partsB.keys()]).toEqual(expect.arrayContaining(await partHashesOf(idB)));
      expect(
        await sql(`select workspace_id from log_body_parts where hash = $1::uuid and workspace_id in ($2, $3) order by 1`, [
          sha256(body.tools),
          teamA.id,
          teamB.id,
        ]),
      ).toEqual([{ workspace_id: teamA.id }, { workspace_id: teamB.id }].sort((a, b) => a.workspace_id.localeCompare(b.workspace_id)));

      expect((await readLog(idA, teamA.keys.admin.key)).request_body).toEqual(body);
      expect((await readLog(idB, teamB.keys.admin.key)).request_body).toEqual(body);
      expect((await call(gateway, `/v1/logs/${idA}`, { apiKey: teamB.keys.admin.key })).status).toBe(404);
      expect((await call(gateway, `/v1/logs/${idB}`, { apiKey: teamA.keys.admin.key })).status).toBe(404);
    });

    it("a member reads its own requests whole and not another key's; a viewer reads the workspace's", async () => {
      const body = CLAUDE_CODE[1].body;
      const own = await sendClaudeCode(body, route(teamA.keys.member));
      const other = await sendClaudeCode(body, route(teamA.keys.member2));
      expect((await readLog(own, teamA.keys.member.key)).request_body).toEqual(body);
      expect((await call(gateway, `/v1/logs/${other}`, { apiKey: teamA.keys.member.key })).status).toBe(404);
      expect((await readLog(other, teamA.keys.member2.key)).request_body).toEqual(body);
      expect((await readLog(other, teamA.keys.viewer.key)).request_body).toEqual(body);
      const mine = await listed('/v1/logs?include_bodies=true', teamA.keys.member.key);
      expect(mine.has(other)).toBe(false);
      expect(mine.get(own).request_body).toEqual(body);
    });

    it('GET /v1/logs/storage is 403 for members and viewers, and an admin sees only its workspace', async () => {
      for (const role of ['member', 'viewer'] as const) {
        const refused = await call(gateway, '/v1/logs/storage', { apiKey: teamA.keys[role].key });
        expect({ role, status: refused.status, type: refused.body?.error?.type }).toEqual({ role, status: 403, type: 'permission_error' });
      }
      await gateway.flushLogs();
      const storage = await call(gateway, '/v1/logs/storage?days=2', { apiKey: teamB.keys.admin.key });
      expect(storage.status).toBe(200);
      const [counts] = await sql(
        `select (select count(*)::int from request_logs where workspace_id = $1) as rows, (select count(*)::int from log_body_parts where workspace_id = $1) as parts`,
        [teamB.id],
      );
      expect(storage.body.total).toMatchObject(counts);
    });
  });

  it('a secret field in a message is redacted before its part is hashed: no part holds it, and the log reads [REDACTED]', async () => {
    const withSecret = (secret: string) => {
      const body = clone(CLAUDE_CODE[1].body);
      body.messages[2].content[0].input.env = { api_key: secret, region: 'eu' };
      return body;
    };
    const ids = [await sendClaudeCode(withSecret(`sk-secret-${word('one')}`)), await sendClaudeCode(withSecret(`sk-secret-${word('two')}`))];
    await gateway.flushLogs();

    expect(await sql(`select count(*)::int as n from log_body_parts where body::text like '%sk-secret%'`)).toEqual([{ n: 0 }]);
    expect(await sql(`select count(*)::int as n from request_logs where concat(request_body::text, response_body::text) like '%sk-secret%'`)).toEqual([
      { n: 0 },
    ]);
    const expected = withSecret('[REDACTED]');
    for (const id of ids) {
      expect((await readLog(id)).request_body).toEqual(expected);
      // Both secrets redacted the same: the message is one part, under the hash of its redacted text.
      expect(await partHashesOf(id)).toContain(sha256(expected.messages[2]));
    }
  });

  describe('search', () => {
    const [TOOL, SYS, MSG, P1, P2, ASKED, ANSWERED, LINE, TABBED] = ['tool', 'sys', 'msg', 'one', 'two', 'asked', 'answered', 'line', 'tabbed'].map(word);
    let withAll: string;
    let withoutSys: string;
    let answered: string;

    beforeAll(async () => {
      // withAll: MSG in its first message, SYS in its system prompt, TOOL and the phrase "P1 P2" in its tool_result.
      const a = claudeTurnWith(`Please look at ${MSG} first.`);
      a.system.push({ type: 'text', text: `The project is code-named ${SYS}.` });
      a.messages[3].content[0].content = `${TOOL} printed ${P1} ${P2}\n${LINE} starts a line\t${TABBED} follows a tab`;
      // withoutSys: MSG too, the system prompt as recorded, the words of the phrase the other way round.
      const b = claudeTurnWith(`Please look at ${MSG} first.`);
      b.messages[3].content[0].content = `printed ${P2} ${P1}`;
      // answered: the mock echoes a last user text that starts with "echo:", so ANSWERED is in a part of the answer.
      const c = clone(CLAUDE_CODE[0].body);
      c.messages.push({ role: 'user', content: [{ type: 'text', text: `echo: ${ANSWERED} is the word you asked for, said back in full.` }] });
      c.messages[0].content.push({ type: 'text', text: `Please say ${ASKED} back.` });
      withAll = await sendClaudeCode(a);
      withoutSys = await sendClaudeCode(b);
      answered = await sendClaudeCode(c);
      await gateway.flushLogs();
      expect(JSON.stringify((await readLog(answered)).response_body)).toContain(ANSWERED);
      // Each word is in a part, not in the row's own skeleton.
      expect(
        await sql(`select count(*)::int as n from request_logs where id in ($1, $2) and request_body::text ~ $3`, [
          withAll,
          withoutSys,
          `${TOOL}|${SYS}|${MSG}|${P1}`,
        ]),
      ).toEqual([{ n: 0 }]);
    });

    it.each([
      ['a word only in one tool_result part', () => TOOL, () => [withAll]],
      ['a word of one message, in both rows', () => MSG, () => [withoutSys, withAll]],
      ['two words of two parts (a message and the system prompt): AND across parts', () => `${MSG} ${SYS}`, () => [withAll]],
      ['a word and -another found in another part of the row: excluded', () => `"${MSG}" -${SYS}`, () => [withoutSys]],
      ['a phrase within one part', () => `"${P1} ${P2}"`, () => [withAll]],
      ['the same words in the other order', () => `"${P2} ${P1}"`, () => [withoutSys]],
      ["a word of the row's own fields (the model) and a word of a part", () => `${TOOL} opus`, () => [withAll]],
      ['a word of a request part and a word of an answer part', () => `${ASKED} ${ANSWERED}`, () => [answered]],
      ['words right after a newline and a tab in a tool output (JSON escapes are not words)', () => `${LINE} ${TABBED}`, () => [withAll]],
    ])('%s', async (_name, query, expected) => {
      const [walked, indexed] = await searchBothPlans(query());
      expect(walked).toEqual(expected());
      expect(indexed).toEqual(expected());
    });

    it('a query an attacker writes (quotes, parentheses, operators, backslashes, only punctuation, 500 characters) is read as words: 200, never 500', async () => {
      const hostile = [
        `'${TOOL}' & !(`,
        `(${TOOL}) <-> ) | ( -`,
        `"${MSG}" -"${SYS}" or (${TOOL}`,
        `a\\' & b''c | !!d`,
        `'''`,
        `!!!`,
        `-${TOOL}`,
        `<-> & | ! ( )`,
        `${TOOL} ${'x('.repeat(240)}`,
        `"${MSG}" "${P1} -${P2}" or -(${SYS} | ${TOOL})`,
      ];
      for (const q of hostile) {
        const found = await call(gateway, `/v1/logs?include_bodies=false&q=${encodeURIComponent(q)}`);
        expect({ q, status: found.status, list: Array.isArray(found.body?.data) }).toEqual({ q, status: 200, list: true });
      }
      // `-word` alone keeps every row but those with the word anywhere, parts included.
      const { data } = (await call(gateway, `/v1/logs?include_bodies=false&limit=200&q=${encodeURIComponent(`-${TOOL}`)}`)).body;
      const ids = data.map((row: any) => row.id);
      expect(ids).not.toContain(withAll);
      expect(ids).toEqual(expect.arrayContaining([withoutSys, answered]));
    });

    it('a row whose parts hold more distinct words than one tsvector takes (1 MB) does not break AND and -word searches', async () => {
      const [FIRST, LAST, ABSENT] = ['first', 'last', 'absent'].map(word);
      // 14 messages of 7,000 distinct 12-letter words each: about 1.2 MB of words, each message a part under 100,000 characters.
      const messages = Array.from({ length: 14 }, (_, i) => ({
        role: i % 2 ? ('assistant' as const) : ('user' as const),
        content: Array.from({ length: 7_000 }, () => word('').slice(0, 12)).join(' '),
      }));
      messages[0].content = `${FIRST} ${messages[0].content}`;
      messages[13].content = `${LAST} ${messages[13].content}`;
      const { response } = await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' })
        .chat.completions.create({ model: 'gpt-4o-mini', messages })
        .withResponse();
      const id = response.headers.get('x-gateway-request-id')!;
      await gateway.flushLogs();
      try {
        for (const q of [FIRST, `${FIRST} ${LAST}`, `${FIRST} -${ABSENT}`]) {
          const found = await call(gateway, `/v1/logs?include_bodies=false&q=${encodeURIComponent(q)}`);
          expect({ q, status: found.status, ids: found.body?.data?.map((row: any) => row.id) ?? found.body }).toEqual({ q, status: 200, ids: [id] });
        }
      } finally {
        // Gone again, whatever the outcome: the other searches of this suite read the whole log.
        await sql(`delete from request_logs where id = $1`, [id]);
      }
    }, 60_000);
  });

  it('a part gone from the store reads {"_missing_part": "<hash>"} in its place, the rest whole, in every read', async () => {
    const body = codexTurnWith(`Soon gone: ${word('gone')}, a message long enough to be a part.`);
    const traceId = word('trace');
    const id = await sendCodex(body, { traceId });
    await gateway.flushLogs();
    const last = body.input.length - 1;
    const hash = sha256(body.input[last]);
    expect(await partHashesOf(id)).toContain(hash);
    const [deleted] = await sql(`delete from log_body_parts where workspace_id = $1 and hash = $2::uuid returning 1`, [await defaultWorkspace(), hash]);
    expect(deleted).toBeDefined();

    const expected = clone(body);
    expected.input[last] = { _missing_part: hash };
    expect((await readLog(id)).request_body).toEqual(expected);
    expect((await listed(`/v1/logs?include_bodies=true&trace_id=${traceId}`)).get(id).request_body).toEqual(expected);
    expect((await listed(`/v1/logs/export?format=json&include_bodies=true&trace_id=${traceId}`)).get(id).request_body).toEqual(expected);
  });

  describe('hostile bodies', () => {
    const chatRoundTrip = async (messages: { role: 'user' | 'assistant'; content: string }[]) => {
      const { data, response } = await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' })
        .chat.completions.create({ model: 'gpt-4o-mini', messages })
        .withResponse();
      expect(data.choices[0].message.content).toBe('Hello from mock');
      const id = response.headers.get('x-gateway-request-id')!;
      const log = await readLog(id);
      expect(log.request_body).toEqual({ model: 'gpt-4o-mini', messages });
      return id;
    };
    const conversation = (count: number, text: (i: number) => string) =>
      Array.from({ length: count }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: text(i) }));

    it('20,000 tiny messages are logged and read back whole', async () => {
      await chatRoundTrip(conversation(20_001, (i) => `m${i}`));
    }, 60_000);

    it('6,000 messages of about 100 bytes (more parts than a body keeps) are logged and read back whole', async () => {
      const messages = conversation(6_001, (i) => `message ${i} ${'of a long conversation '.repeat(3)}`);
      expect(JSON.stringify(messages[0]).length).toBeGreaterThan(90);
      const id = await chatRoundTrip(messages);
      const hashes = await partHashesOf(id);
      expect(hashes.length).toBeGreaterThan(1_000);
      expect((await listed(`/v1/logs?include_bodies=true&limit=5`)).get(id).request_body.messages).toEqual(messages);
    }, 60_000);

    it('a message PostgreSQL cannot store as it is (NUL, a lone surrogate) is stored made storable (U+FFFD), the same for each request', async () => {
      const text = (replacement: (unstorable: string) => string) =>
        `A NUL ${replacement('\u0000')} and a lone surrogate ${replacement('\udc00')} in a message long enough to be a part.`;
      const messages = [{ role: 'user' as const, content: text((c) => c) }];
      const stored = [{ role: 'user', content: text(() => '\ufffd') }];
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const { response } = await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' })
          .chat.completions.create({ model: 'gpt-4o-mini', messages })
          .withResponse();
        ids.push(response.headers.get('x-gateway-request-id')!);
        await gateway.flushLogs();
      }
      for (const id of ids) expect((await readLog(id)).request_body).toEqual({ model: 'gpt-4o-mini', messages: stored });
      expect(await partHashesOf(ids[1])).toEqual(await partHashesOf(ids[0]));
    });

    it('the same new part carried by concurrent requests (written in one batch) is stored once, and every row reads whole', async () => {
      const body = {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user' as const, content: `All at once: ${word('concurrent')}, a message long enough to be a part.` }],
      };
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' }).chat.completions.create(body).withResponse()),
      );
      await gateway.flushLogs();
      expect(await sql(`select count(*)::int as n from log_body_parts where body = $1::jsonb`, [JSON.stringify(body.messages[0])])).toEqual([{ n: 1 }]);
      for (const { response } of answers) expect((await readLog(response.headers.get('x-gateway-request-id')!)).request_body).toEqual(body);
    });

    it('a message nested as deep as the gateway accepts is logged and read back whole', async () => {
      const body = claudeTurnWith(word('deep'));
      const nest = (levels: number): unknown => (levels === 0 ? 'bottom' : { level: nest(levels - 1) });
      // body › messages › message › content › tool_use block › input: the tree's first level is the 7th.
      body.messages[2].content[0].input.tree = nest(64 - 6);
      expect(depthOf(body)).toBe(64);
      const deeper = clone(body);
      deeper.messages[2].content[0].input.tree = nest(64 - 5);
      expect(
        (await call(gateway, '/v1/messages', { headers: { 'x-gateway-virtual-key': 'anthropic-prod', 'anthropic-version': '2023-06-01' }, body: deeper }))
          .status,
      ).toBe(400);
      const id = await sendClaudeCode(body);
      expect((await readLog(id)).request_body).toEqual(body);
      expect(await partHashesOf(id)).toContain(sha256(body.messages[2]));
    });
  });

  describe('retention and deleted workspaces', () => {
    const RETENTION_DAYS = 30;

    /** Moves the only row of a workspace back `days` (into that day's partition), and the workspace's parts with it, as if it had been logged then; that day. */
    async function age(id: string, workspaceId: string, days: number): Promise<string> {
      const [{ day }] = await sql(
        `select to_char((created_at - make_interval(days => $2)) at time zone 'UTC', 'YYYY-MM-DD') as day from request_logs where id = $1`,
        [id, days],
      );
      await sql(`select request_logs_create_partition($1::date)`, [day]);
      await sql(`update request_logs set created_at = created_at - make_interval(days => $2) where id = $1`, [id, days]);
      await sql(
        `update log_body_parts set last_seen_day = last_seen_day - $2::int, first_seen_at = first_seen_at - make_interval(days => $2) where workspace_id = $1`,
        [workspaceId, days],
      );
      // The writer's memory of parts stored today would not hold these on the day they were logged.
      gateway.app.get(LogWriter).knownParts.clear();
      return day;
    }

    it('frees the parts only dropped rows referenced; the parts of kept rows stay and read whole', async () => {
      const ws = await workspaceWithKeys('retention');
      const route = { apiKey: ws.keys.admin.key, virtualKey: 'openai-team' };
      const oldBody = codexTurnWith(`An old question: ${word('old')}, long enough to be a part of its own.`);
      const oldId = await sendCodex(oldBody, route);
      await gateway.flushLogs();
      const oldDay = await age(oldId, ws.id, RETENTION_DAYS + 10);
      // Today's turn resends the tools and most messages of the old one.
      const newId = await sendCodex(CODEX[1].body, route);
      await gateway.flushLogs();
      const [oldHashes, newHashes] = [await partHashesOf(oldId), await partHashesOf(newId)];
      const onlyOld = new Set(oldHashes.filter((hash) => !newHashes.includes(hash)));
      expect(onlyOld).toContain(sha256(oldBody.input.at(-1)));
      expect(newHashes).toContain(sha256(CODEX[1].body.tools));

      const report = await maintainer({ LOG_RETENTION_DAYS: RETENTION_DAYS }).run();
      expect(report?.dropped).toContain(oldDay);
      expect(report?.partsFreed).toBe(onlyOld.size);
      expect([...(await partsOf(ws.id)).keys()].sort()).toEqual([...new Set(newHashes)].sort());
      expect((await readLog(newId)).request_body).toEqual(CODEX[1].body);
      expect((await call(gateway, `/v1/logs/${oldId}`)).status).toBe(404);
    });

    it('keeps the parts of rows in a partition it could not drop (locked), so that they still read whole', async () => {
      const ws = await workspaceWithKeys('retention-locked');
      const route = { apiKey: ws.keys.admin.key, virtualKey: 'openai-team' };
      const oldBody = codexTurnWith(`Kept a while longer: ${word('locked')}, long enough to be a part of its own.`);
      const oldId = await sendCodex(oldBody, route);
      await gateway.flushLogs();
      const oldDay = await age(oldId, ws.id, RETENTION_DAYS + 12);

      const reader = new Client({ connectionString: gateway.databaseUrl });
      await reader.connect();
      try {
        // A long export reading that day holds its partition: the drop waits out its lock timeout and is left for the next pass.
        await reader.query(`begin; lock table request_logs_p${oldDay.replace(/-/g, '')} in access share mode`);
        const report = await maintainer({ LOG_RETENTION_DAYS: RETENTION_DAYS }).run();
        expect(report?.dropped).not.toContain(oldDay);
      } finally {
        await reader.query('commit').catch(() => undefined);
        await reader.end();
      }
      const log = await readLog(oldId);
      expect(JSON.stringify(log.request_body)).not.toContain('_missing_part');
      expect(log.request_body).toEqual(oldBody);
    });

    it("deleting a workspace frees its parts on the next pass, and no other workspace's", async () => {
      const doomed = await workspaceWithKeys('doomed');
      const body = codexTurnWith(`Shared by two workspaces: ${word('doomed')}, long enough to be a part.`);
      await sendCodex(body, { apiKey: doomed.keys.member.key, virtualKey: 'openai-team' });
      const kept = await sendCodex(body);
      await gateway.flushLogs();
      const doomedParts = await partsOf(doomed.id);
      expect(doomedParts.has(sha256(body.input.at(-1)))).toBe(true);
      const otherParts = Number((await sql(`select count(*) as n from log_body_parts where workspace_id <> $1`, [doomed.id]))[0].n);

      // An empty workspace only goes: its virtual keys deleted and API keys revoked first.
      for (const vk of ['anthropic-team', 'openai-team'])
        expect((await call(gateway, `/v1/virtual-keys/${vk}`, { method: 'DELETE', apiKey: doomed.keys.admin.key })).status).toBe(200);
      for (const key of Object.values(doomed.keys)) expect((await admin(gateway, 'DELETE', `/v1/api-keys/${key.id}`)).status).toBe(200);
      const deleted = await admin(gateway, 'DELETE', '/v1/workspaces/doomed');
      expect(deleted.status).toBe(200);

      const report = await maintainer({}).run();
      expect(report?.partsFreed).toBe(doomedParts.size);
      expect((await partsOf(doomed.id)).size).toBe(0);
      expect(Number((await sql(`select count(*) as n from log_body_parts where workspace_id <> $1`, [doomed.id]))[0].n)).toBe(otherParts);
      expect((await readLog(kept)).request_body).toEqual(body);
    });
  });

  describe('rows written before parts', () => {
    const word1 = word('before');
    const body = {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are a careful assistant that answers in full sentences, always.' },
        { role: 'user', content: `What does ${word1} mean? Please explain it at length, with examples.` },
      ],
    };
    const answer = {
      id: 'chatcmpl-before',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'It is a word made up for this test, nothing more.' }, finish_reason: 'stop' }],
    };
    let id: string;

    beforeAll(async () => {
      id = uuidv7();
      await sql(
        `insert into request_logs (id, workspace_id, trace_id, created_at, operation, status_code, latency_ms, model, provider, request_body, response_body)
         values ($1, $2, 'before-parts', now(), 'chat.completions', 200, 120, 'gpt-4o-mini', 'openai', $3, $4)`,
        [id, await defaultWorkspace(), JSON.stringify(body), JSON.stringify(answer)],
      );
      expect(await sql(`select part_layout, part_hashes from request_logs where id = $1`, [id])).toEqual([{ part_layout: null, part_hashes: null }]);
    });

    it('read as stored from GET, the list and the export', async () => {
      const reads = [
        await readLog(id),
        (await listed('/v1/logs?include_bodies=true&trace_id=before-parts')).get(id),
        (await listed('/v1/logs/export?format=json&include_bodies=true&trace_id=before-parts')).get(id),
      ];
      for (const read of reads)
        expect({ request_body: read.request_body, response_body: read.response_body }).toEqual({ request_body: body, response_body: answer });
    });

    it('are found by search, alone and with words of the answer', async () => {
      expect(await searchBothPlans(word1)).toEqual([[id], [id]]);
      expect(await searchBothPlans(`${word1} "made up"`)).toEqual([[id], [id]]);
      expect(await searchBothPlans(`${word1} -sentences`)).toEqual([[], []]);
    });
  });
});

describe('log bodies stored as parts, while the database is down', () => {
  let proxy: TcpProxy;
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    const postgres = new URL(process.env.TEST_PG_ADMIN_URL!);
    proxy = await startTcpProxy(postgres.hostname, Number(postgres.port || 5432));
    mock = await startMockUpstream();
    // The smallest memory queue: the records of the outage wait on disk only once it is full.
    gateway = await startTestGateway({ LOG_QUEUE_MAX: '100', LOG_FLUSH_INTERVAL_MS: '50' }, { databaseHost: proxy.address });
    await createVirtualKey(gateway, { slug: 'openai-prod', key: 'sk-outage-parts', custom_host: `${mock.url}/v1` });
  });

  afterEach(async () => {
    await proxy.restore();
  });

  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await gateway?.close();
    await proxy?.close();
    await mock?.close();
  });

  it('a request logged while PostgreSQL is unreachable is journaled with its parts and reads back whole once it is back', async () => {
    const client = openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' });
    const hello = () => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    await hello(); // the keys are cached before the outage
    await gateway.flushLogs();

    await proxy.cut();
    const marker = word('outage');
    const body = codexTurnWith(`Asked while the database was down: ${marker}.`);
    const { data, response } = await client.responses.create(body as any).withResponse();
    for await (const _event of data as unknown as AsyncIterable<unknown>);
    const id = response.headers.get('x-gateway-request-id')!;
    // More records than the memory queue holds: the Codex turn, the oldest, is then on disk only.
    for (let i = 0; i < 12; i++) await Promise.all(Array.from({ length: 10 }, hello));
    expect(gateway.app.get(LogWriter).pending()).toBeLessThanOrEqual(100);
    const journal = readdirSync(gateway.journalDir)
      .map((file) => readFileSync(join(gateway.journalDir, file), 'utf8'))
      .join('');
    expect(journal).toContain(marker);

    await proxy.restore();
    const direct = new Client({ connectionString: gateway.databaseUrl });
    await direct.connect();
    try {
      await waitFor(async () => (await direct.query('select 1 from request_logs where id = $1', [id])).rowCount === 1, 30_000);
    } finally {
      await direct.end();
    }
    await sleep(100);
    const log = await call(gateway, `/v1/logs/${id}`);
    expect(log.status).toBe(200);
    expect(log.body.request_body).toEqual(body);
    expect(log.body.response_body).toEqual(expect.any(Object));
    expect(JSON.stringify(log.body.response_body)).not.toContain('_missing_part');
  }, 60_000);
});
