import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash } from 'node:crypto';
import Ajv, { ValidateFunction } from 'ajv';
import { Agent, fetch as undiciFetch } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ClientClosedRequestError, GatewayError } from '../../common/errors/gateway-error';
import { ajvRegExp } from '../../common/regex/safe-regex';
import type { Environment } from '../../config/environment';
import { UpstreamHostPolicy, UpstreamHostRefusedError } from '../upstream/upstream-host-policy';
import type { McpCallResult, McpServerTarget, McpTool } from './mcp-types';
import { mcpHostPolicy } from './mcp-host-policy';

/** Why a call was refused before anything was sent to the server. */
export type McpCallRefusal = 'unknown_tool' | 'tool_not_allowed' | 'invalid_arguments';

/** A tool call the gateway refuses itself: the caller answers it as its own error (MCP error, tool result). */
export class McpCallRefused extends Error {
  constructor(
    readonly code: McpCallRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** A tool as listed, with its argument check compiled once per list. */
interface CatalogEntry {
  tool: McpTool;
  validate: ValidateFunction | null;
  ajv: Ajv;
}

/** One open MCP session with a server. */
interface Connection {
  client: Client;
  /** The server's tools (every one it lists), null until listed or after a failed refresh. */
  catalog: Promise<Map<string, CatalogEntry>> | null;
  /** Set once, when the session ended or was dropped: the next use opens a new one. */
  closed: boolean;
}

interface PoolEntry {
  /** The server's id and a hash of its URL and headers: a changed registration gets a new connection. */
  key: string;
  connection: Promise<Connection>;
  /** The connection once open. */
  opened: Connection | null;
}

/** A deadline passed before the server answered. */
class McpDeadlineError extends Error {}

// A server lists its tools in pages; past this many the list is cut rather than fetched forever.
const MAX_TOOL_PAGES = 50;

/**
 * The gateway's connections to registered MCP servers: one SDK `Client` per server, kept
 * and reused across requests (an MCP session costs an initialize round trip), its tool list
 * cached until the server says it changed (`notifications/tools/list_changed`). Streamable
 * HTTP first; a server that refuses its initialize POST with a 4xx gets the legacy HTTP+SSE
 * transport (the SDK's backwards-compatibility advice). Failures never reach the caller as
 * the SDK's errors: listing throws a `GatewayError`, a call answers an `isError` result.
 * Header values (credentials) never appear in a message.
 */
@Injectable()
export class McpClientPool implements OnApplicationShutdown {
  private readonly entries = new Map<string, PoolEntry>();
  private readonly timeoutMs: number;
  /**
   * Where MCP servers may be (CONTRACT section 10): public addresses, private ones inside
   * MCP_ALLOWED_NETWORKS, never link-local or metadata. The registry checked the URL when it
   * was registered; connections check again on lookup (the name may resolve elsewhere now).
   */
  private readonly hostPolicy: UpstreamHostPolicy;
  private readonly agent: Agent;
  /** The transports' fetch: undici's, through the agent whose lookup applies the policy. */
  private readonly fetch: FetchLike;

  constructor(config: ConfigService<Environment, true>) {
    this.timeoutMs = config.get('MCP_TIMEOUT_MS', { infer: true });
    this.hostPolicy = mcpHostPolicy(config);
    this.agent = new Agent({ connect: { timeout: this.timeoutMs, lookup: this.hostPolicy.lookup } });
    const dispatcher = this.agent;
    this.fetch = (url, init) => undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher });
  }

  /** The server's tools the registry allows (`server.allowedTools`), listed once per session and refreshed on list_changed. */
  async tools(server: McpServerTarget, signal?: AbortSignal): Promise<McpTool[]> {
    const catalog = await this.catalogOf(server, signal);
    return [...catalog.values()].map((entry) => entry.tool).filter((tool) => isAllowed(server, tool.name));
  }

