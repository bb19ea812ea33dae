/**
 * The audit log (CONTRACT section 13): every admin change of every resource leaves one row
 * naming its actor, with the before and after views, secrets masked; a refused change
 * leaves none; only owners read it, paged and filtered, inside their workspace scope.
 */
import { call, createApiKey, expectError } from '../support/e2e-helpers';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const VK_SECRET = 'sk-audit-vk-secret-4f3e2d1c0b9a';
const VK_SECRET_2 = 'sk-audit-vk-rotated-8a7b6c5d4e3f';
const OPTION_SECRET = 'aws-audit-option-secret-5e6f7a8b';
const CONFIG_SECRET = 'sk-audit-config-secret-1a2b3c4d5e';
const MCP_SECRET = 'Bearer mcp-audit-token-7d8e9f0a1b2c';
const MCP_URL = 'https://93.184.215.14/mcp';

describe('audit log', () => {
  let gateway: TestGateway;
  let owner: { id: string; key: string; name: string };
  let workspaceAdmin: { id: string; key: string };
  const secrets: string[] = [VK_SECRET, VK_SECRET_2, OPTION_SECRET, CONFIG_SECRET, MCP_SECRET.slice(7)];

  /** The audit rows of one resource, oldest first. */
  const rowsOf = async (resource: string, resourceId: string, apiKey?: string) => {
    const res = await call(gateway, `/v1/audit-log?resource=${resource}&resource_id=${encodeURIComponent(resourceId)}`, apiKey ? { apiKey } : {});
    expect(res.status).toBe(200);
    return [...res.body.data].reverse();
  };
  const count = async () => Number((await gateway.dataSource.query('select count(*)::int as n from audit_log'))[0].n);
  const asOwner = (path: string, method: string, body?: unknown) => call(gateway, path, { method, body, apiKey: owner.key });

  beforeAll(async () => {
    gateway = await startTestGateway();
    owner = await createApiKey(gateway, { name: 'audit owner', role: 'owner' });
    workspaceAdmin = await createApiKey(gateway, { name: 'team admin', role: 'admin' });
    secrets.push(owner.key, workspaceAdmin.key);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('API keys: create, update and revoke each leave a row with the actor, before and after, and never the secret', async () => {
    const created = await asOwner('/v1/api-keys', 'POST', { name: 'ci bot', role: 'member', metadata: { team: 'ci' } });
    expect(created.status).toBe(201);
    secrets.push(created.body.key);
    const patched = await asOwner(`/v1/api-keys/${created.body.id}`, 'PATCH', { name: 'ci bot 2' });
    expect(patched.status).toBe(200);
    expect((await asOwner(`/v1/api-keys/${created.body.id}`, 'DELETE')).status).toBe(200);

    const rows = await rowsOf('api_key', created.body.id);
    expect(rows.map((r) => r.action)).toEqual(['create', 'update', 'revoke']);
    const { key: _secret, ...view } = created.body;
    for (const row of rows) {
      expect(row).toMatchObject({
        object: 'audit_log_entry',
        resource: 'api_key',
        resource_id: created.body.id,
        workspace_id: created.body.workspace_id,
        actor: { kind: 'api_key', id: owner.id, name: 'audit owner' },
      });
      expect(Object.keys(row).sort()).toEqual(['action', 'actor', 'after', 'before', 'created_at', 'id', 'object', 'resource', 'resource_id', 'workspace_id']);
    }
    expect(rows[0].before).toBeNull();
    // The secret of the new key is recorded as its hint, as every read shows it.
    expect(rows[0].after).toEqual({ ...view, key: created.body.key_hint });
    expect(rows[1].before).toEqual({ ...view, updated_at: expect.any(String) });
    expect(rows[1].after).toMatchObject({ id: created.body.id, name: 'ci bot 2', metadata: { team: 'ci' } });
    expect(rows[2].before).toMatchObject({ name: 'ci bot 2' });
    expect(rows[2].after).toBeNull();
  });

  it('virtual keys: the provider key and secret options only as hints', async () => {
    const created = await asOwner('/v1/virtual-keys', 'POST', {
      name: 'OpenAI',
      slug: 'openai-audit',
      provider: 'openai',
      key: VK_SECRET,
      provider_options: { session_token: OPTION_SECRET },
    });
    expect(created.status).toBe(201);
    expect((await asOwner('/v1/virtual-keys/openai-audit', 'PATCH', { key: VK_SECRET_2, allowed_models: ['gpt-4o'] })).status).toBe(200);
    expect((await asOwner('/v1/virtual-keys/openai-audit', 'DELETE')).status).toBe(200);
    const rows = await rowsOf('virtual_key', created.body.id);
    expect(rows.map((r) => r.action)).toEqual(['create', 'update', 'delete']);
    expect(rows[0].after).toMatchObject({ slug: 'openai-audit', key_hint: created.body.key_hint });
    expect(rows[1].before).toMatchObject({ key_hint: created.body.key_hint, allowed_models: null });
    expect(rows[1].after).toMatchObject({ allowed_models: ['gpt-4o'] });
    expect(rows[1].after.key_hint).not.toBe(created.body.key_hint);
    expect(rows[2]).toMatchObject({ before: { slug: 'openai-audit' }, after: null });
  });

  it('configs, prompts, MCP servers, end users: create, update, delete', async () => {
    const cases = [
      {
        resource: 'config',
        path: '/v1/configs',
        create: { name: 'Prod', slug: 'prod-audit', config: { provider: 'openai', api_key: CONFIG_SECRET } },
        update: { name: 'Prod 2' },
        field: 'name',
      },
      {
        resource: 'prompt',
        path: '/v1/prompts',
        create: { name: 'Reply', slug: 'reply-audit', model: 'gpt-4o', provider: 'openai', messages: [{ role: 'user', content: 'Hi {{name}}' }] },
        update: { name: 'Reply 2' },
        field: 'name',
      },
      {
        resource: 'mcp_server',
        path: '/v1/mcp-servers',
        create: { name: 'Files', slug: 'files-audit', url: MCP_URL, headers: { Authorization: MCP_SECRET } },
        update: { name: 'Files 2' },
        field: 'name',
      },
      {
        resource: 'end_user',
        path: '/v1/end-users',
        create: { user: 'ada@example.com', budget_limit_usd: 5, budget_period: 'monthly' },
        update: { budget_limit_usd: 7 },
        field: 'budget_limit_usd',
      },
    ];
    for (const c of cases) {
      const created = await asOwner(c.path, 'POST', c.create);
      expect({ resource: c.resource, status: created.status }).toEqual({ resource: c.resource, status: 201 });
      const updated = await asOwner(`${c.path}/${created.body.id}`, 'PATCH', c.update);
      expect(updated.status).toBe(200);
      expect((await asOwner(`${c.path}/${created.body.id}`, 'DELETE')).status).toBe(200);
      const rows = await rowsOf(c.resource, created.body.id);
      expect(rows.map((r) => `${r.resource} ${r.action}`)).toEqual([`${c.resource} create`, `${c.resource} update`, `${c.resource} delete`]);
      expect(rows.every((r) => r.actor.id === owner.id && r.workspace_id !== undefined)).toBe(true);
      expect(rows[0]).toMatchObject({ before: null, after: { id: created.body.id } });
      const field = c.field;
      expect(rows[1].before[field]).toEqual(created.body[field]);
      expect(rows[1].after[field]).toEqual((c.update as Record<string, unknown>)[field]);
      expect(rows[2].before).toMatchObject({ id: created.body.id, [field]: (c.update as Record<string, unknown>)[field] });
      expect(rows[2].after).toBeNull();
    }
  });

  it('workspaces and prices: organisation changes by an owner', async () => {
    const ws = await asOwner('/v1/workspaces', 'POST', { name: 'Search', slug: 'search-audit' });
    expect(ws.status).toBe(201);
    expect((await asOwner('/v1/workspaces/search-audit', 'PATCH', { budget_limit_usd: 10, budget_period: 'monthly' })).status).toBe(200);
    expect((await asOwner('/v1/workspaces/search-audit', 'DELETE')).status).toBe(200);
    const wsRows = await rowsOf('workspace', ws.body.id);
    expect(wsRows.map((r) => r.action)).toEqual(['create', 'update', 'delete']);
    expect(wsRows.every((r) => r.workspace_id === ws.body.id)).toBe(true);
    expect(wsRows[1]).toMatchObject({ before: { budget_limit_usd: null }, after: { budget_limit_usd: 10 } });

    const price = { provider: 'openai', model: 'audit-model', input: 1, output: 2 };
    expect((await asOwner('/v1/prices', 'POST', price)).status).toBe(201);
    expect((await asOwner('/v1/prices', 'POST', { ...price, output: 3 })).status).toBe(201);
    expect((await asOwner('/v1/prices/openai/audit-model', 'DELETE')).status).toBe(204);
    const priceRows = await rowsOf('price', 'openai/audit-model');
    expect(priceRows.map((r) => r.action)).toEqual(['create', 'update', 'delete']);
    expect(priceRows.every((r) => r.workspace_id === null)).toBe(true);
    expect(priceRows[0]).toMatchObject({ before: null, after: { provider: 'openai', model: 'audit-model', input: 1, output: 2, source: 'override' } });
    expect(priceRows[1]).toMatchObject({ before: { output: 2 }, after: { output: 3 } });
    expect(priceRows[2]).toMatchObject({ before: { output: 3 }, after: null });
  });

  it('names the acting key of another role, in its own workspace', async () => {
    const created = await call(gateway, '/v1/configs', {
      apiKey: workspaceAdmin.key,
      body: { name: 'By admin', slug: 'by-admin', config: { provider: 'openai', api_key: CONFIG_SECRET } },
    });
    expect(created.status).toBe(201);
    const [row] = await rowsOf('config', created.body.id);
    expect(row).toMatchObject({ action: 'create', actor: { kind: 'api_key', id: workspaceAdmin.id, name: 'team admin' } });
    const byActor = await call(gateway, `/v1/audit-log?actor_id=${workspaceAdmin.id}`);
    expect(byActor.body.data.map((r: any) => r.resource_id)).toEqual([created.body.id]);
  });

  it('a refused change (4xx) writes nothing', async () => {
    const before = await count();
    const refused = [
      await asOwner('/v1/api-keys', 'POST', { name: 'x', role: 'emperor' }),
      await asOwner('/v1/virtual-keys', 'POST', { name: 'x', slug: 'Bad Slug', key: VK_SECRET }),
      await asOwner('/v1/configs/no-such-config', 'PATCH', { name: 'y' }),
      await asOwner('/v1/prompts/no-such-prompt', 'DELETE'),
      await asOwner('/v1/workspaces/default', 'DELETE'),
      await asOwner('/v1/prices/openai/never-set', 'DELETE'),
      await asOwner('/v1/prices', 'POST', { provider: 'no-such-provider', model: 'm', input: 1, output: 1 }),
      await call(gateway, '/v1/workspaces', { apiKey: workspaceAdmin.key, body: { name: 'Nope', slug: 'nope' } }),
      await call(gateway, `/v1/api-keys/${owner.id}`, { method: 'DELETE', apiKey: workspaceAdmin.key }),
    ];
    expect(refused.map((r) => r.status)).toEqual([400, 400, 404, 404, 409, 404, 400, 403, 403]);
    expect(await count()).toBe(before);
  });

  it('stores no secret anywhere in the table', async () => {
    const [{ dump }] = await gateway.dataSource.query(`select coalesce(string_agg(t::text, '\n'), '') as dump from audit_log t`);
    expect(dump.length).toBeGreaterThan(1000);
    for (const secret of secrets) expect({ secret, found: dump.includes(secret) }).toEqual({ secret, found: false });
  });

  it('is for owners only: 403 for admin, member and viewer keys', async () => {
    const member = await createApiKey(gateway, { name: 'member', role: 'member' });
    const viewer = await createApiKey(gateway, { name: 'viewer', role: 'viewer' });
    for (const key of [workspaceAdmin.key, member.key, viewer.key]) {
      expectError(await call(gateway, '/v1/audit-log', { apiKey: key }), 403, { type: 'permission_error', code: 'owner_required' });
    }
    expect((await call(gateway, '/v1/audit-log', { apiKey: owner.key })).status).toBe(200);
  });

  it('pages newest first with limit and cursor, and filters by action, resource and time', async () => {
    const all = (await call(gateway, '/v1/audit-log?limit=500')).body.data as any[];
    expect(all.length).toBeGreaterThan(20);
    const times = all.map((r) => `${r.created_at}|${r.id}`);
    expect([...times].sort().reverse()).toEqual(times);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await call(gateway, `/v1/audit-log?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(7);
      seen.push(...page.body.data.map((r: any) => r.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((r) => r.id));

    const deletes = (await call(gateway, '/v1/audit-log?action=delete&resource=prompt')).body.data;
    expect(deletes).toHaveLength(1);
    expect(deletes[0]).toMatchObject({ action: 'delete', resource: 'prompt' });

    const middle = all[Math.floor(all.length / 2)].created_at;
    const later = (await call(gateway, `/v1/audit-log?limit=500&from=${encodeURIComponent(middle)}`)).body.data as any[];
    const earlier = (await call(gateway, `/v1/audit-log?limit=500&to=${encodeURIComponent(middle)}`)).body.data as any[];
    expect(later.every((r) => r.created_at >= middle) && earlier.every((r) => r.created_at < middle)).toBe(true);
    expect(later.length + earlier.length).toBe(all.length);

    expectError(await call(gateway, '/v1/audit-log?resource=spaceship'), 400, { type: 'invalid_request_error', param: 'resource' });
    expectError(await call(gateway, '/v1/audit-log?from=yesterday'), 400, { type: 'invalid_request_error', param: 'from' });
    expectError(await call(gateway, '/v1/audit-log?cursor=nonsense'), 400, { type: 'invalid_request_error', param: 'cursor' });
  });

  it('an owner narrowed by x-gateway-workspace sees only that workspace', async () => {
    const ws = await asOwner('/v1/workspaces', 'POST', { name: 'Ads', slug: 'ads-audit' });
    const inAds = await call(gateway, '/v1/end-users', {
      apiKey: owner.key,
      headers: { 'x-gateway-workspace': 'ads-audit' },
      body: { user: 'bob@example.com' },
    });
    expect(inAds.status).toBe(201);
    const narrowed = await call(gateway, '/v1/audit-log?limit=500', { apiKey: owner.key, headers: { 'x-gateway-workspace': 'ads-audit' } });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.data.map((r: any) => `${r.resource} ${r.action}`).sort()).toEqual(['end_user create', 'workspace create']);
    expect(narrowed.body.data.every((r: any) => r.workspace_id === ws.body.id)).toBe(true);
    const defaultOnly = await call(gateway, '/v1/audit-log?limit=500', { apiKey: owner.key, headers: { 'x-gateway-workspace': 'default' } });
    expect(defaultOnly.body.data.some((r: any) => r.workspace_id !== defaultOnly.body.data[0].workspace_id)).toBe(false);
    expect(defaultOnly.body.data.some((r: any) => r.resource === 'price')).toBe(false);
  });

  it('a change whose audit record cannot be written is a 503 the caller sees, naming what happened', async () => {
    await gateway.dataSource.query('alter table audit_log rename to audit_log_away');
    try {
      const res = await asOwner('/v1/end-users', 'POST', { user: 'carol@example.com' });
      expectError(res, 503, {
        type: 'service_unavailable',
        code: 'audit_log_unavailable',
        message: /end_user create was made, but its audit record could not be written/,
      });
    } finally {
      await gateway.dataSource.query('alter table audit_log_away rename to audit_log');
    }
  });
});
