import { Injectable, Logger } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import { GatewayError } from '../../common/errors/gateway-error';
import { KeyLookupService } from '../keys/key-lookup.service';
import { McpClientPool } from './mcp-client-pool';
import { McpRegistry } from './mcp-registry';
import type { McpServerTarget } from './mcp-types';
import { modelToolName, type OfferedTool } from './tool-dialects';

/** A registered server the caller may use, with the tools its key allows there (null: every tool the registry allows). */
export interface AllowedServer {
  server: McpServerTarget;
  tools: readonly string[] | null;
}

/**
 * What a caller may reach through the gateway's MCP: the servers its keys allow (the API
 * key's `allowed_mcp_servers` and `allowed_tools`, narrowed by a virtual key named in
 * `x-gateway-virtual-key`) and their tools, listed through the shared connections.
 * Used by the tool loop and by the proxy for MCP clients.
 */
@Injectable()
export class McpCatalog {
  private readonly logger = new Logger(McpCatalog.name);

  constructor(
    private readonly registry: McpRegistry,
    private readonly pool: McpClientPool,
    private readonly keys: KeyLookupService,
  ) {}

  /**
   * The servers `slugs` names (null: every server the caller may use). An unregistered
   * slug is `unknown` (a 400 when a header named it, a 404 when a URL did), one the
   * caller may not use a 403.
   */
  async servers(context: RequestContext, slugs: readonly string[] | null, unknown: (slug: string) => GatewayError): Promise<AllowedServer[]> {
    const virtualKeyName = context.requestHeaders['x-gateway-virtual-key'];
    const virtualKey = typeof virtualKeyName === 'string' ? await this.keys.virtualKey(context.principal!.workspaceId, virtualKeyName) : null;
    const access = await this.registry.accessOf(context.principal!, virtualKey);
    // The servers of the key's own workspace only: another workspace's slug is unknown here.
    const workspaceId = context.principal!.workspaceId;
    if (slugs === null) {
      const all = await this.registry.list(workspaceId);
      return all.filter((server) => access.has(server.slug)).map((server) => ({ server, tools: access.get(server.slug) ?? null }));
    }
    const allowed: AllowedServer[] = [];
    for (const slug of slugs) {
      const server = await this.registry.find(workspaceId, slug);
      if (!server) throw unknown(slug);
      if (!access.has(server.slug)) throw GatewayError.permission(`This key may not use MCP server '${slug}' (allowed_mcp_servers)`, 'mcp_server_not_allowed');
      allowed.push({ server, tools: access.get(server.slug) ?? null });
    }
    return allowed;
  }

  /**
   * The tools of `servers` the caller may call, named `{slug}__{tool}` when `prefixed`
   * (several servers behind one name space). With `skipUnreachable`, a server that cannot
   * be listed is left out with a warning instead of failing the whole list.
   */
  async tools(context: RequestContext, servers: readonly AllowedServer[], options: { prefixed: boolean; skipUnreachable: boolean }): Promise<OfferedTool[]> {
    const lists = await Promise.all(
      servers.map(async ({ server, tools: allowed }) => {
        try {
          const tools = await this.pool.tools(server, context.abort.signal);
          return tools
            .filter((tool) => !allowed || allowed.includes(tool.name))
            .map((tool) => ({
              name: options.prefixed ? modelToolName(server.slug, tool.name) : tool.name,
              server: server.slug,
              tool: tool.name,
              description: tool.description,
              inputSchema: tool.inputSchema,
            }));
        } catch (error) {
          if (!options.skipUnreachable || !(error instanceof GatewayError)) throw error;
          this.logger.warn({ msg: 'MCP server left out of the tool list', server: server.slug, error: error.message });
          return [];
        }
      }),
    );
    return lists.flat();
  }
}
