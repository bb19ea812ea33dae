/**
 * Log body parts in an S3-compatible object store (LOG_BODY_STORE=s3://…, CONTRACT section
 * 14), against the mock object store (test/support/mock-s3.ts: s3rver behind a SigV4 check),
 * the recorded Claude Code and Codex requests sent with the official SDKs. The suite checks
 * that
 *
 * - each distinct part is one object (`<prefix><workspace>/<hash>.json`, its JSON text) and
 *   PostgreSQL keeps its reference and search words, not its body; reads (GET, list, export)
 *   give the bodies back as sent; a part already stored is not put again;
 * - search finds words of parts held in the object store;
 * - an object that is gone reads `{"_missing_part": "<hash>"}`; parts PostgreSQL still holds
 *   (stored before LOG_BODY_STORE was set) read from it;
 * - with the store down, requests are answered, the records wait in the journal and are
 *   written once it is back;
 * - retention and deleting a workspace delete the objects with the part rows;
 * - the backfill of rows written before parts puts their parts in the object store.
 */
import Anthropic from '@anthropic-ai/sdk';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { ConfigService } from '@nestjs/config';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment } from '../../src/config/environment';
import { uuidv7 } from '../../src/common/ids';
import { LogBodyBackfill } from '../../src/modules/logging/body-parts/log-body-backfill';
import { PartStore } from '../../src/modules/logging/body-parts/part-store';
import { LogPartitionMaintainer } from '../../src/modules/logging/log-partition-maintainer';
import { LogWriter } from '../../src/modules/logging/log-writer';
import { call, createVirtualKey, openai, waitFor } from '../support/e2e-helpers';
import { MockS3, S3_TEST_CREDENTIALS, startMockS3 } from '../support/mock-s3';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const recorded = (file: string): { body: Record<string, any>; headers: Record<string, string> }[] =>
  JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'clients', file), 'utf8')).requests;
const CLAUDE_CODE = recorded('claude-code-tool.json');
const CODEX = recorded('codex-tool.json');
const PREFIX = 'gateway/parts';

/** A part's key: the first 128 bits of the SHA-256 of its JSON text, as a UUID. */
const sha256 = (value: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(value))
    .digest('hex')
    .slice(0, 32)
    .replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
/** A word no other request of the run contains (letters only: one token for the search). */
const word = (label: string) =>
  `${label}${randomBytes(6)
    .toString('hex')
    .replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)])}`;
const codexTurnWith = (text: string): Record<string, any> => {
  const body = structuredClone(CODEX[1].body);
  body.input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
  return body;
};