  /**
   * Calls a tool. Throws `McpCallRefused` before sending when the tool is not allowed, not
   * listed or its arguments do not match its schema; every other failure (unreachable,
   * timeout, dropped connection, JSON-RPC error, the caller's abort) is an `isError` result
   * that says what happened.
   */
  async call(server: McpServerTarget, tool: string, args: unknown, signal?: AbortSignal): Promise<McpCallResult> {
    const started = performance.now();
    const failed = (text: string): McpCallResult => ({
      content: [{ type: 'text', text: redact(text, server) }],
      isError: true,
      latencyMs: performance.now() - started,
    });
    if (!isAllowed(server, tool)) throw new McpCallRefused('tool_not_allowed', `Tool ${tool} of MCP server ${server.slug} is not allowed`);

    let catalog: Map<string, CatalogEntry>;
    try {
      catalog = await this.catalogOf(server, signal);
    } catch (error) {
      return failed(error instanceof GatewayError ? error.message : cancelled(server, tool));
    }
    const entry = catalog.get(tool);
    if (!entry) throw new McpCallRefused('unknown_tool', `MCP server ${server.slug} has no tool ${tool}`);
    checkArguments(server, entry, args);

    try {
      const result = await this.withConnection(server, signal, false, ({ client }) =>
        client.callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, { timeout: this.timeoutMs, signal }),
      );
      return {
        content: Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [],
        ...(isRecord(result.structuredContent) && { structuredContent: result.structuredContent }),
        isError: result.isError === true,
        latencyMs: performance.now() - started,
      };
    } catch (error) {
      if (signal?.aborted) return failed(cancelled(server, tool));
      if (isTimeout(error)) return failed(`MCP server ${server.slug} did not answer tools/call ${tool} within ${this.timeoutMs} ms`);
      if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed)
        return failed(`MCP server ${server.slug} answered tools/call ${tool} with an error: ${error.message}`);
      return failed(`MCP server ${server.slug} could not be reached for tools/call ${tool} (${describe(error)})`);
    }
  }

  /** Closes and drops the server's connection (the registry calls it when a server changes or goes). */
  async forget(serverId: string): Promise<void> {
    const entry = this.entries.get(serverId);
    if (!entry) return;
    this.entries.delete(serverId);
    await entry.connection.then(close, () => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((id) => this.forget(id)));
    await this.agent.close();
  }

  private async catalogOf(server: McpServerTarget, signal: AbortSignal | undefined): Promise<Map<string, CatalogEntry>> {
    try {
      return await this.withConnection(server, signal, true, (connection) => (connection.catalog ??= this.listTools(server, connection)));
    } catch (error) {
      if (signal?.aborted) throw new ClientClosedRequestError();
      if (error instanceof GatewayError) throw error;
      if (isTimeout(error)) throw mcpTimeout(server, 'tools/list', this.timeoutMs);
      throw GatewayError.mcpServerUnreachable(redact(`MCP server ${server.slug} could not list its tools (${describe(error)})`, server));
    }
  }

  /**
   * Runs `use` on the server's connection. A connection that fails with a transport error is
   * dropped (the next use opens a new one). When the failed connection was an old one (the
   * server may have restarted) it is tried once on a new connection: always for a request
   * that may run twice (`idempotent`: tools/list), otherwise only when the server cannot
   * have run it (its session was refused, or nothing listens).
   */
  private async withConnection<T>(
    server: McpServerTarget,
    signal: AbortSignal | undefined,
    idempotent: boolean,
    use: (connection: Connection) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const { connection, reused } = await this.connectionFor(server, signal);
      try {
        return await use(connection);
      } catch (error) {
        if (isTransportFailure(error)) await this.drop(server.id, connection);
        const retry = reused && attempt === 0 && !signal?.aborted && isTransportFailure(error) && (idempotent || wasNotDelivered(error));
        if (!retry) throw error;
      }
    }
  }

  private async connectionFor(server: McpServerTarget, signal: AbortSignal | undefined): Promise<{ connection: Connection; reused: boolean }> {
    const key = connectionKey(server);
    let entry = this.entries.get(server.id);
    if (entry && entry.key !== key) {
      await this.forget(server.id);
      entry = undefined;
    }
    if (entry) {
      // The connection is shared: one caller's abort stops its wait, not the connect others wait for.
      const connection = await untilAborted(entry.connection, signal);
      if (!connection.closed) return { connection, reused: true };
      await this.drop(server.id, connection);
    }
    const created: PoolEntry = { key, connection: this.open(server), opened: null };
    created.connection.then(
      (connection) => (created.opened = connection),
      () => {
        if (this.entries.get(server.id) === created) this.entries.delete(server.id);
      },
    );
    this.entries.set(server.id, created);
    return { connection: await untilAborted(created.connection, signal), reused: false };
  }

  private async drop(serverId: string, connection: Connection): Promise<void> {
    if (this.entries.get(serverId)?.opened === connection) this.entries.delete(serverId);
    await close(connection);
  }

  /** Opens a session: Streamable HTTP, else (a 4xx to the initialize POST) the legacy SSE transport. */
  private async open(server: McpServerTarget): Promise<Connection> {
    // An IP literal is never looked up: checked here.
    this.hostPolicy.checkUrl(server.url);
    const url = new URL(server.url);
    const options = { requestInit: { headers: server.headers }, fetch: this.fetch };
    try {
      return await this.connect(server, new StreamableHTTPClientTransport(url, options));
    } catch (error) {
      if (!speaksOnlySse(error)) throw error;
    }
    return this.connect(server, new SSEClientTransport(url, options));
  }

  private async connect(server: McpServerTarget, transport: StreamableHTTPClientTransport | SSEClientTransport): Promise<Connection> {
    const client = new Client({ name: 'ai-gateway', version: '1.0.0' });
    const connection: Connection = { client, catalog: null, closed: false };
    // The transports report here what breaks outside a request, above all the event stream
    // that carries list_changed (dropped: the server restarted or went away; 404: the session
    // is gone). The tool list may then be stale: the next use opens a new connection. Another
    // refusal of that stream (a server without one that does not answer 405) changes nothing.
    // The legacy SSE transport's stream is its session, and its EventSource would retry for
    // ever: closed at once. Streamable HTTP's requests do not need the stream, and the SDK
    // stops retrying it by itself: calls under way finish.
    client.onerror = (error) => {
      if (transport instanceof SSEClientTransport) void close(connection);
      else if (!(error instanceof StreamableHTTPError) || error.code === 404) connection.closed = true;
    };
    client.onclose = () => {
      connection.closed = true;
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      // Listed again at once, so the next tools() finds the new list (or waits for it).
      connection.catalog = this.listTools(server, connection);
      connection.catalog.catch(() => undefined);
    });
    try {
      // The initialize request has its own timeout; the SSE transport's GET does not, hence the deadline around both.
      await withDeadline(client.connect(transport, { timeout: this.timeoutMs }), this.timeoutMs);
      return connection;
    } catch (error) {
      await close(connection);
      if (isTimeout(error)) throw mcpTimeout(server, 'initialize', this.timeoutMs);
      throw error;
    }
  }

  /** Every tool the server lists, with its argument checks compiled (one ajv per list, dropped with it). */
  private listTools(server: McpServerTarget, connection: Connection): Promise<Map<string, CatalogEntry>> {
    const listing = (async () => {
      // A server's `pattern`s run in RE2: a hostile server cannot stall the gateway with one.
      const ajv = new Ajv({ strict: false, logger: false, code: { regExp: ajvRegExp } });
      const catalog = new Map<string, CatalogEntry>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const listed = await connection.client.listTools(cursor ? { cursor } : undefined, { timeout: this.timeoutMs });
        for (const tool of listed.tools) {
          const inputSchema = tool.inputSchema as Record<string, unknown>;
          catalog.set(tool.name, {
            tool: { server: server.slug, name: tool.name, ...(tool.description !== undefined && { description: tool.description }), inputSchema },
            validate: compile(ajv, inputSchema),
            ajv,
          });
        }
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      return catalog;
    })();
    // A failed list is not kept: the next tools() asks again.
    listing.catch(() => {
      if (connection.catalog === listing) connection.catalog = null;
    });
    return listing;
  }
}

