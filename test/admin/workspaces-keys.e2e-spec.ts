/**
 * Workspaces and the Keys module (CONTRACT section 13): virtual keys, configs and end
 * users belong to a workspace; another workspace's, by id or slug, is a 404 on every
 * verb and unknown in routing; slugs are unique per workspace only; an owner sees every
 * workspace and `x-gateway-workspace` narrows it. A workspace's budget and rate limits
 * hold across all its keys (counters in PostgreSQL, and in Redis with TEST_REDIS_URL).
 */
import { KeyLookupService } from '../../src/modules/keys/key-lookup.service';
import { call, expectError, RawResponse } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

// 4,000 characters: the mock counts 1,000 prompt tokens; the answer "Hello from mock" is 3.
const LONG = [{ role: 'user', content: 'x'.repeat(4000) }];
// gpt-4o-mini at $0.15 / $0.60 per million tokens.
const COST = (1000 * 0.15 + 3 * 0.6) / 1e6; // $0.0001518
const BODY = { model: 'gpt-4o-mini', messages: LONG, max_tokens: 3 };

interface Key {
  id: string;
  key: string;
}

/** The error as a client tells errors apart: status, type, code, param (the message names what was asked for). */
const errorOf = (response: RawResponse) => ({
  status: response.status,
  type: response.body?.error?.type,
  code: response.body?.error?.code,
  param: response.body?.error?.param,
});

async function workspace(gateway: TestGateway, slug: string, limits: Record<string, unknown> = {}): Promise<string> {
  const created = await admin(gateway, 'POST', '/v1/workspaces', { name: slug, slug, ...limits });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function apiKey(gateway: TestGateway, workspaceSlug: string, role: string, fields: Record<string, unknown> = {}): Promise<Key> {
  const created = await admin(gateway, 'POST', '/v1/api-keys', { name: `${workspaceSlug} ${role}`, workspace: workspaceSlug, role, ...fields });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ workspace: workspaceSlug, role });
  return created.body;
}

/** Waits out the last seconds of a UTC minute, so that a per-minute window does not roll over mid-test. */
async function awayFromMinuteEnd(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
}

