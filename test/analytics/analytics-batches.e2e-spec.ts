/**
 * Batches beside the requests (issue 37): `GET /v1/analytics/batches` and `/batches/{id}`
 * (status, lines by status, tokens and cost of their log rows, files, key; filters, paging,
 * scope) and the batch lines in `GET /v1/analytics/summary`. Batches are created with the
 * official SDKs against the mock providers, run by the gateway line by line; every figure is
 * checked against the batch's own lines and log rows read straight from the database.
 */
import Anthropic from '@anthropic-ai/sdk';
import { call, createApiKey, createVirtualKey, openai, RawResponse, waitFor } from '../support/e2e-helpers';
import { batchEnded, chatLine, createBatch, runBatch } from '../support/batch-runs';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const DEFAULT_WORKSPACE = '00000000-0000-4000-8000-000000000001';

interface BatchView {
  id: string;
  shape: string;
  endpoint: string;
  status: string;
  mode: string;
  provider: string | null;
  created_at: string;
  ended_at: string | null;
  expires_at: string;
  api_key_id: string | null;
  api_key_name: string | null;
  lines: Record<'pending' | 'sending' | 'succeeded' | 'failed' | 'errored' | 'expired' | 'cancelled' | 'total', number>;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number | null;
  unpriced_requests: number;
  input_file_id: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  metadata: Record<string, string> | null;
}

