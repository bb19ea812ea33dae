import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';
import { call, chat, createApiKey, createConfig, createVirtualKey, expectError, logOf, openai } from '../support/e2e-helpers';

const VK_SECRET = 'sk-admin-vk-secret-9f8e7d6c5b4a';
const CONFIG_SECRET = 'sk-admin-config-secret-1a2b3c4d5e';
const INLINE_SECRET = 'sk-admin-inline-secret-6f7a8b9c0d';
const DIRECT_SECRET = 'sk-admin-direct-secret-2e3f4a5b6c';
const MCP_SECRET = 'mcp-secret-token-7d8e9f0a1b';

/** Admin CRUD of API keys, virtual keys and configs; secrets never come back nor get stored in clear. */
describe('admin API and secrets at rest', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  describe('API keys', () => {
    it('create returns the secret once; list and get never return it nor its hash', async () => {
      const created = await createApiKey(gateway, { name: 'ci bot', role: 'user', metadata: { team: 'ci' }, budget_limit_usd: 5, budget_period: 'monthly' });
      expect(created).toMatchObject({
        object: 'api_key',
        name: 'ci bot',
        role: 'member',
        workspace: 'default',
        metadata: { team: 'ci' },
        budget_limit_usd: 5,
        budget_period: 'monthly',
        spent_usd: 0,
      });
      expect(created.key).toMatch(/^gk-[A-Za-z0-9_-]{20,}$/);
      expect(created.key_hint).not.toContain(created.key.slice(3, -4));

      const list = await admin(gateway, 'GET', '/v1/api-keys');
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({ object: 'list', next_cursor: null });
      const listed = list.body.data.find((k: any) => k.id === created.id);
      const got = await admin(gateway, 'GET', `/v1/api-keys/${created.id}`);
      for (const row of [listed, got.body]) {
        const { key: _key, ...rest } = created;
        expect(row).toEqual({ ...rest, updated_at: expect.any(String) });
        expect(Object.keys(row)).not.toEqual(expect.arrayContaining(['key']));
        expect(JSON.stringify(row)).not.toMatch(/key_hash|keyHash/);
        expect(JSON.stringify(row)).not.toContain(created.key);
      }
      expect(JSON.stringify(list.body)).not.toContain(created.key);
    });

    it('PATCH changes fields; DELETE revokes and the key then gets 401', async () => {
      const created = await createApiKey(gateway, { name: 'temp', role: 'admin' });
      expect((await call(gateway, '/v1/api-keys', { apiKey: created.key })).status).toBe(200);

      const patched = await admin(gateway, 'PATCH', `/v1/api-keys/${created.id}`, { name: 'renamed', role: 'user', metadata: { env: 'prod' } });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ id: created.id, name: 'renamed', role: 'member', metadata: { env: 'prod' } });
      expect(patched.body.key).toBeUndefined();
      expectError(await call(gateway, '/v1/api-keys', { apiKey: created.key }), 403, { type: 'permission_error', code: 'admin_required' });

      const deleted = await admin(gateway, 'DELETE', `/v1/api-keys/${created.id}`);
      expect(deleted).toEqual({ status: 200, body: { id: created.id, object: 'api_key', deleted: true } });
      expectError(await call(gateway, '/v1/logs', { apiKey: created.key }), 401, { type: 'authentication_error', code: 'invalid_api_key' });
      expect((await admin(gateway, 'GET', `/v1/api-keys/${created.id}`)).status).toBe(404);
      expect((await admin(gateway, 'GET', '/v1/api-keys')).body.data.map((k: any) => k.id)).not.toContain(created.id);
    });

    it("a PATCHed key's metadata and role apply to its next request", async () => {
      await createVirtualKey(gateway, { slug: 'patch-meta-vk', key: 'sk-patch-meta-000000', custom_host: `${mock.url}/v1` });
      const created = await createApiKey(gateway, { name: 'meta', metadata: { stage: 'one' } });
      const before = await chat(gateway, { 'x-gateway-virtual-key': 'patch-meta-vk' }, {}, created.key);
      expect((await logOf(gateway, before.headers.get('x-gateway-request-id'))).metadata).toEqual({ stage: 'one' });
      expect((await admin(gateway, 'PATCH', `/v1/api-keys/${created.id}`, { metadata: { stage: 'two' }, role: 'admin' })).status).toBe(200);
      const after = await chat(gateway, { 'x-gateway-virtual-key': 'patch-meta-vk' }, {}, created.key);
      expect((await logOf(gateway, after.headers.get('x-gateway-request-id'))).metadata).toEqual({ stage: 'two' });
      expect((await call(gateway, '/v1/api-keys', { apiKey: created.key })).status).toBe(200);
    });

    it('an expired API key gets 401', async () => {
      const created = await createApiKey(gateway, { name: 'old', expires_at: new Date(Date.now() - 1000).toISOString() });
      expectError(await call(gateway, '/v1/logs', { apiKey: created.key }), 401, { type: 'authentication_error', message: /expired/ });
    });
  });

  describe('virtual keys', () => {
    it('never returns the key, shows a masked hint, 409 on a duplicate slug, PATCH, DELETE then 404', async () => {
      const created = await createVirtualKey(gateway, {
        slug: 'crud-vk',
        name: 'CRUD',
        key: VK_SECRET,
        custom_host: `${mock.url}/v1`,
        allowed_models: ['gpt-4o-mini'],
      });
      expect(created).toMatchObject({
        object: 'virtual_key',
        slug: 'crud-vk',
        provider: 'openai',
        custom_host: `${mock.url}/v1`,
        allowed_models: ['gpt-4o-mini'],
        disabled: false,
        spent_usd: 0,
      });
      expect(created.key).toBeUndefined();
      expect(created.key_hint).toEqual(expect.any(String));
      expect(created.key_hint).not.toContain(VK_SECRET.slice(3, -4));
      expect(JSON.stringify(created)).not.toContain(VK_SECRET);

      const duplicate = await call(gateway, '/v1/virtual-keys', { body: { name: 'again', slug: 'crud-vk', provider: 'openai', key: 'sk-other-000000000' } });
      expectError(duplicate, 409, { code: 'slug_taken', param: 'slug', message: /crud-vk/, type: 'invalid_request_error' });

      const patched = await admin(gateway, 'PATCH', '/v1/virtual-keys/crud-vk', { name: 'CRUD 2', allowed_models: null });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ id: created.id, name: 'CRUD 2', allowed_models: null, key_hint: created.key_hint });
      for (const path of ['/v1/virtual-keys/crud-vk', `/v1/virtual-keys/${created.id}`, '/v1/virtual-keys']) {
        const read = await admin(gateway, 'GET', path);
        expect(read.status).toBe(200);
        expect(JSON.stringify(read.body)).not.toContain(VK_SECRET);
        expect(JSON.stringify(read.body)).not.toMatch(/encrypted/);
      }
      expect((await chat(gateway, { 'x-gateway-virtual-key': 'crud-vk' })).status).toBe(200);

      expect(await admin(gateway, 'DELETE', '/v1/virtual-keys/crud-vk')).toEqual({
        status: 200,
        body: { id: created.id, object: 'virtual_key', deleted: true },
      });
      expect((await admin(gateway, 'GET', '/v1/virtual-keys/crud-vk')).status).toBe(404);
      expectError(await chat(gateway, { 'x-gateway-virtual-key': 'crud-vk' }), 404, { type: 'not_found_error', code: 'virtual_key_not_found' });
    });

    it('rejects an unknown provider and a missing key with a 400 naming the field', async () => {
      const unknown = await call(gateway, '/v1/virtual-keys', { body: { name: 'x', slug: 'x-unknown', provider: 'openia', key: 'k' } });
      expectError(unknown, 400, { type: 'invalid_request_error', param: 'provider', message: /openia/ });
      const keyless = await call(gateway, '/v1/virtual-keys', { body: { name: 'x', slug: 'x-keyless', provider: 'openai' } });
      expectError(keyless, 400, { type: 'invalid_request_error', param: 'key' });
    });
  });

  describe('configs', () => {
    it('masks credentials on read and bumps the version when the config changes', async () => {
      const created = await createConfig(gateway, 'crud-config', { provider: 'openai', api_key: CONFIG_SECRET, custom_host: `${mock.url}/v1` });
      expect(created).toMatchObject({ object: 'config', slug: 'crud-config', version: 1, config: { provider: 'openai', custom_host: `${mock.url}/v1` } });
      expect(created.config.api_key).toEqual(expect.any(String));
      expect(created.config.api_key).not.toBe(CONFIG_SECRET);
      expect(created.config.api_key).not.toContain(CONFIG_SECRET.slice(3, -4));

      const renamed = await admin(gateway, 'PATCH', '/v1/configs/crud-config', { name: 'Renamed' });
      expect(renamed.body).toMatchObject({ name: 'Renamed', version: 1 });
      const changed = await admin(gateway, 'PATCH', '/v1/configs/crud-config', {
        config: { targets: [{ provider: 'openai', api_key: CONFIG_SECRET, custom_host: `${mock.url}/v1` }] },
      });
      expect(changed.body).toMatchObject({ version: 2 });
      expect(changed.body.config.targets[0].api_key).not.toBe(CONFIG_SECRET);
      for (const path of ['/v1/configs/crud-config', `/v1/configs/${created.id}`, '/v1/configs']) {
        expect(JSON.stringify((await admin(gateway, 'GET', path)).body)).not.toContain(CONFIG_SECRET);
      }
      const routed = await chat(gateway, { 'x-gateway-config': 'crud-config' });
      expect(routed.status).toBe(200);
      expect(routed.headers.get('x-gateway-target-index')).toBe('0'); // the new version serves at once

      // The config read (credentials masked), edited and saved whole keeps its credential.
      const read = (await admin(gateway, 'GET', '/v1/configs/crud-config')).body.config;
      const resaved = await admin(gateway, 'PATCH', '/v1/configs/crud-config', { config: { ...read, request_timeout: 20000 } });
      expect(resaved.body).toMatchObject({ version: 3, config: { request_timeout: 20000 } });
      mock.reset();
      expect((await chat(gateway, { 'x-gateway-config': 'crud-config' })).status).toBe(200);
      expect(mock.requests[0].headers.authorization).toBe(`Bearer ${CONFIG_SECRET}`);

      const invalid = await call(gateway, '/v1/configs/crud-config', { method: 'PATCH', body: { config: { retry: { attempts: 99 } } } });
      expectError(invalid, 400, { type: 'invalid_request_error', code: 'invalid_config', message: /config\.retry\.attempts/ });
      expect((await admin(gateway, 'DELETE', '/v1/configs/crud-config')).status).toBe(200);
      expect((await admin(gateway, 'GET', '/v1/configs/crud-config')).status).toBe(404);
      expectError(await chat(gateway, { 'x-gateway-config': 'crud-config' }), 404, { type: 'not_found_error', code: 'config_not_found' });
    });
  });

  describe('config versions', () => {
    const OLD_SECRET = 'sk-version-old-secret-3c4d5e6f7a';
    const NEW_SECRET = 'sk-version-new-secret-8b9c0d1e2f';
    const target = (apiKey: string) => ({ provider: 'openai', api_key: apiKey, custom_host: `${mock.url}/v1` });
    const storedVersions = (configId: string) => gateway.dataSource.query('select * from config_versions where config_id = $1 order by version', [configId]);

    it('a new config body is a new version; the old one stays readable, masked on read and encrypted at rest', async () => {
      const created = await createConfig(gateway, 'versioned', target(OLD_SECRET));
      expect(created.version).toBe(1);
      const changed = await admin(gateway, 'PATCH', '/v1/configs/versioned', { name: 'Versioned', config: { targets: [target(NEW_SECRET)] } });
      expect(changed).toMatchObject({ status: 200, body: { id: created.id, name: 'Versioned', version: 2 } });

      const latest = await admin(gateway, 'GET', '/v1/configs/versioned');
      expect(latest).toEqual({ status: 200, body: changed.body });
      expect(await admin(gateway, 'GET', '/v1/configs/versioned?version=2')).toEqual({ status: 200, body: changed.body });
      const first = await admin(gateway, 'GET', `/v1/configs/${created.id}?version=1`);
      expect(first).toEqual({ status: 200, body: created });
      expect(first.body.config.api_key).toEqual(expect.any(String));

      const rows = await storedVersions(created.id);
      expect(rows.map((row: any) => [row.version, row.name])).toEqual([
        [1, 'versioned'],
        [2, 'Versioned'],
      ]);
      for (const dump of [JSON.stringify(rows), JSON.stringify(first.body), JSON.stringify(latest.body)]) {
        expect(dump).not.toContain(OLD_SECRET);
        expect(dump).not.toContain(NEW_SECRET);
      }

      mock.reset();
      expect((await chat(gateway, { 'x-gateway-config': 'versioned' })).status).toBe(200);
      expect(mock.requests[0].headers.authorization).toBe(`Bearer ${NEW_SECRET}`); // requests use the latest version
    });

    it('a rename alone keeps the version', async () => {
      const created = await createConfig(gateway, 'renamed-only', target(OLD_SECRET));
      const renamed = await admin(gateway, 'PATCH', '/v1/configs/renamed-only', { name: 'New name' });
      expect(renamed).toMatchObject({ status: 200, body: { name: 'New name', version: 1, config: created.config } });
      expect((await storedVersions(created.id)).map((row: any) => row.version)).toEqual([1]);
    });

    it('/versions lists newest first, masked, and pages with limit and next_cursor', async () => {
      const created = await createConfig(gateway, 'paged-versions', target('sk-paged-1-000000000'));
      for (let version = 2; version <= 7; version++) {
        const patched = await admin(gateway, 'PATCH', '/v1/configs/paged-versions', { config: target(`sk-paged-${version}-000000000`) });
        expect(patched.body.version).toBe(version);
      }

      const all = await admin(gateway, 'GET', `/v1/configs/${created.id}/versions`);
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ object: 'list', next_cursor: null });
      expect(all.body.data.map((row: any) => row.version)).toEqual([7, 6, 5, 4, 3, 2, 1]);
      expect(all.body.data[6]).toEqual({ version: 1, name: 'paged-versions', created_at: created.created_at, config: created.config });
      expect(JSON.stringify(all.body)).not.toMatch(/sk-paged-\d-0+/);

      const walked: number[][] = [];
      let cursor: string | null = null;
      do {
        const page: any = await admin(gateway, 'GET', `/v1/configs/paged-versions/versions?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        walked.push(page.body.data.map((row: any) => row.version));
        cursor = page.body.next_cursor;
      } while (cursor && walked.length < 10);
      expect(walked).toEqual([[7, 6, 5], [4, 3, 2], [1]]);
    });

    it('an unknown version is a 404; a version or cursor that is not a positive integer is a 400 naming it', async () => {
      await createConfig(gateway, 'bad-reads', target(OLD_SECRET));
      expectError(await call(gateway, '/v1/configs/bad-reads?version=2'), 404, { type: 'not_found_error', code: 'config_version_not_found', param: null });
      expectError(await call(gateway, '/v1/configs/no-such-config/versions'), 404, { type: 'not_found_error', code: 'config_not_found' });
      for (const version of ['0', '-1', '1.5', 'two', '99999999999']) {
        expectError(await call(gateway, `/v1/configs/bad-reads?version=${version}`), 400, {
          type: 'invalid_request_error',
          param: 'version',
          message: /version/,
        });
      }
      expectError(await call(gateway, '/v1/configs/bad-reads/versions?cursor=abc'), 400, { type: 'invalid_request_error', param: 'cursor' });
    });

    it('10 concurrent PATCHes make versions 2..11, no gaps, no duplicates', async () => {
      const created = await createConfig(gateway, 'contended', target('sk-contended-0-000000000'));
      const patches = await Promise.all(
        Array.from({ length: 10 }, (_, i) => admin(gateway, 'PATCH', '/v1/configs/contended', { config: target(`sk-contended-${i + 1}-000000000`) })),
      );
      expect(patches.map((p) => p.status)).toEqual(Array(10).fill(200));
      expect(patches.map((p) => p.body.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect((await storedVersions(created.id)).map((row: any) => row.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const last = patches.find((p) => p.body.version === 11)!;
      expect((await admin(gateway, 'GET', '/v1/configs/contended')).body).toEqual(last.body);
    });
  });

  it('admin lists page with limit and next_cursor through every row, newest first, even rows created in one millisecond', async () => {
    const keys = await Promise.all(Array.from({ length: 12 }, (_, i) => createApiKey(gateway, { name: `bulk ${i}` })));
    const vks = await Promise.all(Array.from({ length: 12 }, (_, i) => createVirtualKey(gateway, { slug: `bulk-${i}`, key: `sk-bulk-${i}-000000000` })));
    // Rows created concurrently share a millisecond and differ in microseconds (PostgreSQL now() precision): make that certain.
    for (const [table, rows] of [
      ['api_keys', keys],
      ['virtual_keys', vks],
    ] as const) {
      for (const [i, row] of rows.entries()) {
        await gateway.dataSource.query(`update ${table} set created_at = timestamptz '2030-01-01 00:00:00.123' + $1 * interval '1 microsecond' where id = $2`, [
          i * 37,
          row.id,
        ]);
      }
    }
    for (const resource of ['/v1/api-keys', '/v1/virtual-keys']) {
      const all = (await admin(gateway, 'GET', `${resource}?limit=500`)).body.data.map((row: any) => row.id);
      expect(all.length).toBeGreaterThanOrEqual(12);
      const walked: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 50; pages++) {
        const page: any = await admin(gateway, 'GET', `${resource}?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        walked.push(...page.body.data.map((row: any) => row.id));
        cursor = page.body.next_cursor;
        if (!cursor) break;
      }
      expect({ resource, walked }).toEqual({ resource, walked: all });
    }
  });

  it('a deleted virtual key frees its slug; a new key under it routes with the new credential', async () => {
    const first = await createVirtualKey(gateway, { slug: 'reused', key: 'sk-reused-first-000000', custom_host: `${mock.url}/v1` });
    expect((await chat(gateway, { 'x-gateway-virtual-key': 'reused' })).status).toBe(200);
    expect((await admin(gateway, 'DELETE', '/v1/virtual-keys/reused')).status).toBe(200);
    const second = await createVirtualKey(gateway, { slug: 'reused', key: 'sk-reused-second-000000', custom_host: `${mock.url}/v1` });
    expect(second.id).not.toBe(first.id);
    mock.reset();
    expect((await chat(gateway, { 'x-gateway-virtual-key': 'reused' })).status).toBe(200);
    expect(mock.requests[0].headers.authorization).toBe('Bearer sk-reused-second-000000');
    expect((await admin(gateway, 'PATCH', '/v1/virtual-keys/reused', { key: 'sk-reused-rotated-000000' })).status).toBe(200);
    mock.reset();
    expect((await chat(gateway, { 'x-gateway-virtual-key': 'reused' })).status).toBe(200);
    expect(mock.requests[0].headers.authorization).toBe('Bearer sk-reused-rotated-000000');
  });

  it('no secret is stored in clear in any table', async () => {
    const user = await createApiKey(gateway, { name: 'secret-test user' });
    await createVirtualKey(gateway, { slug: 'secret-vk', key: VK_SECRET, custom_host: `${mock.url}/v1` });
    await createConfig(gateway, 'secret-config', { provider: 'openai', api_key: CONFIG_SECRET, custom_host: `${mock.url}/v1` });
    const inline = JSON.stringify({ provider: 'openai', api_key: INLINE_SECRET, custom_host: `${mock.url}/v1` });
    const mcpTools = [{ type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com/sse', headers: { Authorization: `Bearer ${MCP_SECRET}` } }];

    const responses = [
      await chat(gateway, { 'x-gateway-virtual-key': 'secret-vk' }, { tools: mcpTools }, user.key),
      await chat(gateway, { 'x-gateway-config': 'secret-config' }, {}, user.key),
      await chat(gateway, { 'x-gateway-config': inline }),
      await chat(gateway, { 'x-gateway-provider': 'openai', authorization: `Bearer ${DIRECT_SECRET}`, 'x-gateway-custom-host': `${mock.url}/v1` }),
      await chat(gateway, { 'x-gateway-virtual-key': 'secret-vk' }, { model: 'mock-error-401' }),
      await chat(
        gateway,
        { 'x-gateway-virtual-key': 'secret-vk' },
        { model: 'mock-stream-cut', stream: true, mcp_servers: [{ authorization_token: MCP_SECRET }] },
      ),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 401, 200]);
    const { response: sdk } = await openai(gateway, { 'x-gateway-virtual-key': 'secret-vk' }, DIRECT_SECRET, user.key)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(mock.requests.some((r) => r.body?.tools?.[0]?.headers?.Authorization === `Bearer ${MCP_SECRET}`)).toBe(true); // forwarded intact

    const mcpLog = await logOf(gateway, responses[0].headers.get('x-gateway-request-id'));
    expect(mcpLog.request_body.tools[0]).toEqual({ ...mcpTools[0], headers: { Authorization: '[REDACTED]' } });
    expect((await logOf(gateway, sdk.headers.get('x-gateway-request-id'))).request_headers.authorization).toBe('[REDACTED]');

    const secrets = [VK_SECRET, CONFIG_SECRET, INLINE_SECRET, DIRECT_SECRET, MCP_SECRET, gateway.adminKey, user.key];
    for (const table of ['request_logs', 'virtual_keys', 'configs', 'api_keys']) {
      const rows = await gateway.dataSource.query(`select * from ${table}`);
      expect(rows.length).toBeGreaterThan(0);
      const dump = JSON.stringify(rows);
      for (const secret of secrets) expect(`${table}: ${dump.includes(secret) ? secret : 'clean'}`).toBe(`${table}: clean`);
    }
  });
});
