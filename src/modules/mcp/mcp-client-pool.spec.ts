import type { ConfigService } from '@nestjs/config';
import { GatewayError } from '../../common/errors/gateway-error';
import type { Environment } from '../../config/environment';
import { MCP_TEST_DOC, McpTestServer, startMcpTestServer } from '../../../test/support/mcp-test-server';
import { McpCallRefused, McpClientPool } from './mcp-client-pool';
import type { McpCallResult, McpServerTarget } from './mcp-types';

/** The test server listens on loopback, a private address: allowed through MCP_ALLOWED_NETWORKS. */
function poolWith(timeoutMs = 30000, allowedNetworks = '127.0.0.1/32'): McpClientPool {
  const settings: Partial<Environment> = { MCP_TIMEOUT_MS: timeoutMs, MCP_ALLOWED_NETWORKS: allowedNetworks };
  const config = { get: (name: keyof Environment) => settings[name] } as unknown as ConfigService<Environment, true>;
  return new McpClientPool(config);
}

function targetFor(mcp: McpTestServer, overrides: Partial<McpServerTarget> = {}): McpServerTarget {
  return {
    id: 'srv-1',
    slug: 'internal-docs',
    name: 'Internal docs',
    url: mcp.url,
    headers: { Authorization: `Bearer ${mcp.token}` },
    allowedTools: null,
    description: null,
    ...overrides,
  };
}

function textOf(result: McpCallResult): string {
  return result.content.map((block) => String(block.text ?? '')).join('');
}