describe('log body parts in an S3-compatible object store', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let s3: MockS3;
  const savedEnv: Record<string, string | undefined> = {};

  const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => gateway.dataSource.query(text, params);
  const defaultWorkspace = async () => (await sql<{ id: string }>(`select id from workspaces where slug = 'default'`))[0].id;
  const objectKey = (workspaceId: string, hash: string) => `${PREFIX}/${workspaceId}/${hash}.json`;
  const partHashesOf = async (id: string): Promise<string[]> =>
    (
      await sql<{ hash: string }>(`select h::text as hash from request_logs, unnest(part_hashes) with ordinality as u(h, n) where id = $1 order by n`, [id])
    ).map((row) => row.hash);

  async function readLog(id: string): Promise<any> {
    await gateway.flushLogs();
    const response = await call(gateway, `/v1/logs/${id}`);
    expect(response.status).toBe(200);
    return response.body;
  }

  async function sendCodex(body: Record<string, any>, extra: Record<string, string> = {}, apiKey = gateway.adminKey): Promise<string> {
    const { data, response } = await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod', ...extra }, 'unused', apiKey)
      .responses.create(body as any)
      .withResponse();
    if (body.stream) for await (const _event of data as unknown as AsyncIterable<unknown>);
    return response.headers.get('x-gateway-request-id')!;
  }

  async function sendClaudeCode(body: Record<string, any>): Promise<string> {
    const client = new Anthropic({
      baseURL: gateway.url,
      apiKey: 'dummy-key',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-virtual-key': 'anthropic-prod',
        'anthropic-beta': CLAUDE_CODE[1].headers['anthropic-beta'],
      },
    });
    const { data, response } = await client.beta.messages.create(body as any).withResponse();
    if (body.stream) for await (const _event of data as unknown as AsyncIterable<unknown>);
    return response.headers.get('x-gateway-request-id')!;
  }

  const settings = (env: Partial<Environment>) => ({ get: (name: keyof Environment) => env[name] }) as unknown as ConfigService<Environment, true>;

  beforeAll(async () => {
    s3 = await startMockS3();
    // The SDK's credential chain reads them from the environment, as in production.
    for (const [name, value] of Object.entries({
      AWS_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
      AWS_REGION: 'eu-west-3',
    })) {
      savedEnv[name] = process.env[name];
      process.env[name] = value;
    }
    mock = await startMockUpstream();
    gateway = await startTestGateway({ LOG_BODY_STORE: `s3://${s3.bucket}/${PREFIX}/`, LOG_BODY_STORE_ENDPOINT: s3.url, LOG_BODY_BACKFILL: 'false' });
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: 'sk-ant-s3-000000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-s3-000000', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    await s3?.stop();
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('Claude Code and Codex turns: each part one object holding its JSON, PostgreSQL only its reference and words; every read gives the bodies back', async () => {
    const workspaceId = await defaultWorkspace();
    const traceId = word('trace');
    const ids: [string, Record<string, any>][] = [];
    for (const turn of CLAUDE_CODE) ids.push([await sendClaudeCode(turn.body), turn.body]);
    for (const turn of CODEX) ids.push([await sendCodex(turn.body, { 'x-gateway-trace-id': traceId }), turn.body]);
    await gateway.flushLogs();

    for (const [id, sent] of ids) {
      const log = await readLog(id);
      expect(log.request_body).toEqual(sent);
      expect(log.response_body).toEqual(expect.any(Object));
      const hashes = await partHashesOf(id);
      expect(hashes).toContain(sha256(sent.tools));
      for (const hash of hashes) expect(s3.keys()).toContain(objectKey(workspaceId, hash));
    }
    // The tools of Claude Code: one object, its JSON text as split.
    const tools = CLAUDE_CODE[1].body.tools;
    const client = new S3Client({ region: 'eu-west-3', endpoint: s3.url, forcePathStyle: true, credentials: S3_TEST_CREDENTIALS });
    const object = await (await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: objectKey(workspaceId, sha256(tools)) }))).Body!.transformToString();
    expect(object).toBe(JSON.stringify(tools));
    client.destroy();
    // PostgreSQL: no part body, every part's words.
    const [counts] = await sql(`select count(*)::int as parts, count(body)::int as bodies, count(document)::int as documents from log_body_parts`);
    expect(counts).toEqual({ parts: s3.keys().length, bodies: 0, documents: s3.keys().length });

    const exported = await call(gateway, `/v1/logs/export?format=json&include_bodies=true&trace_id=${traceId}`);
    expect(exported.status).toBe(200);
    expect(new Map(exported.body.map((row: any) => [row.id, row.request_body]))).toEqual(new Map(ids.slice(2).map(([id, sent]) => [id, sent])));
  });

  it('a turn that resends what is stored puts none of it again', async () => {
    const workspaceId = await defaultWorkspace();
    await sendCodex(CODEX[1].body);
    await gateway.flushLogs();
    const before = s3.requests.length;
    const id = await sendCodex(CODEX[1].body);
    expect((await readLog(id)).request_body).toEqual(CODEX[1].body);
    const put = s3.requests
      .slice(before)
      .filter((request) => request.method === 'PUT')
      .map((request) => request.path.split('?')[0]);
    const requestParts = [CODEX[1].body.tools, ...CODEX[1].body.input].map((part) => `/${s3.bucket}/${objectKey(workspaceId, sha256(part))}`);
    expect(put.filter((path) => requestParts.includes(path))).toEqual([]);
    // Only the answer's parts may be new: the mock's answers differ per call.
    expect(put.length).toBeLessThanOrEqual((await partHashesOf(id)).length - requestParts.length);
  });

  it('search finds words of parts held in the object store, and -word leaves their rows out', async () => {
    const [FOUND, OTHER] = [word('found'), word('other')];
    const withWord = await sendCodex(codexTurnWith(`Please look at ${FOUND}, a message long enough to be a part of its own.`));
    const without = await sendCodex(codexTurnWith(`Please look at ${OTHER}, a message long enough to be a part of its own.`));
    await gateway.flushLogs();
    const search = async (q: string) =>
      ((await call(gateway, `/v1/logs?include_bodies=false&limit=200&q=${encodeURIComponent(q)}`)).body.data as any[]).map((row) => row.id);
    expect(await search(FOUND)).toEqual([withWord]);
    const excluded = await search(`${OTHER} -${FOUND}`);
    expect(excluded).toEqual([without]);
  });

  it('an object that is gone reads {"_missing_part": "<hash>"} in its place; a part PostgreSQL still holds reads from it', async () => {
    const workspaceId = await defaultWorkspace();
    const body = codexTurnWith(`Soon gone: ${word('gone')}, a message long enough to be a part.`);
    const id = await sendCodex(body);
    await gateway.flushLogs();
    const last = body.input.length - 1;
    const gone = sha256(body.input[last]);
    const client = new S3Client({ region: 'eu-west-3', endpoint: s3.url, forcePathStyle: true, credentials: S3_TEST_CREDENTIALS });
    await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: objectKey(workspaceId, gone) }));
    // A part stored before LOG_BODY_STORE was set: its body in PostgreSQL, no object.
    const earlier = sha256(body.input[0]);
    await sql(`update log_body_parts set body = $3::jsonb where workspace_id = $1 and hash = $2::uuid`, [workspaceId, earlier, JSON.stringify(body.input[0])]);
    await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: objectKey(workspaceId, earlier) }));
    client.destroy();

    const expected = structuredClone(body);
    expected.input[last] = { _missing_part: gone };
    expect((await readLog(id)).request_body).toEqual(expected);
  });

  it('with the object store down, requests are answered and their records wait in the journal; once it is back they are written whole', async () => {
    const writer = gateway.app.get(LogWriter);
    const body = codexTurnWith(`Logged during an outage: ${word('outage')}, long enough to be a part.`);
    const refusedBefore = s3.requests.filter((request) => request.status === 503).length;
    s3.failing = true;
    let id: string;
    try {
      id = await sendCodex(body);
      // The writer tried (the store answered 503), and the record is only in the journal and the queue.
      await waitFor(() => s3.requests.filter((request) => request.status === 503).length > refusedBefore, 10_000);
      expect(writer.journalBytes()).toBeGreaterThan(0);
      expect((await call(gateway, `/v1/logs/${id}`)).status).toBe(404);
    } finally {
      s3.failing = false;
    }
    // The writer's own retries (backoff up to 5 s) write it once the store is back.
    await waitFor(async () => (await call(gateway, `/v1/logs/${id}`)).status === 200, 15_000);
    expect((await readLog(id)).request_body).toEqual(body);
    expect(writer.pending()).toBe(0);
  }, 30_000);

  it('retention deletes the objects of the parts only dropped rows referenced, and keeps the others', async () => {
    const created = await admin(gateway, 'POST', '/v1/workspaces', { name: 'aging', slug: 'aging' });
    const key = await admin(gateway, 'POST', '/v1/api-keys', { name: 'aging admin', workspace: 'aging', role: 'admin' });
    const workspaceId = created.body.id;
    await call(gateway, '/v1/virtual-keys', {
      apiKey: key.body.key,
      body: { name: 'openai-prod', slug: 'openai-prod', provider: 'openai', key: 'sk-aging-0000', custom_host: `${mock.url}/v1` },
    });
    const oldBody = codexTurnWith(`An old question: ${word('old')}, long enough to be a part of its own.`);
    const oldId = await sendCodex(oldBody, {}, key.body.key);
    await gateway.flushLogs();
    // The row and its parts as if logged 40 days ago.
    const [{ day }] = await sql(`select to_char((created_at - interval '40 days') at time zone 'UTC', 'YYYY-MM-DD') as day from request_logs where id = $1`, [
      oldId,
    ]);
    await sql(`select request_logs_create_partition($1::date)`, [day]);
    await sql(`update request_logs set created_at = created_at - interval '40 days' where id = $1`, [oldId]);
    await sql(`update log_body_parts set last_seen_day = last_seen_day - 40 where workspace_id = $1`, [workspaceId]);
    gateway.app.get(LogWriter).knownParts.clear();
    const newId = await sendCodex(CODEX[1].body, {}, key.body.key);
    await gateway.flushLogs();
    const oldOnly = sha256(oldBody.input.at(-1));
    expect(s3.keys()).toContain(objectKey(workspaceId, oldOnly));

    const report = await new LogPartitionMaintainer(gateway.dataSource, gateway.app.get(PartStore), settings({ LOG_RETENTION_DAYS: 30 })).run();
    expect(report?.partsFreed).toBeGreaterThan(0);
    expect(s3.keys()).not.toContain(objectKey(workspaceId, oldOnly));
    const kept = (await partHashesOf(newId)).map((hash) => objectKey(workspaceId, hash));
    expect(s3.keys()).toEqual(expect.arrayContaining(kept));
    expect(
      s3
        .keys()
        .filter((object) => object.startsWith(`${PREFIX}/${workspaceId}/`))
        .sort(),
    ).toEqual([...new Set(kept)].sort());
    expect((await readLog(newId)).request_body).toEqual(CODEX[1].body);

    // Deleting the workspace deletes the rest of its objects on the next pass.
    await call(gateway, '/v1/virtual-keys/openai-prod', { method: 'DELETE', apiKey: key.body.key });
    expect((await admin(gateway, 'DELETE', `/v1/api-keys/${key.body.id}`)).status).toBe(200);
    expect((await admin(gateway, 'DELETE', '/v1/workspaces/aging')).status).toBe(200);
    const others = s3.keys().filter((object) => !object.startsWith(`${PREFIX}/${workspaceId}/`));
    const again = await new LogPartitionMaintainer(gateway.dataSource, gateway.app.get(PartStore), settings({})).run();
    expect(again?.partsFreed).toBe(new Set(kept).size);
    expect(s3.keys()).toEqual(others);
  });

  it('the backfill puts the parts of rows written before parts in the object store', async () => {
    const workspaceId = await defaultWorkspace();
    const body = codexTurnWith(`Written before parts: ${word('before')}, long enough to be a part of its own.`);
    const id = uuidv7();
    await sql(
      `insert into request_logs (id, trace_id, created_at, workspace_id, operation, provider, model, status_code, latency_ms, request_body, response_body)
       values ($1, $2, now() - interval '1 day', $3, 'responses', 'openai', 'gpt-5.5', 200, 10, $4::jsonb, $5::jsonb)`,
      [id, word('trace'), workspaceId, JSON.stringify(body), JSON.stringify({ id: 'resp_old', output: [] })],
    );
    const report = await new LogBodyBackfill(gateway.dataSource, gateway.app.get(PartStore), settings({ LOG_BODY_BACKFILL: true })).run();
    expect(report?.rows).toBe(1);
    const hashes = await partHashesOf(id);
    expect(hashes.length).toBeGreaterThan(0);
    for (const hash of hashes) expect(s3.keys()).toContain(objectKey(workspaceId, hash));
    expect((await sql(`select count(*)::int as n from log_body_parts where body is not null and hash = any($1::uuid[])`, [hashes]))[0].n).toBe(0);
    expect((await readLog(id)).request_body).toEqual(body);
  });

  it('GET /v1/logs/storage counts the bytes in the object store', async () => {
    const storage = await call(gateway, '/v1/logs/storage?days=2');
    expect(storage.status).toBe(200);
    expect(storage.body.total.bytes_in_object_store).toBeGreaterThan(0);
    expect(storage.body.total.bytes_stored).toBeGreaterThan(storage.body.total.bytes_in_object_store);
  });
});
