/**
 * The MCP server registry (CONTRACT section 10, issue 23): admin CRUD of /v1/mcp-servers with
 * headers encrypted at rest and masked on every read, the URL host policy (MCP_ALLOWED_NETWORKS),
 * the keys' allowed_mcp_servers / allowed_tools, and McpRegistry's view for the request path.
 */
import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGatewayApp } from '../../src/app.factory';
import { maskSecret } from '../../src/common/crypto/secret-box';
import { validateEnvironment } from '../../src/config/environment';
import { McpServers1764001300000 } from '../../src/database/migrations/1764001300000-McpServers';
import { Workspaces1764001700000 } from '../../src/database/migrations/1764001700000-Workspaces';
import { KeyLookupService } from '../../src/modules/keys/key-lookup.service';
import { McpRegistry } from '../../src/modules/mcp/mcp-registry';
import { DEFAULT_WORKSPACE_ID } from '../../src/modules/workspaces/workspace.entity';
import { call, createApiKey, createVirtualKey, expectError, waitFor } from '../support/e2e-helpers';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const SECRET = 'Bearer mcp-secret-token-0123456789abcdef';
const OTHER_SECRET = 'mcp-other-secret-value-42';
/** Public addresses as IP literals: the registration check needs no DNS for them. */
const PUBLIC_URL = 'https://93.184.215.14/mcp';
const ENCRYPTION_KEY = randomBytes(32).toString('hex');