/** Waits (bounded) for something the server pushes asynchronously; the assertions after it decide. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}

async function refusalOf(promise: Promise<unknown>): Promise<McpCallRefused> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(McpCallRefused);
  return error as McpCallRefused;
}

async function gatewayErrorOf(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('McpClientPool', () => {
  let mcp: McpTestServer;
  let pool: McpClientPool;

  beforeEach(async () => {
    mcp = await startMcpTestServer();
    pool = poolWith();
  });

  afterEach(async () => {
    await pool.onApplicationShutdown();
    await mcp.close();
  });

  it('lists the server’s tools, filtered by the registry’s allowed tools', async () => {
    const all = await pool.tools(targetFor(mcp));
    expect(all.map((tool) => tool.name).sort()).toEqual(['add', 'fail', 'search_docs', 'slow']);
    const search = all.find((tool) => tool.name === 'search_docs');
    expect(search).toMatchObject({
      server: 'internal-docs',
      description: 'Search the documentation',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
    });

    const filtered = await pool.tools(targetFor(mcp, { allowedTools: ['add', 'not_listed'] }));
    expect(filtered.map((tool) => tool.name)).toEqual(['add']);
  });

  it('calls tools and reuses one connection and one tool list across many calls', async () => {
    const server = targetFor(mcp);
    const search = await pool.call(server, 'search_docs', { query: 'rate limits' });
    expect(search.isError).toBe(false);
    expect(textOf(search)).toContain('rate limits');
    expect(textOf(search)).toContain(MCP_TEST_DOC);
    expect(search.latencyMs).toBeGreaterThanOrEqual(0);

    const sums = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.call(server, 'add', { a: i, b: 1 })));
    expect(sums.map(textOf)).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
    for (let i = 0; i < 10; i++) await pool.tools(server);

    expect(mcp.stats.streamableSessions).toBe(1);
    expect(mcp.stats.toolLists).toBe(1);
    expect(mcp.stats.toolCalls).toBe(21);
  });

  it('opens a new connection when the registration changes, and after forget()', async () => {
    await pool.tools(targetFor(mcp));
    await pool.tools(targetFor(mcp, { headers: { Authorization: `Bearer ${mcp.token}`, 'X-Extra': 'one' } }));
    expect(mcp.stats.streamableSessions).toBe(2);
    await pool.forget('srv-1');
    await pool.tools(targetFor(mcp, { headers: { Authorization: `Bearer ${mcp.token}`, 'X-Extra': 'one' } }));
    expect(mcp.stats.streamableSessions).toBe(3);
  });

  it('refreshes the tool list when the server sends tools/list_changed, on the same connection', async () => {
    const server = targetFor(mcp);
    expect((await pool.tools(server)).map((tool) => tool.name)).not.toContain('lookup_ticket');

    mcp.addTool({ name: 'lookup_ticket', description: 'Find a ticket', text: 'ticket 42' });
    await eventually(async () => (await pool.tools(server)).some((tool) => tool.name === 'lookup_ticket'));
    expect((await pool.tools(server)).map((tool) => tool.name)).toContain('lookup_ticket');
    expect(textOf(await pool.call(server, 'lookup_ticket', {}))).toBe('ticket 42');

    mcp.removeTool('lookup_ticket');
    await eventually(async () => !(await pool.tools(server)).some((tool) => tool.name === 'lookup_ticket'));
    expect((await pool.tools(server)).map((tool) => tool.name)).not.toContain('lookup_ticket');
    expect((await refusalOf(pool.call(server, 'lookup_ticket', {}))).code).toBe('unknown_tool');

    // Listed again only because the server said so: the first list and one per change.
    expect(mcp.stats.toolLists).toBe(3);
    expect(mcp.stats.streamableSessions).toBe(1);
  });

  it('sends the credential headers; a wrong credential is a 502 that does not show it', async () => {
    await pool.tools(targetFor(mcp));
    expect(mcp.stats.unauthorized).toBe(0);

    const wrongToken = 'wrong-token-0123456789';
    const error = await gatewayErrorOf(pool.tools(targetFor(mcp, { id: 'srv-2', headers: { Authorization: `Bearer ${wrongToken}` } })));
    expect(error.status).toBe(502);
    expect(error.code).toBe('mcp_server_unreachable');
    expect(error.message).toContain('internal-docs');
    expect(error.message).toContain('401');
    expect(error.message).not.toContain(wrongToken);
    expect(mcp.stats.unauthorized).toBeGreaterThan(0);
    // 401 is not a sign of an SSE-only server: no fallback was tried.
    expect(mcp.stats.sseSessions).toBe(0);
  });

  it('connects only to addresses MCP_ALLOWED_NETWORKS allows when private, by IP or by name', async () => {
    const strict = poolWith(30000, '');
    try {
      for (const url of [mcp.url, mcp.url.replace('127.0.0.1', 'localhost')]) {
        const error = await gatewayErrorOf(strict.tools(targetFor(mcp, { url })));
        expect(error.status).toBe(502);
        expect(error.code).toBe('mcp_server_unreachable');
        expect(error.message).toMatch(/not allowed: .*private address/);
      }
      expect((await strict.call(targetFor(mcp), 'add', { a: 1, b: 1 })).isError).toBe(true);
      expect(mcp.stats.requests).toBe(0);
    } finally {
      await strict.onApplicationShutdown();
    }
  });

  it('falls back to the legacy SSE transport for a server without Streamable HTTP', async () => {
    const server = targetFor(mcp, { url: mcp.sseUrl });
    expect((await pool.tools(server)).map((tool) => tool.name)).toContain('search_docs');
    expect(textOf(await pool.call(server, 'add', { a: 2, b: 3 }))).toBe('5');
    expect(textOf(await pool.call(server, 'add', { a: 4, b: 3 }))).toBe('7');
    expect(mcp.stats.sseSessions).toBe(1);
    expect(mcp.stats.streamableSessions).toBe(0);

    mcp.addTool({ name: 'sse_tool', text: 'over sse' });
    await eventually(async () => (await pool.tools(server)).some((tool) => tool.name === 'sse_tool'));
    expect(textOf(await pool.call(server, 'sse_tool', {}))).toBe('over sse');
    expect(mcp.stats.sseSessions).toBe(1);
  });

  it('refuses before sending: unknown tool, tool not allowed, arguments that do not match', async () => {
    const server = targetFor(mcp, { allowedTools: ['search_docs', 'add', 'missing'] });
    expect((await refusalOf(pool.call(server, 'missing', {}))).code).toBe('unknown_tool');
    const notAllowed = await refusalOf(pool.call(server, 'slow', { ms: 1 }));
    expect(notAllowed.code).toBe('tool_not_allowed');
    expect(notAllowed.message).toContain('slow');

    const wrongType = await refusalOf(pool.call(server, 'add', { a: 1, b: 'two' }));
    expect(wrongType.code).toBe('invalid_arguments');
    expect(wrongType.message).toContain('arguments/b must be number');
    expect((await refusalOf(pool.call(server, 'search_docs', {}))).code).toBe('invalid_arguments');
    expect((await refusalOf(pool.call(server, 'search_docs', ['query']))).code).toBe('invalid_arguments');
    expect((await refusalOf(pool.call(server, 'search_docs', 'query'))).code).toBe('invalid_arguments');

    expect(mcp.stats.toolCalls).toBe(0);
  });

  it('answers a tool that failed as an isError result', async () => {
    const result = await pool.call(targetFor(mcp), 'fail', {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('the tool failed on purpose');
  });

  it('turns a call that outlasts MCP_TIMEOUT_MS into an isError result, and keeps the connection', async () => {
    pool = poolWith(300);
    const server = targetFor(mcp);
    const result = await pool.call(server, 'slow', { ms: 5000 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('MCP server internal-docs did not answer tools/call slow within 300 ms');

    expect(textOf(await pool.call(server, 'add', { a: 1, b: 1 }))).toBe('2');
    expect(mcp.stats.streamableSessions).toBe(1);
  });

  it('settles a call the caller aborts, as a cancelled isError result', async () => {
    const controller = new AbortController();
    const call = pool.call(targetFor(mcp), 'slow', { ms: 5000 }, controller.signal);
    await eventually(async () => mcp.stats.toolCalls > 0);
    controller.abort();
    const result = await call;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('cancelled');
  });

  it('answers isError on calls and 502 on tools while the server is down, and recovers when it is back', async () => {
    const server = targetFor(mcp);
    expect(textOf(await pool.call(server, 'add', { a: 1, b: 2 }))).toBe('3');
    const { port, token } = mcp;
    await mcp.close();

    const down = await pool.call(server, 'add', { a: 1, b: 2 });
    expect(down.isError).toBe(true);
    expect(textOf(down)).toContain('internal-docs');
    expect(textOf(down)).not.toContain(token);
    const listing = await gatewayErrorOf(pool.tools(server));
    expect(listing.status).toBe(502);
    expect(listing.code).toBe('mcp_server_unreachable');

    mcp = await startMcpTestServer({ port, token });
    expect(textOf(await pool.call(server, 'add', { a: 2, b: 2 }))).toBe('4');
    expect((await pool.tools(server)).length).toBe(4);
  });

  it('recovers an SSE connection after the server was down', async () => {
    const server = targetFor(mcp, { url: mcp.sseUrl });
    expect(textOf(await pool.call(server, 'add', { a: 1, b: 2 }))).toBe('3');
    const { port, token } = mcp;
    await mcp.close();
    expect((await pool.call(server, 'add', { a: 1, b: 2 })).isError).toBe(true);
    expect((await gatewayErrorOf(pool.tools(server))).code).toBe('mcp_server_unreachable');

    mcp = await startMcpTestServer({ port, token });
    expect(textOf(await pool.call(server, 'add', { a: 3, b: 3 }))).toBe('6');
    expect(mcp.stats.sseSessions).toBe(1);
  });

  it('sends a call again on a new session when the server has forgotten the old one (404)', async () => {
    const server = targetFor(mcp);
    await pool.tools(server);
    await mcp.expireSessions();

    // The server refused the request before running it: the call goes on a new session.
    expect(textOf(await pool.call(server, 'add', { a: 5, b: 5 }))).toBe('10');
    expect(mcp.stats.streamableSessions).toBe(2);
    expect(mcp.stats.toolCalls).toBe(1);
  });

  it('answers a server that never answers the initialize with a 504 mcp_timeout', async () => {
    pool = poolWith(300);
    const silent = await import('node:http').then(({ createServer }) => createServer(() => undefined));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    const { port } = silent.address() as { port: number };
    try {
      const error = await gatewayErrorOf(pool.tools(targetFor(mcp, { url: `http://127.0.0.1:${port}/mcp` })));
      expect(error.status).toBe(504);
      expect(error.code).toBe('mcp_timeout');
      const call = await pool.call(targetFor(mcp, { url: `http://127.0.0.1:${port}/mcp` }), 'add', { a: 1, b: 1 });
      expect(call.isError).toBe(true);
      expect(textOf(call)).toContain('did not answer initialize within 300 ms');
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
