/**
 * Workspaces scope what they hold (CONTRACT section 13): prompts and MCP servers belong to
 * the workspace they were made in (the same slug in two workspaces is two rows), another
 * workspace's are 404 on every verb and unknown to model calls and the MCP routes; the log
 * and analytics show a workspace's admin and viewer its rows, a member its own, an owner
 * every workspace or the one `x-gateway-workspace` names, over short ranges (log rows) and
 * long ones (the rollups) alike.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, expectError, waitFor, type RawResponse } from '../support/e2e-helpers';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const DAY_MS = 86_400_000;
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};
const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };

interface Key {
  id: string;
  key: string;
}
interface Workspace {
  id: string;
  slug: string;
  admin: Key;
  member: Key;
  viewer: Key;
}

describe('workspaces: prompts, MCP servers, the log and analytics', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let mcp: McpTestServer;
  let alpha: Workspace;
  let beta: Workspace;
  /** Routes a model call to the mock without any virtual key (an inline config). */
  let route: Record<string, string>;

  const as = (key: Key | string, path: string, options: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    call(gateway, path, { ...options, apiKey: typeof key === 'string' ? key : key.key });

  async function workspace(slug: string): Promise<Workspace> {
    const created = await call(gateway, '/v1/workspaces', { body: { name: `Team ${slug}`, slug } });
    expect(created.status).toBe(201);
    const key = async (role: string): Promise<Key> => {
      const made = await call(gateway, '/v1/api-keys', { body: { name: `${slug} ${role}`, role, workspace: slug } });
      expect(made.status).toBe(201);
      expect(made.body).toMatchObject({ role, workspace: slug, workspace_id: created.body.id });
      return { id: made.body.id, key: made.body.key };
    };
    return { id: created.body.id, slug, admin: await key('admin'), member: await key('member'), viewer: await key('viewer') };
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    mcp = await startMcpTestServer();
    gateway = await startTestGateway({ MCP_ALLOWED_NETWORKS: '127.0.0.1', MCP_TIMEOUT_MS: '3000' });
    route = { 'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'sk-workspaces-1', custom_host: `${mock.url}/v1` }) };
    alpha = await workspace('alpha');
    beta = await workspace('beta');
  });

  afterAll(async () => {
    await gateway?.close();
    await mcp?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  /** Every 404 of a resource looks the same, whether it is another workspace's or no one's. */
  const expectNotFound = (response: RawResponse, code: string) => expectError(response, 404, { type: 'not_found_error', code });

  describe('prompts', () => {
    const template = (name: string) => ({ name, model: 'gpt-4o-mini', messages: [{ role: 'user', content: `${name}: {{question}}` }] });
    let alphaPrompt: any;
    let betaPrompt: any;

    beforeAll(async () => {
      const a = await as(alpha.admin, '/v1/prompts', { body: { ...template('Alpha reply'), slug: 'reply' } });
      const b = await as(beta.admin, '/v1/prompts', { body: { ...template('Beta reply'), slug: 'reply' } });
      expect([a.status, b.status]).toEqual([201, 201]);
      [alphaPrompt, betaPrompt] = [a.body, b.body];
    });

    it('takes the same slug in two workspaces (two prompts), each read back with its workspace; a slug twice in one is 409', async () => {
      expect(alphaPrompt).toMatchObject({ object: 'prompt', slug: 'reply', workspace: 'alpha', workspace_id: alpha.id });
      expect(betaPrompt).toMatchObject({ object: 'prompt', slug: 'reply', workspace: 'beta', workspace_id: beta.id });
      expect(alphaPrompt.id).not.toBe(betaPrompt.id);
      expectError(await as(alpha.admin, '/v1/prompts', { body: { ...template('Again'), slug: 'reply' } }), 409, {
        type: 'invalid_request_error',
        code: 'slug_taken',
      });
    });

    it("lists only the workspace's prompts; the owner every workspace's, or one with x-gateway-workspace", async () => {
      const ids = async (key: Key | string, headers?: Record<string, string>) => {
        const page = await as(key, '/v1/prompts?limit=100', { headers });
        expect(page.status).toBe(200);
        return page.body.data.map((p: any) => p.id).sort();
      };
      expect(await ids(alpha.admin)).toEqual([alphaPrompt.id]);
      expect(await ids(beta.admin)).toEqual([betaPrompt.id]);
      expect(await ids(gateway.adminKey)).toEqual([alphaPrompt.id, betaPrompt.id].sort());
      expect(await ids(gateway.adminKey, { 'x-gateway-workspace': 'beta' })).toEqual([betaPrompt.id]);
    });

    it("answers 404 for another workspace's prompt by id on every verb, and resolves a slug in the caller's workspace only", async () => {
      for (const [method, path, body] of [
        ['GET', `/v1/prompts/${betaPrompt.id}`, undefined],
        ['GET', `/v1/prompts/${betaPrompt.id}/versions`, undefined],
        ['PATCH', `/v1/prompts/${betaPrompt.id}`, { name: 'hijacked' }],
        ['POST', `/v1/prompts/${betaPrompt.id}/render`, { variables: { question: 'q' } }],
        ['DELETE', `/v1/prompts/${betaPrompt.id}`, undefined],
      ] as const) {
        expectNotFound(await as(alpha.admin, path, { method, body }), 'prompt_not_found');
      }
      expect((await as(gateway.adminKey, `/v1/prompts/${betaPrompt.id}`)).body).toMatchObject({ name: 'Beta reply', version: 1 });

      // The slug is alpha's prompt for alpha's admin, beta's for beta's.
      const patched = await as(alpha.admin, '/v1/prompts/reply', { method: 'PATCH', body: { name: 'Alpha reply v2' } });
      expect(patched.body).toMatchObject({ id: alphaPrompt.id, name: 'Alpha reply v2' });
      expect((await as(beta.admin, '/v1/prompts/reply')).body).toMatchObject({ id: betaPrompt.id, name: 'Beta reply' });
      const rendered = await as(beta.admin, '/v1/prompts/reply/render', { method: 'POST', body: { variables: { question: 'why?' } } });
      expect(rendered.body).toMatchObject({ prompt_id: betaPrompt.id, request: { messages: [{ role: 'user', content: 'Beta reply: why?' }] } });
      // An owner narrowed to beta resolves the slug there.
      expect((await as(gateway.adminKey, '/v1/prompts/reply', { headers: { 'x-gateway-workspace': 'beta' } })).body).toMatchObject({ id: betaPrompt.id });
    });

    it("runs a prompt of the calling key's workspace only: another workspace's id is unknown, the slug is its own", async () => {
      const run = (key: Key, idOrSlug: string) => as(key, `/v1/prompts/${idOrSlug}/completions`, { headers: route, body: { variables: { question: 'hi' } } });
      expectNotFound(await run(alpha.member, betaPrompt.id), 'prompt_not_found');
      expect(mock.requests).toHaveLength(0);

      const own = await run(alpha.member, 'reply');
      expect(own.status).toBe(200);
      expect(mock.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'Alpha reply: hi' }]);
      const theirs = await run(beta.member, 'reply');
      expect(theirs.status).toBe(200);
      expect(mock.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'Beta reply: hi' }]);
      // The same slug, cached per workspace: after a change in beta, alpha's call is still alpha's.
      expect(
        (await as(beta.admin, '/v1/prompts/reply', { method: 'PATCH', body: { messages: [{ role: 'user', content: 'Beta v2: {{question}}' }] } })).status,
      ).toBe(200);
      expect((await run(alpha.member, 'reply')).status).toBe(200);
      expect(mock.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'Alpha reply: hi' }]);
      expect((await run(beta.member, 'reply')).status).toBe(200);
      expect(mock.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'Beta v2: hi' }]);
    });

    it("deletes only the caller's own prompt of a slug", async () => {
      const temp = await as(beta.admin, '/v1/prompts', { body: { ...template('Temp'), slug: 'temp' } });
      expect(temp.status).toBe(201);
      expectNotFound(await as(alpha.admin, '/v1/prompts/temp', { method: 'DELETE' }), 'prompt_not_found');
      expect((await as(beta.admin, `/v1/prompts/${temp.body.id}`, { method: 'DELETE' })).status).toBe(200);
      expectNotFound(await as(beta.admin, '/v1/prompts/temp'), 'prompt_not_found');
    });
  });

  describe('MCP servers', () => {
    let alphaDocs: any;
    let betaDocs: any;

    const register = async (key: Key, slug: string, allowedTools: string[]) => {
      const made = await as(key, '/v1/mcp-servers', {
        body: { name: slug, slug, url: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` }, allowed_tools: allowedTools },
      });
      expect(made.status).toBe(201);
      return made.body;
    };

    beforeAll(async () => {
      // The same slug in both workspaces, told apart by the tools each allows.
      alphaDocs = await register(alpha.admin, 'docs', ['add']);
      betaDocs = await register(beta.admin, 'docs', ['search_docs']);
      await register(alpha.admin, 'alpha-tools', ['add']);
    });

    it("keeps each workspace to its own servers in lists and reads; another workspace's id or slug is 404", async () => {
      expect(alphaDocs).toMatchObject({ slug: 'docs', workspace: 'alpha', workspace_id: alpha.id });
      expect(betaDocs).toMatchObject({ slug: 'docs', workspace: 'beta', workspace_id: beta.id });
      const slugs = async (key: Key | string, headers?: Record<string, string>) =>
        (await as(key, '/v1/mcp-servers?limit=100', { headers })).body.data.map((s: any) => `${s.workspace}/${s.slug}`).sort();
      expect(await slugs(alpha.admin)).toEqual(['alpha/alpha-tools', 'alpha/docs']);
      expect(await slugs(beta.admin)).toEqual(['beta/docs']);
      expect(await slugs(gateway.adminKey)).toEqual(['alpha/alpha-tools', 'alpha/docs', 'beta/docs']);
      expect(await slugs(gateway.adminKey, { 'x-gateway-workspace': 'alpha' })).toEqual(['alpha/alpha-tools', 'alpha/docs']);

      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { description: 'hijacked' }],
        ['DELETE', undefined],
      ] as const) {
        expectNotFound(await as(beta.admin, `/v1/mcp-servers/${alphaDocs.id}`, { method, body }), 'mcp_server_not_found');
        expectNotFound(await as(beta.admin, '/v1/mcp-servers/alpha-tools', { method, body }), 'mcp_server_not_found');
      }
      expect((await as(beta.admin, '/v1/mcp-servers/docs')).body).toMatchObject({ id: betaDocs.id, allowed_tools: ['search_docs'] });
      expect((await as(gateway.adminKey, `/v1/mcp-servers/${alphaDocs.id}`)).body).toMatchObject({ description: null });
    });

    it("/v1/mcp/{slug} and /v1/mcp reach the caller's workspace's servers only", async () => {
      // Another workspace's slug or id: unknown, as a slug no one registered.
      for (const path of ['/v1/mcp/alpha-tools', `/v1/mcp/${alphaDocs.id}`, '/v1/mcp/nope']) {
        expectNotFound(await as(beta.admin, path, { method: 'POST', headers: MCP_ACCEPT, body: INITIALIZE }), 'unknown_mcp_server');
      }
      const tools = async (key: Key, path: string) => {
        const client = new Client({ name: 'workspace-test', version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${gateway.url}${path}`), { requestInit: { headers: { 'x-gateway-api-key': key.key } } }),
        );
        try {
          return (await client.listTools()).tools.map((tool) => tool.name).sort();
        } finally {
          await client.close();
        }
      };
      expect(await tools(alpha.admin, '/v1/mcp/docs')).toEqual(['add']);
      expect(await tools(beta.admin, '/v1/mcp/docs')).toEqual(['search_docs']);
      expect(await tools(alpha.admin, '/v1/mcp')).toEqual(['alpha-tools__add', 'docs__add']);
      expect(await tools(beta.admin, '/v1/mcp')).toEqual(['docs__search_docs']);
    });

    it("x-gateway-mcp names servers of the calling key's workspace only", async () => {
      const chat = (key: Key, servers: string) =>
        as(key, '/v1/chat/completions', {
          headers: { ...route, 'x-gateway-mcp': servers },
          body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        });
      expectError(await chat(beta.admin, 'alpha-tools'), 400, { type: 'invalid_request_error', code: 'unknown_mcp_server', param: 'x-gateway-mcp' });
      expect(mock.requests).toHaveLength(0);
      const own = await chat(beta.admin, 'docs');
      expect(own.status).toBe(200);
      expect(mock.requests[0].body.tools.map((tool: any) => tool.function.name)).toEqual(['docs__search_docs']);
      mock.reset();
      expect((await chat(alpha.admin, 'docs,alpha-tools')).status).toBe(200);
      expect(mock.requests[0].body.tools.map((tool: any) => tool.function.name).sort()).toEqual(['alpha-tools__add', 'docs__add']);
    });
  });

  describe('the log and analytics', () => {
    const to = new Date(Date.now() + 60_000);
    const longFrom = new Date(to.getTime() - 10 * DAY_MS);
    const shortFrom = new Date(to.getTime() - 3_600_000);
    let alphaRow: string;
    let betaRow: string;

    /** What the log holds in [from, to): requests per API key, counted in SQL, for the given workspaces (null: all). */
    async function expected(workspaces: string[] | null, from: Date, apiKeyId?: string): Promise<Record<string, number>> {
      const rows: { key: string; n: number }[] = await gateway.dataSource.query(
        `select coalesce(api_key_id::text, 'none') as key, count(*)::int as n from request_logs
         where created_at >= $1 and created_at < $2 and ($3::uuid[] is null or workspace_id = any($3::uuid[])) and ($4::uuid is null or api_key_id = $4)
         group by 1`,
        [from, to, workspaces, apiKeyId ?? null],
      );
      return Object.fromEntries(rows.map((row) => [row.key, row.n]));
    }

    async function perKey(key: Key | string, from: Date, headers?: Record<string, string>): Promise<Record<string, number>> {
      const summary = await as(key, `/v1/analytics/summary?group_by=api_key&from=${from.toISOString()}&to=${to.toISOString()}`, { headers });
      expect(summary.status).toBe(200);
      return Object.fromEntries(summary.body.data.map((row: any) => [row.key ?? 'none', row.requests]));
    }

    async function total(key: Key | string, from: Date, interval: string, headers?: Record<string, string>): Promise<number> {
      const series = await as(key, `/v1/analytics/timeseries?interval=${interval}&from=${from.toISOString()}&to=${to.toISOString()}`, { headers });
      expect(series.status).toBe(200);
      return series.body.data.reduce((sum: number, bucket: any) => sum + bucket.requests, 0);
    }

    const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

    beforeAll(async () => {
      // Requests in both workspaces now, by admins and members.
      const chat = async (key: Key, user: string) => {
        const response = await as(key, '/v1/chat/completions', {
          headers: route,
          body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], user },
        });
        expect(response.status).toBe(200);
      };
      for (const [key, user] of [
        [alpha.admin, 'a1'],
        [alpha.admin, 'a2'],
        [alpha.member, 'a3'],
        [beta.admin, 'b1'],
        [beta.member, 'b2'],
        [beta.member, 'b3'],
      ] as const)
        await chat(key, user);
      await gateway.flushLogs();

      // Older rows (days back: the rollups answer for them) and a virtual key slug in both workspaces.
      const vk = async (workspaceId: string) =>
        (
          await gateway.dataSource.query(
            `insert into virtual_keys (id, name, slug, provider, key_hint, workspace_id) values (gen_random_uuid(), 'same vk', 'same-vk', 'openai', 'sk-…1', $1) returning id`,
            [workspaceId],
          )
        )[0].id as string;
      const [alphaVk, betaVk] = [await vk(alpha.id), await vk(beta.id)];
      const old = (key: Key, workspaceId: string, virtualKeyId: string, daysAgo: number, count: number) =>
        gateway.dataSource.query(
          `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens, api_key_id, virtual_key_id, workspace_id, model, provider)
           select gen_random_uuid(), 'old', $1::timestamptz + i * interval '1 minute', 'chat.completions', 200, 100 + i, 0.001, 10, 5, $2, $3, $4, 'gpt-4o-mini', 'openai'
           from generate_series(1, $5) as i returning id`,
          [new Date(Date.now() - daysAgo * DAY_MS), key.id, virtualKeyId, workspaceId, count],
        );
      alphaRow = (await old(alpha.admin, alpha.id, alphaVk, 5, 3))[0].id;
      await old(alpha.member, alpha.id, alphaVk, 4, 2);
      betaRow = (await old(beta.admin, beta.id, betaVk, 6, 4))[0].id;
      await old(beta.member, beta.id, betaVk, 5, 1);
      // Compact the queued rows, so that the whole days come from the rollups. The gateway's own
      // compactor may hold the compaction's lock (the call then does nothing): again until they are in.
      const compacted = async () => {
        await gateway.dataSource.query('select request_log_rollups_compact(100000)');
        const [{ n }] = await gateway.dataSource.query(`select count(*)::int as n from request_log_rollups where api_key_id = $1`, [beta.admin.id]);
        return n > 0;
      };
      expect(await waitFor(compacted, 10_000)).toBe(true);
    });

    it("lists the workspace's rows to its admin and viewer, a member's own to it, every workspace's to the owner", async () => {
      const apiKeys = async (key: Key | string, headers?: Record<string, string>) => {
        const page = await as(key, '/v1/logs?limit=200', { headers });
        expect(page.status).toBe(200);
        return page.body.data.map((row: any) => row.api_key_id);
      };
      const alphaKeys = [alpha.admin.id, alpha.member.id];
      for (const reader of [alpha.admin, alpha.viewer]) {
        const seen = await apiKeys(reader);
        expect(new Set(seen)).toEqual(new Set(alphaKeys));
        expect(seen).toHaveLength(sum(await expected([alpha.id], new Date(0))));
      }
      expect(new Set(await apiKeys(alpha.member))).toEqual(new Set([alpha.member.id]));
      expect(new Set(await apiKeys(beta.viewer))).toEqual(new Set([beta.admin.id, beta.member.id]));
      const everything = new Set(await apiKeys(gateway.adminKey));
      for (const id of [...alphaKeys, beta.admin.id, beta.member.id]) expect(everything.has(id)).toBe(true);
      expect(new Set(await apiKeys(gateway.adminKey, { 'x-gateway-workspace': 'beta' }))).toEqual(new Set([beta.admin.id, beta.member.id]));
      // A filter on another workspace's key finds nothing.
      const filtered = await as(alpha.admin, `/v1/logs?api_key_id=${beta.admin.id}`);
      expect(filtered.status).toBe(200);
      expect(filtered.body.data).toEqual([]);
    });

    it("reads one row by id only inside the scope (another workspace's, or another key's for a member: 404)", async () => {
      expect((await as(alpha.viewer, `/v1/logs/${alphaRow}`)).body).toMatchObject({ id: alphaRow, workspace_id: alpha.id });
      expectNotFound(await as(beta.admin, `/v1/logs/${alphaRow}`), 'log_not_found');
      expectNotFound(await as(alpha.admin, `/v1/logs/${betaRow}`), 'log_not_found');
      expectNotFound(await as(alpha.member, `/v1/logs/${alphaRow}`), 'log_not_found'); // alpha's admin's row
      expect((await as(gateway.adminKey, `/v1/logs/${betaRow}`)).status).toBe(200);
      expectNotFound(await as(gateway.adminKey, `/v1/logs/${betaRow}`, { headers: { 'x-gateway-workspace': 'alpha' } }), 'log_not_found');
    });

    it('resolves a virtual_key slug filter inside the scope', async () => {
      const keysOf = async (key: Key | string, headers?: Record<string, string>) =>
        new Set((await as(key, '/v1/logs?limit=200&virtual_key=same-vk', { headers })).body.data.map((row: any) => row.workspace_id));
      expect(await keysOf(alpha.viewer)).toEqual(new Set([alpha.id]));
      expect(await keysOf(beta.admin)).toEqual(new Set([beta.id]));
      expect(await keysOf(gateway.adminKey, { 'x-gateway-workspace': 'beta' })).toEqual(new Set([beta.id]));
    });

    it('summarises and charts the same rows, over an hour (log rows) and over ten days (rollups)', async () => {
      for (const from of [shortFrom, longFrom]) {
        const interval = from === shortFrom ? 'minute' : 'day';
        const [alphaCounts, betaCounts] = [await expected([alpha.id], from), await expected([beta.id], from)];
        expect(Object.keys(alphaCounts).sort()).toEqual([alpha.admin.id, alpha.member.id].sort());
        expect(Object.keys(betaCounts).sort()).toEqual([beta.admin.id, beta.member.id].sort());
        for (const reader of [alpha.admin, alpha.viewer]) {
          expect(await perKey(reader, from)).toEqual(alphaCounts);
          expect(await total(reader, from, interval)).toBe(sum(alphaCounts));
        }
        expect(await perKey(beta.viewer, from)).toEqual(betaCounts);
        expect(await total(beta.admin, from, interval)).toBe(sum(betaCounts));

        const own = await expected([alpha.id], from, alpha.member.id);
        expect(await perKey(alpha.member, from)).toEqual(own);
        expect(await total(alpha.member, from, interval)).toBe(sum(own));

        const all = await expected(null, from);
        expect(await perKey(gateway.adminKey, from)).toEqual(all);
        expect(await total(gateway.adminKey, from, interval)).toBe(sum(all));
        expect(sum(all)).toBeGreaterThanOrEqual(sum(alphaCounts) + sum(betaCounts));
        expect(await perKey(gateway.adminKey, from, { 'x-gateway-workspace': 'beta' })).toEqual(betaCounts);
        expect(await total(gateway.adminKey, from, interval, { 'x-gateway-workspace': 'alpha' })).toBe(sum(alphaCounts));
      }
    });

    it('reads the rollups for the long range (the answer says approximate percentiles)', async () => {
      const summary = await as(beta.viewer, `/v1/analytics/summary?group_by=model&from=${longFrom.toISOString()}&to=${to.toISOString()}`);
      expect(summary.body.latency_percentiles).toBe('approximate');
      expect(summary.body.data).toEqual([expect.objectContaining({ key: 'gpt-4o-mini', requests: sum(await expected([beta.id], longFrom)) })]);
    });
  });
});