describe('MCP server registry', () => {
  let gateway: TestGateway;
  let registry: McpRegistry;
  let lookup: KeyLookupService;
  /** Everything the gateway writes to stdout/stderr while it runs: secrets must never be in it. */
  let output = '';
  const writes: jest.SpyInstance[] = [];

  beforeAll(async () => {
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      writes.push(
        jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
          output += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
          return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
        }),
      );
    }
    gateway = await startTestGateway({ MCP_ALLOWED_NETWORKS: '10.1.2.0/24, 127.0.0.2', LOG_LEVEL: 'debug', GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    registry = gateway.app.get(McpRegistry);
    lookup = gateway.app.get(KeyLookupService);
  });

  afterAll(async () => {
    await gateway?.close();
    for (const spy of writes) spy.mockRestore();
  });

  const register = (body: Record<string, unknown>) => admin(gateway, 'POST', '/v1/mcp-servers', { name: String(body.slug), url: PUBLIC_URL, ...body });

  it('registers, reads (by id and slug), lists, updates and deletes a server; headers are masked on every read and encrypted at rest', async () => {
    const created = await register({
      slug: 'files',
      name: 'Files',
      headers: { Authorization: SECRET, 'X-Short': 'abc' },
      allowed_tools: ['read', 'list'],
      description: 'File server',
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'mcp_server',
      name: 'Files',
      slug: 'files',
      workspace: 'default',
      workspace_id: DEFAULT_WORKSPACE_ID,
      url: PUBLIC_URL,
      headers: { Authorization: maskSecret(SECRET), 'X-Short': '…' },
      allowed_tools: ['read', 'list'],
      description: 'File server',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const { id } = created.body;

    const reads = [
      created,
      await admin(gateway, 'GET', `/v1/mcp-servers/${id}`),
      await admin(gateway, 'GET', '/v1/mcp-servers/files'),
      await admin(gateway, 'GET', '/v1/mcp-servers'),
    ];
    expect(reads[1].body).toEqual(created.body);
    expect(reads[2].body).toEqual(created.body);
    expect(reads[3].body).toMatchObject({ object: 'list', data: [created.body], next_cursor: null });
    for (const read of reads) expect(JSON.stringify(read.body)).not.toContain('mcp-secret-token');

    const [stored] = await gateway.dataSource.query(`select headers::text as headers from mcp_servers where id = $1`, [id]);
    expect(stored.headers).toMatch(/"Authorization": "v1\./);
    expect(stored.headers).not.toContain('mcp-secret-token');
    expect(stored.headers).not.toContain('"abc"');

    // The request path sees the decrypted headers.
    expect(await registry.find(DEFAULT_WORKSPACE_ID, 'files')).toEqual({
      id,
      slug: 'files',
      name: 'Files',
      url: PUBLIC_URL,
      headers: { Authorization: SECRET, 'X-Short': 'abc' },
      allowedTools: ['read', 'list'],
      description: 'File server',
    });
    expect(await registry.find(DEFAULT_WORKSPACE_ID, id)).toMatchObject({ slug: 'files' });

    const patched = await admin(gateway, 'PATCH', '/v1/mcp-servers/files', { name: 'Files v2', description: null, allowed_tools: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Files v2', description: null, allowed_tools: null, headers: { Authorization: maskSecret(SECRET) } });
    expect(await registry.find(DEFAULT_WORKSPACE_ID, 'files')).toMatchObject({ name: 'Files v2', allowedTools: null, description: null });

    const deleted = await admin(gateway, 'DELETE', `/v1/mcp-servers/${id}`);
    expect(deleted).toEqual({ status: 200, body: { id, object: 'mcp_server', deleted: true } });
    expectError(await call(gateway, '/v1/mcp-servers/files'), 404, { type: 'not_found_error', code: 'mcp_server_not_found' });
    expect(await registry.find(DEFAULT_WORKSPACE_ID, 'files')).toBeNull();
    // A deleted server's slug may be reused.
    expect((await register({ slug: 'files' })).status).toBe(201);
  });

  it('keeps a stored header sent back masked, replaces one sent anew, drops one left out', async () => {
    const created = await register({ slug: 'keep', headers: { authorization: SECRET, 'x-api-key': OTHER_SECRET } });
    expect(created.status).toBe(201);
    // What a client read, sent back as it is (header names compared as HTTP does).
    const kept = await admin(gateway, 'PATCH', '/v1/mcp-servers/keep', {
      headers: { Authorization: created.body.headers.authorization, 'x-api-key': created.body.headers['x-api-key'] },
    });
    expect(kept.status).toBe(200);
    expect((await registry.find(DEFAULT_WORKSPACE_ID, 'keep'))?.headers).toEqual({ Authorization: SECRET, 'x-api-key': OTHER_SECRET });

    const replaced = await admin(gateway, 'PATCH', '/v1/mcp-servers/keep', { headers: { Authorization: 'Bearer a-brand-new-token-777' } });
    expect(replaced.body.headers).toEqual({ Authorization: maskSecret('Bearer a-brand-new-token-777') });
    expect((await registry.find(DEFAULT_WORKSPACE_ID, 'keep'))?.headers).toEqual({ Authorization: 'Bearer a-brand-new-token-777' });
  });

  it('answers 409 for a live duplicate slug, 404 for an unknown server, 403 for a user key, 400 naming the field for bad input', async () => {
    expect((await register({ slug: 'dup' })).status).toBe(201);
    expectError(await call(gateway, '/v1/mcp-servers', { body: { name: 'again', slug: 'dup', url: PUBLIC_URL } }), 409, {
      type: 'invalid_request_error',
      code: 'slug_taken',
      param: 'slug',
    });

    for (const path of ['/v1/mcp-servers/nope', '/v1/mcp-servers/00000000-0000-4000-8000-000000000000']) {
      expectError(await call(gateway, path), 404, { type: 'not_found_error', code: 'mcp_server_not_found' });
      expectError(await call(gateway, path, { method: 'PATCH', body: { name: 'x' } }), 404, { type: 'not_found_error' });
      expectError(await call(gateway, path, { method: 'DELETE' }), 404, { type: 'not_found_error' });
    }

    const user = await createApiKey(gateway, { name: 'mcp user' });
    expectError(await call(gateway, '/v1/mcp-servers', { apiKey: user.key }), 403, { type: 'permission_error' });
    expectError(await call(gateway, '/v1/mcp-servers', { apiKey: user.key, body: { name: 'x', slug: 'x', url: PUBLIC_URL } }), 403, {
      type: 'permission_error',
    });
    expectError(await call(gateway, '/v1/mcp-servers/dup', { apiKey: user.key, method: 'DELETE' }), 403, { type: 'permission_error' });

    const bad: [Record<string, unknown>, string][] = [
      [{ slug: 'Bad Slug' }, 'slug'],
      [{ slug: 'ok', url: 'ftp://93.184.215.14/mcp' }, 'url'],
      [{ slug: 'ok', url: 'not a url' }, 'url'],
      [{ slug: 'ok', url: 'https://user:pass@93.184.215.14/mcp' }, 'url'],
      [{ slug: 'ok', headers: { Authorization: 42 } }, 'headers'],
      [{ slug: 'ok', headers: { 'bad header': 'x' } }, 'headers'],
      [{ slug: 'ok', headers: { 'x-a': 'line\r\nbreak' } }, 'headers'],
      [{ slug: 'ok', headers: ['x'] }, 'headers'],
      [{ slug: 'ok', allowed_tools: 'read' }, 'allowed_tools'],
      [{ slug: 'ok', allowed_tools: [1] }, 'allowed_tools'],
      [{ slug: 'ok', name: null }, 'name'],
    ];
    for (const [body, param] of bad) {
      const response = await call(gateway, '/v1/mcp-servers', { body: { name: 'n', url: PUBLIC_URL, ...body } });
      expectError(response, 400, { type: 'invalid_request_error', param, message: new RegExp(param) });
    }
    expectError(await call(gateway, '/v1/mcp-servers/dup', { method: 'PATCH', body: { url: null } }), 400, { type: 'invalid_request_error', param: 'url' });
    expectError(await call(gateway, '/v1/mcp-servers', { body: { name: 'n', slug: 'ok', url: PUBLIC_URL, headers: { 'x-long': 'x'.repeat(9000) } } }), 400, {
      type: 'invalid_request_error',
      param: 'headers',
    });
    expectError(await call(gateway, '/v1/mcp-servers', { body: '[1, 2]' }), 400, { type: 'invalid_request_error' });
    expect(await registry.find(DEFAULT_WORKSPACE_ID, 'ok')).toBeNull();
    // Hostile ids are unknown servers (a NUL, which no text column can hold, bad input), not failures.
    for (const id of ['%E2%80%AE', 'x'.repeat(5000), "'%20or%201=1--"])
      expectError(await call(gateway, `/v1/mcp-servers/${id}`), 404, { type: 'not_found_error' });
    expectError(await call(gateway, '/v1/mcp-servers/%00'), 400, { type: 'invalid_request_error' });
  });

  it('refuses link-local/metadata hosts always, private ones outside MCP_ALLOWED_NETWORKS, at registration and on a url change', async () => {
    const refused: [string, RegExp][] = [
      ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is a link-local, metadata or reserved address/],
      ['http://[fd00:ec2::254]/mcp', /link-local, metadata or reserved/],
      ['http://10.9.9.9:8080/mcp', /10\.9\.9\.9 is a private address \(list its network in MCP_ALLOWED_NETWORKS/],
      ['http://127.0.0.1:3000/mcp', /127\.0\.0\.1 is a private address/],
      ['http://localhost:3000/mcp', /MCP server host localhost is not allowed: .*private address/],
    ];
    for (const [url, message] of refused) {
      expectError(await call(gateway, '/v1/mcp-servers', { body: { name: 'x', slug: 'refused', url } }), 400, {
        type: 'invalid_request_error',
        code: 'mcp_server_not_allowed',
        param: 'url',
        message,
      });
    }
    expect(await registry.find(DEFAULT_WORKSPACE_ID, 'refused')).toBeNull();
    expectError(await call(gateway, '/v1/mcp-servers', { body: { name: 'x', slug: 'refused', url: 'http://no-such-host.invalid/mcp' } }), 400, {
      type: 'invalid_request_error',
      code: 'mcp_server_unresolvable',
      param: 'url',
    });

    // Inside MCP_ALLOWED_NETWORKS (10.1.2.0/24 and 127.0.0.2): allowed.
    expect((await register({ slug: 'internal', url: 'http://10.1.2.3:8080/mcp' })).status).toBe(201);
    expect((await register({ slug: 'loopback', url: 'http://127.0.0.2:9000/mcp' })).status).toBe(201);

    // A url change is checked too, and a refused one leaves the server as it was.
    expectError(await call(gateway, '/v1/mcp-servers/internal', { method: 'PATCH', body: { url: 'http://169.254.169.254/' } }), 400, {
      code: 'mcp_server_not_allowed',
      type: 'invalid_request_error',
      param: 'url',
    });
    expectError(await call(gateway, '/v1/mcp-servers/internal', { method: 'PATCH', body: { url: 'http://10.1.3.1/mcp' } }), 400, {
      code: 'mcp_server_not_allowed',
      type: 'invalid_request_error',
    });
    expect((await registry.find(DEFAULT_WORKSPACE_ID, 'internal'))?.url).toBe('http://10.1.2.3:8080/mcp');
    expect((await admin(gateway, 'PATCH', '/v1/mcp-servers/internal', { url: 'http://10.1.2.200/mcp' })).status).toBe(200);
    expect((await registry.find(DEFAULT_WORKSPACE_ID, 'internal'))?.url).toBe('http://10.1.2.200/mcp');
  });

  it('takes allowed_mcp_servers and allowed_tools on API keys and virtual keys, returns them, and carries them into the cached principal and virtual key', async () => {
    const key = await createApiKey(gateway, { name: 'scoped', allowed_mcp_servers: ['alpha', 'beta'], allowed_tools: { alpha: ['search'] } });
    expect(key).toMatchObject({ allowed_mcp_servers: ['alpha', 'beta'], allowed_tools: { alpha: ['search'] } });
    expect((await admin(gateway, 'GET', `/v1/api-keys/${key.id}`)).body).toMatchObject({
      allowed_mcp_servers: ['alpha', 'beta'],
      allowed_tools: { alpha: ['search'] },
    });
    expect(await lookup.apiKeyBySecret(key.key)).toMatchObject({ allowedMcpServers: ['alpha', 'beta'], allowedMcpTools: { alpha: ['search'] } });
    const cleared = await admin(gateway, 'PATCH', `/v1/api-keys/${key.id}`, { allowed_mcp_servers: null, allowed_tools: null });
    expect(cleared.body).toMatchObject({ allowed_mcp_servers: null, allowed_tools: null });
    expect(await lookup.apiKeyBySecret(key.key)).toMatchObject({ allowedMcpServers: null, allowedMcpTools: null });
    const plain = await createApiKey(gateway, { name: 'plain' });
    expect(plain).toMatchObject({ allowed_mcp_servers: null, allowed_tools: null });

    const vk = await createVirtualKey(gateway, {
      slug: 'vk-mcp',
      key: 'sk-test-1234567890',
      allowed_mcp_servers: ['alpha'],
      allowed_tools: { alpha: ['search', 'fetch'] },
    });
    expect(vk).toMatchObject({ allowed_mcp_servers: ['alpha'], allowed_tools: { alpha: ['search', 'fetch'] } });
    expect((await admin(gateway, 'GET', '/v1/virtual-keys/vk-mcp')).body).toMatchObject({
      allowed_mcp_servers: ['alpha'],
      allowed_tools: { alpha: ['search', 'fetch'] },
    });
    expect(await lookup.virtualKey(DEFAULT_WORKSPACE_ID, 'vk-mcp')).toMatchObject({
      allowedMcpServers: ['alpha'],
      allowedMcpTools: { alpha: ['search', 'fetch'] },
    });
    expect((await admin(gateway, 'PATCH', '/v1/virtual-keys/vk-mcp', { allowed_tools: { beta: [] } })).body).toMatchObject({
      allowed_mcp_servers: ['alpha'],
      allowed_tools: { beta: [] },
    });
    expect(await lookup.virtualKey(DEFAULT_WORKSPACE_ID, 'vk-mcp')).toMatchObject({ allowedMcpTools: { beta: [] } });

    const bad: [Record<string, unknown>, string][] = [
      [{ allowed_mcp_servers: 'alpha' }, 'allowed_mcp_servers'],
      [{ allowed_mcp_servers: ['Not A Slug'] }, 'allowed_mcp_servers'],
      [{ allowed_tools: ['search'] }, 'allowed_tools'],
      [{ allowed_tools: { alpha: 'search' } }, 'allowed_tools'],
      [{ allowed_tools: { 'Bad Slug': ['x'] } }, 'allowed_tools'],
      [{ allowed_tools: { alpha: [''] } }, 'allowed_tools'],
    ];
    for (const [body, param] of bad) {
      expectError(await call(gateway, '/v1/api-keys', { body: { name: 'bad', ...body } }), 400, { type: 'invalid_request_error', param });
      expectError(await call(gateway, '/v1/virtual-keys/vk-mcp', { method: 'PATCH', body }), 400, { type: 'invalid_request_error', param });
    }
  });

  it('accessOf: admin keys default to every server, user keys to none; a virtual key narrows; tools intersect over key, virtual key and server', async () => {
    // Start from a known set of live servers.
    for (const server of await registry.list(DEFAULT_WORKSPACE_ID)) expect((await admin(gateway, 'DELETE', `/v1/mcp-servers/${server.id}`)).status).toBe(200);
    await register({ slug: 'alpha', allowed_tools: ['search', 'fetch', 'delete'] });
    await register({ slug: 'beta' });
    await register({ slug: 'gamma', allowed_tools: ['run'] });
    const access = async (apiKey: { key: string }, virtualKey?: string) =>
      Object.fromEntries(
        await registry.accessOf((await lookup.apiKeyBySecret(apiKey.key))!, virtualKey ? await lookup.virtualKey(DEFAULT_WORKSPACE_ID, virtualKey) : undefined),
      );

    const adminKey = await createApiKey(gateway, { name: 'admin', role: 'admin' });
    const userKey = await createApiKey(gateway, { name: 'user' });
    expect(await access(adminKey)).toEqual({ alpha: ['search', 'fetch', 'delete'], beta: null, gamma: ['run'] });
    expect(await access(userKey)).toEqual({});

    const scoped = await createApiKey(gateway, {
      name: 'scoped',
      allowed_mcp_servers: ['alpha', 'beta', 'unregistered'],
      allowed_tools: { alpha: ['fetch', 'search', 'other'], beta: ['x', 'y'] },
    });
    expect(await access(scoped)).toEqual({ alpha: ['fetch', 'search'], beta: ['x', 'y'] });
    const adminScoped = await createApiKey(gateway, { name: 'admin scoped', role: 'admin', allowed_mcp_servers: ['gamma'] });
    expect(await access(adminScoped)).toEqual({ gamma: ['run'] });

    await createVirtualKey(gateway, { slug: 'vk-open', key: 'sk-test-1234567890' });
    await createVirtualKey(gateway, {
      slug: 'vk-narrow',
      key: 'sk-test-1234567890',
      allowed_mcp_servers: ['beta', 'gamma'],
      allowed_tools: { beta: ['y', 'z'] },
    });
    await createVirtualKey(gateway, { slug: 'vk-none', key: 'sk-test-1234567890', allowed_mcp_servers: [] });
    // A virtual key without allowed_mcp_servers adds no restriction; with it, it narrows (never widens).
    expect(await access(scoped, 'vk-open')).toEqual({ alpha: ['fetch', 'search'], beta: ['x', 'y'] });
    expect(await access(scoped, 'vk-narrow')).toEqual({ beta: ['y'] });
    expect(await access(adminKey, 'vk-narrow')).toEqual({ beta: ['y', 'z'], gamma: ['run'] });
    expect(await access(adminKey, 'vk-none')).toEqual({});
    expect(await access(userKey, 'vk-narrow')).toEqual({});

    // Slugs that are names of Object.prototype's members are servers like any other.
    await register({ slug: 'constructor' });
    expect(await access(scoped)).toEqual({ alpha: ['fetch', 'search'], beta: ['x', 'y'] });
    expect((await access(adminKey)).constructor).toBeNull();
    expect((await admin(gateway, 'DELETE', '/v1/mcp-servers/constructor')).status).toBe(200);

    // Changes through the admin API are seen at once; listeners hear which server changed.
    const changed: string[] = [];
    const stop = registry.onChange((id) => changed.push(id));
    const gamma = await registry.find(DEFAULT_WORKSPACE_ID, 'gamma');
    expect((await admin(gateway, 'PATCH', '/v1/mcp-servers/gamma', { allowed_tools: ['run', 'stop'] })).status).toBe(200);
    expect(await access(adminKey)).toEqual({ alpha: ['search', 'fetch', 'delete'], beta: null, gamma: ['run', 'stop'] });
    const beta = await registry.find(DEFAULT_WORKSPACE_ID, 'beta');
    expect((await admin(gateway, 'DELETE', '/v1/mcp-servers/beta')).status).toBe(200);
    expect(await access(adminKey, 'vk-narrow')).toEqual({ gamma: ['run', 'stop'] });
    expect((await registry.list(DEFAULT_WORKSPACE_ID)).map((server) => server.slug)).toEqual(['alpha', 'gamma']);
    expect(changed).toEqual([gamma!.id, beta!.id]);
    // Once unsubscribed, a listener hears nothing more.
    stop();
    expect((await admin(gateway, 'PATCH', '/v1/mcp-servers/alpha', { name: 'Alpha' })).status).toBe(200);
    expect(changed).toHaveLength(2);
  });

  it('never writes a header value to the log', async () => {
    await gateway.flushLogs();
    const [logs] = await gateway.dataSource.query(
      `select count(*)::int as n from request_logs where row_to_json(request_logs)::text like '%mcp-secret-token%' or row_to_json(request_logs)::text like '%${OTHER_SECRET}%'`,
    );
    expect(logs.n).toBe(0);
    expect(output.length).toBeGreaterThan(0);
    expect(output).not.toContain('mcp-secret-token');
    expect(output).not.toContain(OTHER_SECRET);
    expect(output).not.toContain('a-brand-new-token');
  });

  it('another instance on the same database sees a change at once (through the change notification, not the cache TTL) and tells its listeners', async () => {
    const journalDir = mkdtempSync(join(tmpdir(), 'gateway-journal-'));
    let other: INestApplication | undefined;
    try {
      other = await createGatewayApp(
        validateEnvironment({
          DATABASE_URL: gateway.databaseUrl,
          GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
          LOG_JOURNAL_DIR: journalDir,
          LOG_LEVEL: 'error',
          KEY_CACHE_TTL_MS: '3600000',
          PORT: '0',
        }),
      );
      await other.init();
      const otherRegistry = other.get(McpRegistry);
      await register({ slug: 'shared', headers: { Authorization: SECRET } });
      expect((await otherRegistry.find(DEFAULT_WORKSPACE_ID, 'shared'))?.headers).toEqual({ Authorization: SECRET });
      const changed: string[] = [];
      otherRegistry.onChange((id) => changed.push(id));

      const patched = await admin(gateway, 'PATCH', '/v1/mcp-servers/shared', { headers: { Authorization: 'Bearer rotated-token-0000' } });
      expect(patched.status).toBe(200);
      await waitFor(async () => (await otherRegistry.find(DEFAULT_WORKSPACE_ID, 'shared'))?.headers.Authorization === 'Bearer rotated-token-0000');
      await waitFor(() => changed.length === 1);
      expect(changed).toEqual([patched.body.id]);
    } finally {
      await other?.close();
      rmSync(journalDir, { recursive: true, force: true });
    }
  });

  it('migration: reverted and applied again on a database with keys, which keep working (their MCP fields null)', async () => {
    const user = await createApiKey(gateway, { name: 'before migration', allowed_mcp_servers: ['alpha'] });
    const migration = new McpServers1764001300000();
    // The later migration that adds workspace_id to mcp_servers is reverted first and applied again last.
    const workspaces = new Workspaces1764001700000();
    const runner = gateway.dataSource.createQueryRunner();
    try {
      await workspaces.down(runner);
      await migration.down(runner);
      const columns = await runner.query(
        `select table_name, column_name from information_schema.columns where column_name in ('allowed_mcp_servers', 'allowed_tools')`,
      );
      expect(columns).toEqual([]);
      // A key made before the migration existed.
      await runner.query(
        `insert into api_keys (name, role, key_hash, key_hint) values ('old', 'user', encode(sha256('gk-old-key-0123456789'::bytea), 'hex'), 'gk-…6789')`,
      );
      await migration.up(runner);
      await workspaces.up(runner);
    } finally {
      await runner.release();
    }
    lookup.invalidateApiKeys();
    expect((await call(gateway, '/v1/mcp-servers', { apiKey: user.key })).status).toBe(403);
    expect((await call(gateway, '/v1/mcp-servers', { apiKey: 'gk-old-key-0123456789' })).status).toBe(403);
    expect(await lookup.apiKeyBySecret('gk-old-key-0123456789')).toMatchObject({ name: 'old', allowedMcpServers: null, allowedMcpTools: null });
    expect((await admin(gateway, 'GET', `/v1/api-keys/${user.id}`)).body).toMatchObject({
      name: 'before migration',
      allowed_mcp_servers: null,
      allowed_tools: null,
    });
    expect((await admin(gateway, 'GET', '/v1/mcp-servers')).body.data).toEqual([]);
    expect((await register({ slug: 'after' })).status).toBe(201);
    expectError(await call(gateway, '/v1/mcp-servers', { body: { name: 'x', slug: 'after', url: PUBLIC_URL } }), 409, {
      type: 'invalid_request_error',
      code: 'slug_taken',
    });
  });
});