function isAllowed(server: McpServerTarget, tool: string): boolean {
  return server.allowedTools === null || server.allowedTools.includes(tool);
}

function checkArguments(server: McpServerTarget, entry: CatalogEntry, args: unknown): void {
  if (!isRecord(args)) throw new McpCallRefused('invalid_arguments', `The arguments of tool ${entry.tool.name} of MCP server ${server.slug} must be an object`);
  if (entry.validate && !entry.validate(args)) {
    const why = entry.ajv.errorsText(entry.validate.errors, { dataVar: 'arguments' });
    throw new McpCallRefused(
      'invalid_arguments',
      `The arguments of tool ${entry.tool.name} of MCP server ${server.slug} do not match its input schema: ${why}`,
    );
  }
}

/**
 * The tool's argument check, or null when its schema does not compile: the server then
 * checks its arguments itself, and a broken schema does not make the tool unusable.
 * `$schema` is dropped: servers name drafts (2020-12) this ajv does not load, and the
 * keywords tools use mean the same in each.
 */
function compile(ajv: Ajv, inputSchema: Record<string, unknown>): ValidateFunction | null {
  const { $schema: _draft, ...schema } = inputSchema;
  try {
    return ajv.compile(schema);
  } catch {
    return null;
  }
}

function connectionKey(server: McpServerTarget): string {
  const headers = Object.entries(server.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${server.id}:${createHash('sha256')
    .update(JSON.stringify([server.url, headers]))
    .digest('hex')}`;
}

async function close(connection: Connection): Promise<void> {
  connection.closed = true;
  await connection.client.close().catch(() => undefined);
}

/** A server that answers the Streamable HTTP initialize POST with a 4xx (not an auth refusal) may speak the older HTTP+SSE transport. */
function speaksOnlySse(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400 && error.code < 500 && error.code !== 401 && error.code !== 403;
}

function isTimeout(error: unknown): boolean {
  return error instanceof McpDeadlineError || (error instanceof McpError && error.code === ErrorCode.RequestTimeout);
}

/** The connection itself failed (not the server's answer): it is not used again. */
function isTransportFailure(error: unknown): boolean {
  return !(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed;
}

/** The server refused the request before running it: its session is gone (404), or nothing listens. */
function wasNotDelivered(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code === 404;
  return networkCode(error) === 'ECONNREFUSED';
}

function networkCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/** A short reason built from what the error is, not its text (a server's body may echo what it was sent). */
function describe(error: unknown): string {
  const refused = error instanceof UpstreamHostRefusedError ? error : (error as { cause?: unknown } | null)?.cause;
  if (refused instanceof UpstreamHostRefusedError) return `its address is not allowed: ${refused.message}`;
  if (error instanceof UnauthorizedError) return 'HTTP 401';
  if (error instanceof StreamableHTTPError || error instanceof SseError)
    return error.code !== undefined && error.code > 0 ? `HTTP ${error.code}` : 'unexpected answer';
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed ? 'connection closed' : `JSON-RPC error ${error.code}`;
  return networkCode(error) ?? 'network error';
}

function cancelled(server: McpServerTarget, tool: string): string {
  return `The call to tool ${tool} of MCP server ${server.slug} was cancelled`;
}

function mcpTimeout(server: McpServerTarget, method: string, timeoutMs: number): GatewayError {
  return GatewayError.mcpTimeout(`MCP server ${server.slug} did not answer ${method} within ${timeoutMs} ms`);
}

/** A server's error message may echo what it was sent: header values are masked out of every text the pool makes. */
function redact(text: string, server: McpServerTarget): string {
  let masked = text;
  for (const value of Object.values(server.headers)) {
    for (const secret of [value, ...value.split(/\s+/)]) if (secret.length >= 6) masked = masked.split(secret).join('***');
  }
  return masked;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Waits for `promise`, or rejects as soon as `signal` aborts (the promise itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new ClientClosedRequestError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ClientClosedRequestError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new McpDeadlineError()), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