describe('workspaces: virtual keys, configs and end users', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let wsA: string;
  let wsB: string;
  let adminA: Key;
  let adminB: Key;

  const as = (key: Key) => (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    call(gateway, path, { method, body, apiKey: key.key, headers });
  const chatAs = (key: Key, headers: Record<string, string>, body: Record<string, unknown> = {}) =>
    call(gateway, '/v1/chat/completions', { headers, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...body }, apiKey: key.key });

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    wsA = await workspace(gateway, 'team-a');
    wsB = await workspace(gateway, 'team-b');
    adminA = await apiKey(gateway, 'team-a', 'admin');
    adminB = await apiKey(gateway, 'team-b', 'admin');
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it("the same slugs in two workspaces; each admin lists, reads, changes and deletes only its own; the other's by id or slug is 404", async () => {
    const a = as(adminA);
    const b = as(adminB);
    const vkA = await a('POST', '/v1/virtual-keys', {
      name: 'A',
      slug: 'openai-prod',
      provider: 'openai',
      key: 'sk-team-a-000',
      custom_host: `${mock.url}/v1`,
    });
    const vkB = await b('POST', '/v1/virtual-keys', {
      name: 'B',
      slug: 'openai-prod',
      provider: 'openai',
      key: 'sk-team-b-000',
      custom_host: `${mock.url}/v1`,
    });
    expect([vkA.status, vkB.status]).toEqual([201, 201]);
    expect(vkA.body).toMatchObject({ slug: 'openai-prod', workspace: 'team-a', workspace_id: wsA });
    expect(vkB.body).toMatchObject({ slug: 'openai-prod', workspace: 'team-b', workspace_id: wsB });
    expect(vkA.body.id).not.toBe(vkB.body.id);
    expectError(await a('POST', '/v1/virtual-keys', { name: 'again', slug: 'openai-prod', provider: 'openai', key: 'sk-x' }), 409, {
      type: 'invalid_request_error',
      code: 'slug_taken',
      param: 'slug',
    });

    const cfgA = await a('POST', '/v1/configs', { name: 'main', slug: 'main', config: { virtual_key: 'openai-prod' } });
    const cfgB = await b('POST', '/v1/configs', { name: 'main', slug: 'main', config: { virtual_key: 'openai-prod' } });
    expect([cfgA.status, cfgB.status]).toEqual([201, 201]);
    expect(cfgA.body).toMatchObject({ workspace: 'team-a', workspace_id: wsA, version: 1 });
    expect(cfgB.body).toMatchObject({ workspace: 'team-b', workspace_id: wsB });

    const euA = await a('POST', '/v1/end-users', { user: 'alice@example.com', metadata: { team: 'a' } });
    const euB = await b('POST', '/v1/end-users', { user: 'alice@example.com', metadata: { team: 'b' } });
    expect([euA.status, euB.status]).toEqual([201, 201]);
    expect(euA.body).toMatchObject({ workspace: 'team-a', workspace_id: wsA });
    expect(euB.body).toMatchObject({ workspace: 'team-b', workspace_id: wsB });
    expect((await a('POST', '/v1/end-users', { user: 'alice@example.com' })).status).toBe(409);

    // Lists: each admin sees its own rows only.
    const ids = async (caller: typeof a, path: string) =>
      ((await caller('GET', path)).body.data as { id: string; workspace_id: string }[]).map((row) => row.id);
    expect(await ids(a, '/v1/virtual-keys')).toEqual([vkA.body.id]);
    expect(await ids(b, '/v1/virtual-keys')).toEqual([vkB.body.id]);
    expect(await ids(a, '/v1/configs')).toEqual([cfgA.body.id]);
    expect(await ids(b, '/v1/configs')).toEqual([cfgB.body.id]);
    expect(await ids(a, '/v1/end-users')).toEqual([euA.body.id]);
    expect(await ids(b, '/v1/end-users')).toEqual([euB.body.id]);

    // By slug each admin reaches its own row.
    expect((await a('GET', '/v1/virtual-keys/openai-prod')).body.id).toBe(vkA.body.id);
    expect((await b('GET', '/v1/virtual-keys/openai-prod')).body.id).toBe(vkB.body.id);
    expect((await b('GET', '/v1/configs/main')).body.id).toBe(cfgB.body.id);
    expect((await b('GET', `/v1/end-users/${encodeURIComponent('alice@example.com')}`)).body).toMatchObject({ id: euB.body.id, metadata: { team: 'b' } });

    // B's own rows under names only B has: A gets exactly what an unknown name gets.
    const onlyB = {
      vk: (await b('POST', '/v1/virtual-keys', { name: 'only b', slug: 'b-only', provider: 'openai', key: 'sk-only-b' })).body,
      cfg: (await b('POST', '/v1/configs', { name: 'only b', slug: 'b-config', config: { virtual_key: 'b-only' } })).body,
      eu: (await b('POST', '/v1/end-users', { user: 'bob@example.com' })).body,
    };
    const cases: [string, string[], Record<string, unknown>, string][] = [
      ['/v1/virtual-keys', [onlyB.vk.id, 'b-only', vkB.body.id], { name: 'hijacked' }, 'virtual_key_not_found'],
      ['/v1/configs', [onlyB.cfg.id, 'b-config', cfgB.body.id], { name: 'hijacked' }, 'config_not_found'],
      ['/v1/end-users', [onlyB.eu.id, 'bob@example.com', euB.body.id], { metadata: { hijacked: 'yes' } }, 'end_user_not_found'],
    ];
    for (const [path, names, patch, code] of cases) {
      const unknown = errorOf(await a('GET', `${path}/never-made`));
      expect(unknown).toMatchObject({ status: 404, code });
      for (const name of names) {
        const at = `${path}/${encodeURIComponent(name)}`;
        expect(errorOf(await a('GET', at))).toEqual(unknown);
        expect(errorOf(await a('PATCH', at, patch))).toEqual(unknown);
        expect(errorOf(await a('DELETE', at))).toEqual(unknown);
      }
    }
    expect(errorOf(await a('GET', `/v1/configs/${cfgB.body.id}/versions`))).toMatchObject({ status: 404, code: 'config_not_found' });
    expect(errorOf(await a('GET', `/v1/configs/${cfgB.body.id}?version=1`))).toMatchObject({ status: 404, code: 'config_not_found' });

    // Nothing of B's changed.
    expect((await b('GET', `/v1/virtual-keys/${vkB.body.id}`)).body).toMatchObject({ name: 'B', disabled: false });
    expect((await b('GET', '/v1/configs/b-config')).body).toMatchObject({ name: 'only b', version: 1 });
    expect((await b('GET', `/v1/end-users/${euB.body.id}`)).body.metadata).toEqual({ team: 'b' });
    expect((await b('GET', '/v1/virtual-keys/b-only')).status).toBe(200);

    // A's own verbs work, and touch only A's row of the shared slug.
    expect((await a('PATCH', '/v1/virtual-keys/openai-prod', { name: 'A renamed' })).body).toMatchObject({ id: vkA.body.id, name: 'A renamed' });
    expect((await a('PATCH', '/v1/configs/main', { config: { virtual_key: 'openai-prod', retry: { attempts: 1 } } })).body).toMatchObject({
      id: cfgA.body.id,
      version: 2,
    });
    expect((await b('GET', '/v1/configs/main')).body.version).toBe(1);
    expect((await b('GET', '/v1/virtual-keys/openai-prod')).body.name).toBe('B');
  });

  it("routing with a workspace key finds its own virtual keys and configs only: the other workspace's are unknown, by header, @slug/model, config or id", async () => {
    const b = as(adminB);
    const a = as(adminA);
    // From the test above: both have `openai-prod` and `main`; B alone has `b-only` and `b-config`.
    const vkB = (await b('GET', '/v1/virtual-keys/b-only')).body;
    const cfgB = (await b('GET', '/v1/configs/b-config')).body;
    const unknownVk = errorOf(await chatAs(adminA, { 'x-gateway-virtual-key': 'never-made' }));
    expect(unknownVk).toEqual({ status: 404, type: 'not_found_error', code: 'virtual_key_not_found', param: null });
    const unknownCfg = errorOf(await chatAs(adminA, { 'x-gateway-config': 'never-made' }));
    expect(unknownCfg).toMatchObject({ status: 404, code: 'config_not_found' });

    expect(errorOf(await chatAs(adminA, { 'x-gateway-virtual-key': 'b-only' }))).toEqual(unknownVk);
    expect(errorOf(await chatAs(adminA, { 'x-gateway-virtual-key': vkB.id }))).toEqual(unknownVk);
    expect(errorOf(await chatAs(adminA, {}, { model: '@b-only/gpt-4o-mini' }))).toEqual(unknownVk);
    expect(errorOf(await chatAs(adminA, { 'x-gateway-config': JSON.stringify({ virtual_key: 'b-only' }) }))).toEqual(unknownVk);
    expect(errorOf(await chatAs(adminA, { 'x-gateway-config': 'b-config' }))).toEqual(unknownCfg);
    expect(errorOf(await chatAs(adminA, { 'x-gateway-config': cfgB.id }))).toEqual(unknownCfg);
    // A config of A's naming B's virtual key: unknown when it is routed.
    expect((await a('POST', '/v1/configs', { name: 'names b', slug: 'names-b', config: { virtual_key: 'b-only' } })).status).toBe(201);
    expect(errorOf(await chatAs(adminA, { 'x-gateway-config': 'names-b' }))).toEqual(unknownVk);
    expect(mock.requests).toHaveLength(0);

    // An API key's default route must be of its own workspace.
    expectError(await a('POST', '/v1/api-keys', { name: 'defaults', role: 'member', default_virtual_key: 'b-only' }), 400, {
      type: 'invalid_request_error',
      param: 'default_virtual_key',
    });
    expectError(await a('POST', '/v1/api-keys', { name: 'defaults', role: 'member', default_config: 'b-config' }), 400, {
      type: 'invalid_request_error',
      param: 'default_config',
    });
    const memberA = (await a('POST', '/v1/api-keys', { name: 'defaults', role: 'member', default_virtual_key: 'openai-prod' })).body as Key;
    expectError(await a('PATCH', `/v1/api-keys/${memberA.id}`, { default_config: 'b-config' }), 400, {
      type: 'invalid_request_error',
      param: 'default_config',
    });
    // A default set in the database behind the admin API's back is still resolved in the key's workspace only.
    await gateway.dataSource.query(`update api_keys set default_virtual_key = 'b-only' where id = $1`, [memberA.id]);
    gateway.app.get(KeyLookupService).invalidateApiKeys();
    expect(errorOf(await chatAs(memberA, {}))).toEqual(unknownVk);

    // The same slug routes each workspace to its own credential.
    expect((await chatAs(adminA, { 'x-gateway-virtual-key': 'openai-prod' })).status).toBe(200);
    expect((await chatAs(adminB, { 'x-gateway-virtual-key': 'openai-prod' })).status).toBe(200);
    expect((await chatAs(adminA, {}, { model: '@openai-prod/gpt-4o-mini' })).status).toBe(200);
    expect((await chatAs(adminB, { 'x-gateway-config': 'main' })).status).toBe(200);
    expect(mock.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer sk-team-a-000',
      'Bearer sk-team-b-000',
      'Bearer sk-team-a-000',
      'Bearer sk-team-b-000',
    ]);
  });

  it('an owner key sees every workspace; x-gateway-workspace narrows it and picks where slugs resolve and rows are created', async () => {
    const owner = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(gateway, path, { method, body, headers });
    const all = (await owner('GET', '/v1/virtual-keys?limit=100')).body.data as { slug: string; workspace: string }[];
    expect(
      all
        .filter((row) => row.slug === 'openai-prod')
        .map((row) => row.workspace)
        .sort(),
    ).toEqual(['team-a', 'team-b']);
    const narrowed = (await owner('GET', '/v1/virtual-keys?limit=100', undefined, { 'x-gateway-workspace': 'team-a' })).body.data as { workspace: string }[];
    expect(narrowed.length).toBeGreaterThan(0);
    expect(new Set(narrowed.map((row) => row.workspace))).toEqual(new Set(['team-a']));
    const endUsers = (await owner('GET', '/v1/end-users', undefined, { 'x-gateway-workspace': 'team-b' })).body.data as { user: string }[];
    expect(endUsers.map((row) => row.user).sort()).toEqual(['alice@example.com', 'bob@example.com']);

    const inB = await owner('GET', '/v1/virtual-keys/openai-prod', undefined, { 'x-gateway-workspace': 'team-b' });
    expect(inB.body).toMatchObject({ workspace: 'team-b', key_hint: expect.stringContaining('000') });
    // An unnarrowed owner reads any workspace's row by id; narrowed to A, B's id is 404.
    expect((await owner('GET', `/v1/virtual-keys/${inB.body.id}`)).status).toBe(200);
    expect((await owner('GET', `/v1/virtual-keys/${inB.body.id}`, undefined, { 'x-gateway-workspace': 'team-a' })).status).toBe(404);
    // The owner's own (default) workspace has no `b-only`.
    expect((await owner('GET', '/v1/virtual-keys/b-only')).status).toBe(404);

    const made = await owner(
      'POST',
      '/v1/virtual-keys',
      { name: 'by owner', slug: 'owner-made', provider: 'openai', key: 'sk-owner' },
      { 'x-gateway-workspace': 'team-b' },
    );
    expect(made.body).toMatchObject({ workspace: 'team-b', workspace_id: wsB });
    expect((await as(adminB)('GET', '/v1/virtual-keys/owner-made')).status).toBe(200);
    expect((await as(adminA)('GET', '/v1/virtual-keys/owner-made')).status).toBe(404);
    expectError(await owner('GET', '/v1/virtual-keys', undefined, { 'x-gateway-workspace': 'no-such-team' }), 404, {
      type: 'not_found_error',
      code: 'workspace_not_found',
    });
  });
});

