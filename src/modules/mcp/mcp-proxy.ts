import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RequestContext } from '../../context/request-context';
import { GatewayError } from '../../common/errors/gateway-error';
import { McpCatalog, type AllowedServer } from './mcp-catalog';
import { McpToolCaller } from './mcp-tool-caller';
import type { OfferedTool } from './tool-dialects';

const GATEWAY_SERVER = { name: 'ai-gateway', version: '1.0.0' };

/**
 * The gateway as an MCP server for MCP clients (IDEs, agents): `/v1/mcp/{slug}` is one
 * registered server, `/v1/mcp` every server the key may use, tools named `{slug}__{tool}`.
 * Stateless Streamable HTTP: each POST gets a server and transport of its own (no session
 * to keep or lose between instances), while the connections to the registered servers are
 * the shared ones of McpClientPool. `tools/list` shows only the allowed tools; calling
 * another is an MCP error, not a forward; each call is a log row.
 */
@Injectable()
export class McpProxy {
  constructor(
    private readonly catalog: McpCatalog,
    private readonly caller: McpToolCaller,
  ) {}

  /** Answers one HTTP request of an MCP client; `slug` null for the aggregate. Unknown or forbidden servers fail before MCP (404/403). */
  async handle(context: RequestContext, req: Request, res: Response, slug: string | null): Promise<void> {
    const servers = await this.catalog.servers(context, slug === null ? null : [slug], (name) =>
      GatewayError.notFound(`MCP server '${name}' is not registered`, 'unknown_mcp_server'),
    );
    const server = this.serverFor(context, servers, slug);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  private serverFor(context: RequestContext, servers: AllowedServer[], slug: string | null): Server {
    const single = slug !== null;
    const server = new Server(
      { ...GATEWAY_SERVER, ...(single ? { name: `ai-gateway/${slug}` } : {}) },
      { capabilities: { tools: {} }, ...(single && servers[0].server.description ? { instructions: servers[0].server.description } : {}) },
    );
    const listed = () =>
      this.catalog.tools(context, servers, { prefixed: !single, skipUnreachable: !single }).catch((error: unknown) => {
        throw error instanceof GatewayError ? new McpError(ErrorCode.InternalError, error.message) : error;
      });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: (await listed()).map((tool) => ({
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
        inputSchema: tool.inputSchema as { type: 'object' },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) =>
      this.call(context, servers, await listed(), request.params.name, request.params.arguments ?? {}),
    );
    return server;
  }

  private async call(context: RequestContext, servers: AllowedServer[], tools: OfferedTool[], name: string, args: unknown): Promise<CallToolResult> {
    const tool = tools.find((candidate) => candidate.name === name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool '${name}' is not one this key may call here (tools/list names them)`);
    const server = servers.find((allowed) => allowed.server.slug === tool.server)!.server;
    const done = await this.caller.call(context, server, tool.tool, args);
    if (done.refusal) throw new McpError(done.refusal.status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, done.refusal.message);
    const result = done.result!;
    return {
      content: result.content as CallToolResult['content'],
      ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
      isError: result.isError,
    };
  }
}