describe('batches in analytics (e2e)', () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let admin: { id: string; key: string; name: string };
  let member: { id: string; key: string; name: string };
  let betaAdmin: { id: string; key: string };
  /** The batches made, by name. */
  const made: Record<'mixed' | 'member' | 'anthropic' | 'beta', string> = { mixed: '', member: '', anthropic: '', beta: '' };
  let mixedFile: string;

  const get = <T = any>(path: string, apiKey = admin.key) => call<T>(gateway, path, { apiKey });
  /** The truth of a batch: its lines by status, and its log rows summed as the API should sum them. */
  const truthOf = async (id: string) => {
    const lines = await gateway.dataSource.query(`select status, count(*)::int as n from batch_lines where batch_id = $1 group by status`, [id]);
    const [rows] = await gateway.dataSource.query(
      `select count(*)::int as rows, coalesce(sum(cost_usd), 0)::float8 as cost, coalesce(sum(prompt_tokens), 0)::float8 as prompt,
              coalesce(sum(completion_tokens), 0)::float8 as completion,
              (count(*) filter (where cost_usd is null and (prompt_tokens is not null or completion_tokens is not null)))::int as unpriced
       from request_logs where batch_id = $1`,
      [id],
    );
    return { lines: Object.fromEntries(lines.map((row: { status: string; n: number }) => [row.status, row.n])), ...rows };
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ BATCH_POLL_MS: '50', BATCH_NATIVE_POLL_MS: '50', BATCH_CONCURRENCY: '4' });
    await createVirtualKey(gateway, { slug: 'groq', provider: 'groq', key: 'gsk-batch-000000', custom_host: `${mock.url}/openai/v1` });
    await createVirtualKey(gateway, { slug: 'claude', provider: 'anthropic', key: 'sk-ant-batch', custom_host: mock.url });
    admin = await createApiKey(gateway, { name: 'batch admin', role: 'admin' });
    member = await createApiKey(gateway, { name: 'batch member', role: 'member' });

    // Two lines priced, one answered 400, one not JSON (errored at creation), one of a model without a price.
    const mixed = await runBatch(
      openai(gateway, { 'x-gateway-virtual-key': 'groq' }, 'unused', admin.key),
      [chatLine('a', 'first answer'), chatLine('b', 'second'), chatLine('c', 'x', 'mock-error-400'), '{not json', chatLine('d', 'free', 'house-model-7b')],
      { job: 'eval' },
    );
    expect(mixed.status).toBe('completed');
    made.mixed = mixed.id;
    mixedFile = mixed.input_file_id;
    made.member = (
      await runBatch(openai(gateway, { 'x-gateway-virtual-key': 'groq' }, 'unused', member.key), [chatLine('m1', 'mine'), chatLine('m2', 'also')])
    ).id;

    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: admin.key, maxRetries: 0, defaultHeaders: { 'x-gateway-virtual-key': 'claude' } });
    const created = await anthropic.messages.batches.create({
      requests: [
        { custom_id: 'one', params: { model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'echo: one' }] } },
        { custom_id: 'two', params: { model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'echo: two' }] } },
      ],
    });
    await waitFor(async () => (await anthropic.messages.batches.retrieve(created.id)).processing_status === 'ended', 20_000);
    made.anthropic = created.id;

    // Another workspace's batch.
    const beta = await call(gateway, '/v1/workspaces', { body: { name: 'Team beta', slug: 'beta' } });
    expect(beta.status).toBe(201);
    const key = await call(gateway, '/v1/api-keys', { body: { name: 'beta admin', role: 'admin', workspace: 'beta' } });
    expect(key.status).toBe(201);
    betaAdmin = key.body;
    const betaGroq = await call(gateway, '/v1/virtual-keys', {
      apiKey: betaAdmin.key,
      body: { name: 'groq', slug: 'groq', provider: 'groq', key: 'gsk-beta-000000', custom_host: `${mock.url}/openai/v1` },
    });
    expect(betaGroq.status).toBe(201);
    made.beta = (await runBatch(openai(gateway, { 'x-gateway-virtual-key': 'groq' }, 'unused', betaAdmin.key), [chatLine('x', 'theirs')])).id;

    // An interactive request beside the batches.
    const interactive = await call(gateway, '/v1/chat/completions', {
      apiKey: admin.key,
      headers: { 'x-gateway-virtual-key': 'groq' },
      body: { model: 'llama-3.1-8b-instant', messages: [{ role: 'user', content: 'echo: not a batch' }] },
    });
    expect(interactive.status).toBe(200);
    await gateway.flushLogs();
  }, 90_000);

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("answers a batch with its lines by status, its log rows' tokens and cost, its times, files and key", async () => {
    const response = await get<BatchView>(`/v1/analytics/batches/${made.mixed}`);
    expect(response.status).toBe(200);
    const batch = response.body;
    const truth = await truthOf(made.mixed);
    expect(truth.lines).toEqual({ succeeded: 3, failed: 1, errored: 1 });
    expect(batch).toMatchObject({
      object: 'analytics.batch',
      id: made.mixed,
      shape: 'openai',
      endpoint: '/v1/chat/completions',
      status: 'completed',
      mode: 'gateway',
      provider: null,
      completion_window: '24h',
      api_key_id: admin.id,
      api_key_name: 'batch admin',
      input_file_id: mixedFile,
      metadata: { job: 'eval' },
      errors: null,
      lines: { pending: 0, sending: 0, succeeded: 3, failed: 1, errored: 1, expired: 0, cancelled: 0, total: 5 },
    });
    expect(batch.output_file_id).toMatch(/^file-gw/);
    expect(batch.error_file_id).toMatch(/^file-gw/);
    expect(Date.parse(batch.ended_at!)).toBeGreaterThanOrEqual(Date.parse(batch.created_at));
    expect(Date.parse(batch.expires_at) - Date.parse(batch.created_at)).toBeCloseTo(86_400_000, -4);
    // The lines that ran are log rows: 4 (the invalid one never ran); the cost is their sum, the unpriced one apart.
    expect(truth.rows).toBe(4);
    expect(truth.cost).toBeGreaterThan(0);
    expect(truth.unpriced).toBe(1);
    expect(batch.cost_usd).toBeCloseTo(truth.cost, 12);
    expect(batch.prompt_tokens).toBe(truth.prompt);
    expect(batch.completion_tokens).toBe(truth.completion);
    expect(batch.prompt_tokens).toBeGreaterThan(0);
    expect(batch.unpriced_requests).toBe(1);

    // Anthropic's shape: its lines, cost and no input file.
    const anthropic = (await get<BatchView>(`/v1/analytics/batches/${made.anthropic}`)).body;
    const anthropicTruth = await truthOf(made.anthropic);
    expect(anthropic).toMatchObject({ shape: 'anthropic', endpoint: '/v1/messages', status: 'completed', input_file_id: null, metadata: null });
    expect(anthropic.lines).toMatchObject({ succeeded: 2, total: 2 });
    expect(anthropicTruth.rows).toBe(2);
    expect(anthropic.cost_usd).toBeCloseTo(anthropicTruth.cost, 12);
    expect(anthropic.cost_usd).toBeGreaterThan(0);
  });

  it('lists the batches of the period newest first, each as it reads alone, filtered by status, shape and key', async () => {
    const list = await get(`/v1/analytics/batches`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', next_cursor: null });
    expect(Date.parse(list.body.to) - Date.parse(list.body.from)).toBe(30 * 86_400_000);
    // Newest first; another workspace's batch is not there.
    expect(list.body.data.map((b: BatchView) => b.id)).toEqual([made.anthropic, made.member, made.mixed]);
    expect(list.body.data[2]).toEqual((await get(`/v1/analytics/batches/${made.mixed}`)).body);
    expect(list.body.data[1]).toMatchObject({ api_key_id: member.id, api_key_name: 'batch member', lines: { succeeded: 2, total: 2 } });

    const ids = async (query: string) => {
      const response = await get(`/v1/analytics/batches?${query}`);
      expect(response.status).toBe(200);
      return response.body.data.map((b: BatchView) => b.id);
    };
    expect(await ids('shape=anthropic')).toEqual([made.anthropic]);
    expect(await ids('shape=openai')).toEqual([made.member, made.mixed]);
    expect(await ids(`api_key_id=${member.id}`)).toEqual([made.member]);
    expect(await ids('status=completed')).toEqual([made.anthropic, made.member, made.mixed]);
    expect(await ids('status=in_progress,cancelling')).toEqual([]);
    // The period is of the creation.
    const first = Date.parse((await get(`/v1/analytics/batches/${made.mixed}`)).body.created_at);
    expect(await ids(`to=${new Date(first).toISOString()}`)).toEqual([]);
    expect(await ids(`from=${new Date(first + 1).toISOString()}`)).toEqual([made.anthropic, made.member]);
  });

  it('pages with limit and cursor, every batch once, in order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: RawResponse = await get(`/v1/analytics/batches?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(1);
      seen.push(page.body.data[0].id);
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual([made.anthropic, made.member, made.mixed]);
    const two = await get(`/v1/analytics/batches?limit=2`);
    expect(two.body.data.map((b: BatchView) => b.id)).toEqual([made.anthropic, made.member]);
    expect(typeof two.body.next_cursor).toBe('string');
  });

  it("scopes as the other analytics: a member sees its own key's batches, another workspace's batch is a 404", async () => {
    const mine = await get(`/v1/analytics/batches`, member.key);
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((b: BatchView) => b.id)).toEqual([made.member]);
    expect((await get(`/v1/analytics/batches/${made.member}`, member.key)).status).toBe(200);
    const notMine = await get(`/v1/analytics/batches/${made.mixed}`, member.key);
    expect(notMine.status).toBe(404);
    expect(notMine.body.error).toMatchObject({ code: 'batch_not_found' });
    // Asking for another key's batches gives none.
    expect((await get(`/v1/analytics/batches?api_key_id=${admin.id}`, member.key)).body.data).toEqual([]);

    const theirs = await get(`/v1/analytics/batches/${made.beta}`);
    expect(theirs.status).toBe(404);
    expect((await get(`/v1/analytics/batches/${made.mixed}`, betaAdmin.key)).status).toBe(404);
    const beta = await get(`/v1/analytics/batches`, betaAdmin.key);
    expect(beta.body.data.map((b: BatchView) => b.id)).toEqual([made.beta]);
    // An owner reads every workspace's, or the one it acts in.
    const all = await call(gateway, '/v1/analytics/batches', {});
    expect(all.body.data.map((b: BatchView) => b.id)).toEqual([made.beta, made.anthropic, made.member, made.mixed]);
    const acting = await call(gateway, '/v1/analytics/batches', { headers: { 'x-gateway-workspace': 'beta' } });
    expect(acting.body.data.map((b: BatchView) => b.id)).toEqual([made.beta]);
    // An unknown id is a 404 too.
    expect((await get(`/v1/analytics/batches/batch_${'0'.repeat(32)}`)).status).toBe(404);
  });

  it.each([
    ['status=running', 'status'],
    ['status=completed,', 'status'],
    ['shape=gemini', 'shape'],
    ['api_key_id=not-a-key', 'api_key_id'],
    ['from=yesterday', 'from'],
    ['to=2026-02-30T00:00:00Z', 'to'],
    ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['cursor=abc', 'cursor'],
  ])('%s is a 400 naming the parameter', async (query, param) => {
    const response = await get(`/v1/analytics/batches?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
  });

  it('a malformed batch id is a 400 naming it', async () => {
    const response = await get(`/v1/analytics/batches/not-a-batch`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ param: 'id' });
  });

  it("tells a running batch's progress: lines not ended yet, no end time", async () => {
    const client = openai(gateway, { 'x-gateway-virtual-key': 'groq' }, 'unused', admin.key);
    const created = await createBatch(
      client,
      Array.from({ length: 6 }, (_, i) => chatLine(`slow-${i}`, `line ${i}`, 'mock-slow-1500')),
    );
    try {
      const running = await waitFor(async () => {
        const batch = (await get<BatchView>(`/v1/analytics/batches/${created.id}`)).body;
        return batch.lines.sending > 0 ? batch : null;
      }, 5000);
      expect(running).toMatchObject({ status: 'in_progress', ended_at: null, output_file_id: null });
      expect(running.lines.sending).toBeLessThanOrEqual(4);
      expect(running.lines.pending + running.lines.sending + running.lines.succeeded).toBe(6);
      const listed = await get(`/v1/analytics/batches?status=in_progress,validating,finalizing,cancelling`);
      expect(listed.body.data.map((b: BatchView) => b.id)).toEqual([created.id]);
    } finally {
      await client.batches.cancel(created.id);
      await batchEnded(client, created.id);
    }
    const cancelled = (await get<BatchView>(`/v1/analytics/batches/${created.id}`)).body;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.lines.cancelled).toBeGreaterThan(0);
    expect(cancelled.lines.pending + cancelled.lines.sending).toBe(0);
    expect(cancelled.ended_at).not.toBeNull();
  });

  it('tells the batch lines apart in the summary: requests of which batch lines, and their cost', async () => {
    await gateway.flushLogs();
    const summary = await get(`/v1/analytics/summary?group_by=model`);
    expect(summary.status).toBe(200);
    const [truth] = await gateway.dataSource.query(
      `select (count(*) filter (where kind = 'request'))::int as requests, coalesce(sum(cost_usd), 0)::float8 as cost,
              (count(*) filter (where cost_usd is null and prompt_tokens is not null))::int as unpriced,
              (select count(*)::int from request_logs where batch_id is null and kind = 'request' and workspace_id = $1) as others
       from request_logs where batch_id is not null and workspace_id = $1`,
      [DEFAULT_WORKSPACE],
    );
    // The default workspace's batch lines: 4 + 2 + 2 that ran, and those of the cancelled batch that were sent.
    expect(truth.requests).toBeGreaterThanOrEqual(8);
    expect(summary.body.batch_requests).toBe(truth.requests);
    expect(summary.body.batch_cost_usd).toBeCloseTo(truth.cost, 12);
    expect(summary.body.batch_unpriced_requests).toBe(truth.unpriced);
    // Every request, the batch lines among them: the interactive request and the calls that made the batches besides.
    const requests = summary.body.data.reduce((sum: number, row: { requests: number }) => sum + row.requests, 0);
    expect(truth.others).toBeGreaterThanOrEqual(1);
    expect(requests).toBe(truth.requests + truth.others);

    // A member's own; and the filters hold (only the model without a price).
    const own = await get(`/v1/analytics/summary?group_by=model`, member.key);
    expect(own.body.batch_requests).toBe(2);
    const free = await get(`/v1/analytics/summary?group_by=model&model=house-model-7b`);
    expect(free.body).toMatchObject({ batch_requests: 1, batch_cost_usd: null, batch_unpriced_requests: 1 });
    // None in a period before them.
    const before = await get(`/v1/analytics/summary?group_by=model&from=2024-01-01T00:00:00Z&to=2024-02-01T00:00:00Z`);
    expect(before.body).toMatchObject({ batch_requests: 0, batch_cost_usd: 0, batch_unpriced_requests: 0 });
  });
});
