/**
 * A real MCP server for the tests, built with the official SDK's `McpServer` on bare
 * `node:http` (ephemeral port unless one is given, so a test can bring it back where it was).
 *
 * Routes (every one needs `Authorization: Bearer <token>`; 401 otherwise)
 *   POST/GET/DELETE /mcp     Streamable HTTP, stateful (one session, and one McpServer, per client)
 *   GET  /sse                the legacy HTTP+SSE transport: the event stream, which names…
 *   POST /messages?sessionId  …where the client posts its messages
 *   POST /sse                405, as an SSE-only server answers a Streamable HTTP client
 *
 * Tools
 *   search_docs({query})  text naming the query and the doc it found ("MCP gateway guide")
 *   add({a, b})           the sum as text
 *   slow({ms})            answers "waited <ms> ms" after ms (earlier if the client cancels)
 *   fail({})              an `isError: true` result
 *   addTool / removeTool  change the list at runtime; every session is sent
 *                         `notifications/tools/list_changed`
 *   expireSessions        forget the Streamable HTTP sessions (their requests get 404)
 *
 * `stats` counts HTTP requests, TCP connections, MCP sessions (initializations) and the
 * `tools/list` and `tools/call` requests, so tests can prove connections are reused.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
// zod's v4 API: the SDK's types for v3 shapes run into TypeScript's instantiation depth limit.
import { z } from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const MCP_TEST_DOC = 'MCP gateway guide';

export interface McpTestServerStats {
  /** HTTP requests that passed the credential check. */
  requests: number;
  /** HTTP requests refused with 401. */
  unauthorized: number;
  /** TCP connections accepted. */
  sockets: number;
  /** MCP sessions opened (one `initialize` each), by transport. */
  streamableSessions: number;
  sseSessions: number;
  toolLists: number;
  toolCalls: number;
}

/** A tool added at runtime: it answers with `text`. */
export interface McpTestTool {
  name: string;
  description?: string;
  text: string;
}

export interface McpTestServer {
  /** The Streamable HTTP endpoint. */
  url: string;
  /** The legacy SSE endpoint (GET). */
  sseUrl: string;
  port: number;
  token: string;
  stats: McpTestServerStats;
  addTool(tool: McpTestTool): void;
  removeTool(name: string): void;
  /** Forgets every Streamable HTTP session, as a server that expires them (or restarted) does: their next request gets 404. */
  expireSessions(): Promise<void>;
  /** Stops the server: open sessions end, the port closes (server down). */
  close(): Promise<void>;
}

interface Session {
  server: McpServer;
  transport: Transport;
  /** The runtime tools registered on this session's server. */
  extraTools: Map<string, { remove(): void }>;
}

export async function startMcpTestServer(options: { token?: string; port?: number } = {}): Promise<McpTestServer> {
  const token = options.token ?? `mcp-test-${randomUUID()}`;
  const stats: McpTestServerStats = { requests: 0, unauthorized: 0, sockets: 0, streamableSessions: 0, sseSessions: 0, toolLists: 0, toolCalls: 0 };
  const extraTools = new Map<string, McpTestTool>();
  const streamable = new Map<string, Session>();
  const sse = new Map<string, Session>();

  function newSession(transport: Transport): Session {
    const server = new McpServer({ name: 'mcp-test-server', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    registerFixedTools(server);
    const session: Session = { server, transport, extraTools: new Map() };
    for (const tool of extraTools.values()) session.extraTools.set(tool.name, registerExtraTool(server, tool));
    return session;
  }

  /** Connects the session's server to its transport, counting `tools/list` and `tools/call` as they arrive. */
  async function connect(session: Session): Promise<void> {
    await session.server.connect(session.transport);
    const deliver = session.transport.onmessage;
    session.transport.onmessage = (message, extra) => {
      if ('method' in message && 'id' in message) {
        if (message.method === 'tools/list') stats.toolLists++;
        if (message.method === 'tools/call') stats.toolCalls++;
      }
      deliver?.(message, extra);
    };
  }

  const httpServer = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      stats.unauthorized++;
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    stats.requests++;
    route(req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: error.message }));
    });
  });

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/mcp') return streamableRequest(req, res);
    if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      const session = newSession(transport);
      sse.set(transport.sessionId, session);
      stats.sseSessions++;
      transport.onclose = () => sse.delete(transport.sessionId);
      await connect(session);
      return;
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const session = sse.get(url.searchParams.get('sessionId') ?? '');
      if (!session) return void res.writeHead(404).end('unknown session');
      await (session.transport as SSEServerTransport).handlePostMessage(req, res, await readJson(req));
      return;
    }
    if (url.pathname === '/sse') return void res.writeHead(405, { allow: 'GET' }).end();
    res.writeHead(404).end();
  }

  async function streamableRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = streamable.get(sessionId);
      // The SDK's client reads a 404 as "session gone" (after a restart, say).
      if (!session)
        return void res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      await (session.transport as StreamableHTTPServerTransport).handleRequest(req, res, body);
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        streamable.set(id, session);
        stats.streamableSessions++;
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) streamable.delete(transport.sessionId);
    };
    const session = newSession(transport);
    await connect(session);
    await transport.handleRequest(req, res, body);
  }

  httpServer.on('connection', () => stats.sockets++);
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  const allSessions = () => [...streamable.values(), ...sse.values()];

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sseUrl: `http://127.0.0.1:${port}/sse`,
    port,
    token,
    stats,
    addTool(tool) {
      extraTools.set(tool.name, tool);
      // registerTool sends notifications/tools/list_changed on a connected server.
      for (const session of allSessions()) session.extraTools.set(tool.name, registerExtraTool(session.server, tool));
    },
    removeTool(name) {
      extraTools.delete(name);
      for (const session of allSessions()) {
        session.extraTools.get(name)?.remove();
        session.extraTools.delete(name);
      }
    },
    async expireSessions() {
      const expired = [...streamable.values()];
      streamable.clear();
      await Promise.allSettled(expired.map((session) => session.server.close()));
    },
    async close() {
      await Promise.allSettled(allSessions().map((session) => session.server.close()));
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

function registerFixedTools(server: McpServer): void {
  server.registerTool('search_docs', { description: 'Search the documentation', inputSchema: { query: z.string() } }, ({ query }) =>
    textResult(`Results for "${query}": ${MCP_TEST_DOC}`),
  );
  server.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => textResult(String(a + b)));
  server.registerTool(
    'slow',
    { description: 'Wait, then answer', inputSchema: { ms: z.number() } },
    ({ ms }, extra) =>
      new Promise<CallToolResult>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          resolve(textResult(`waited ${ms} ms`));
        };
        const timer = setTimeout(done, ms);
        extra.signal.addEventListener('abort', done, { once: true });
      }),
  );
  server.registerTool('fail', { description: 'Always fails', inputSchema: {} }, () => ({ ...textResult('the tool failed on purpose'), isError: true }));
}

function registerExtraTool(server: McpServer, tool: McpTestTool): { remove(): void } {
  return server.registerTool(tool.name, { description: tool.description, inputSchema: {} }, () => textResult(tool.text));
}

function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}