const REDIS_URL = process.env.TEST_REDIS_URL;
const STORES: [string, Record<string, string>][] = [['PostgreSQL', {}], ...(REDIS_URL ? [['Redis', { REDIS_URL }] as [string, Record<string, string>]] : [])];

describe.each(STORES)('workspace budgets and rate limits, counters in %s', (_store, env) => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  const ask = (key: Key, virtualKey: string, body: Record<string, unknown> = BODY) =>
    call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': virtualKey }, body, apiKey: key.key });

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway(env);
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  /** A workspace with a virtual key `openai` (created by the owner, narrowed to it) and two member keys. */
  async function team(slug: string, limits: Record<string, unknown>): Promise<{ id: string; keys: [Key, Key] }> {
    const id = await workspace(gateway, slug, limits);
    const vk = await call(gateway, '/v1/virtual-keys', {
      body: { name: 'openai', slug: 'openai', provider: 'openai', key: `sk-${slug}`, custom_host: `${mock.url}/v1` },
      headers: { 'x-gateway-workspace': slug },
    });
    expect(vk.body).toMatchObject({ workspace: slug });
    return { id, keys: [await apiKey(gateway, slug, 'member'), await apiKey(gateway, slug, 'member')] };
  }

  it("a workspace's budget holds across its keys: once spent, any of its keys gets 402 naming the workspace; other workspaces go on", async () => {
    const { id, keys } = await team('budgeted', { budget_limit_usd: 0.000151, budget_period: 'monthly' }); // just under 1 × COST
    const other = await team('unbudgeted', {});
    expect((await ask(keys[0], 'openai')).status).toBe(200);
    await gateway.flushLogs();
    const refused = await ask(keys[1], 'openai');
    expectError(refused, 402, { type: 'budget_exceeded', code: 'budget_exceeded', message: /workspace 'budgeted'/ });
    expect((await ask(keys[0], 'openai')).status).toBe(402);
    expect((await ask(other.keys[0], 'openai')).status).toBe(200);
    expect(mock.requests).toHaveLength(2);

    await gateway.flushLogs();
    const read = await admin(gateway, 'GET', '/v1/workspaces/budgeted');
    expect(read.body.spent_usd).toBeCloseTo(COST, 12);
    if (!env.REDIS_URL) {
      const [counter] = await gateway.dataSource.query(
        `select spent_usd::float8 as spent, reserved_usd::float8 as reserved from budget_counters where scope = 'workspace' and scope_id = $1`,
        [id],
      );
      expect(counter).toEqual({ spent: expect.closeTo(COST, 12), reserved: 0 });
    }

    // Raised, it applies at once on this instance (the directory reloads on the change).
    expect((await admin(gateway, 'PATCH', '/v1/workspaces/budgeted', { budget_limit_usd: 1 })).status).toBe(200);
    expect((await ask(keys[1], 'openai')).status).toBe(200);
  });

  it("a workspace's request rate limit counts every key of the workspace; 429 names the workspace", async () => {
    const { keys } = await team('rated', { rate_limits: [{ type: 'requests', unit: 'rpm', value: 3 }] });
    const other = await team('unrated', {});
    const small = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    await awayFromMinuteEnd();
    const statuses = [];
    for (const key of [keys[0], keys[1], keys[0]]) statuses.push((await ask(key, 'openai', small)).status);
    expect(statuses).toEqual([200, 200, 200]);
    const limited = await ask(keys[1], 'openai', small);
    expectError(limited, 429, { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: /^Workspace 'rated' is limited to 3 requests per minute/ });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await ask(keys[0], 'openai', small)).status).toBe(429);
    expect((await ask(other.keys[1], 'openai', small)).status).toBe(200);
    expect(mock.requests).toHaveLength(4);
  });

  it("a workspace's token limit counts the logged tokens of every key of the workspace", async () => {
    const { id, keys } = await team('token-rated', { rate_limits: [{ type: 'tokens', unit: 'rpm', value: 1000 }] });
    await awayFromMinuteEnd();
    expect((await ask(keys[0], 'openai')).status).toBe(200); // 1,003 tokens, logged
    await gateway.flushLogs();
    expectError(await ask(keys[1], 'openai'), 429, {
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      message: /^Workspace 'token-rated' is limited to 1000 tokens per minute/,
    });
    if (!env.REDIS_URL) {
      const [window] = await gateway.dataSource.query(
        `select used::int as used from rate_counters where scope = 'workspace' and scope_id = $1 and limit_key = 'tokens:rpm'`,
        [id],
      );
      expect(window).toEqual({ used: 1003 });
    }
  });

  it("end users' budgets are per workspace: the same user in two workspaces is two end users, each counting its own workspace's requests", async () => {
    const one = await team('one', {});
    const two = await team('two', {});
    const narrowed = (slug: string) => ({ 'x-gateway-workspace': slug });
    const created = await call(gateway, '/v1/end-users', { body: { user: 'carol', budget_limit_usd: 0.000151 }, headers: narrowed('one') }); // just under 1 × COST
    expect(created.body).toMatchObject({ workspace: 'one', user: 'carol' });
    const carol = { ...BODY, user: 'carol' };

    expect((await ask(one.keys[0], 'openai', carol)).status).toBe(200);
    await gateway.flushLogs();
    const refused = await ask(one.keys[1], 'openai', carol);
    expectError(refused, 402, { type: 'budget_exceeded', code: 'budget_exceeded', message: /end user/ });
    // In workspace two, carol has no budget (yet): served.
    expect((await ask(two.keys[0], 'openai', carol)).status).toBe(200);
    expect((await ask(two.keys[1], 'openai', carol)).status).toBe(200);
    await gateway.flushLogs();

    // Given one, her counter in two starts from two's rows only (2 × COST), not one's: a third request fits under 3 × COST, a fourth does not.
    const inTwo = await call(gateway, '/v1/end-users', { body: { user: 'carol', budget_limit_usd: 0.000455 }, headers: narrowed('two') });
    expect(inTwo.status).toBe(201);
    expect(inTwo.body.spent_usd).toBeCloseTo(2 * COST, 12);
    expect((await call(gateway, '/v1/end-users/carol', { headers: narrowed('one') })).body.spent_usd).toBeCloseTo(COST, 12);
    expect((await ask(two.keys[0], 'openai', carol)).status).toBe(200);
    await gateway.flushLogs();
    expect((await ask(two.keys[1], 'openai', carol)).status).toBe(402);
    expect((await ask(one.keys[0], 'openai', carol)).status).toBe(402);
  });
});
