import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { ListPage } from '../../common/http/list.dto';
import { pageNewestFirst, rethrowSlugConflict } from '../keys/admin-list';
import { KeyChangeNotifier } from '../keys/key-change-notifier';
import { McpServerCreateDto, McpServerUpdateDto } from './dto/mcp-server.dto';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { scopeWhere } from '../workspaces/workspace-scope';
import { type WorkspaceScope } from '../../context/caller';
import { McpServerEntity } from './entities/mcp-server.entity';
import { McpRegistry } from './mcp-registry';
import { maskHeaders, sealHeaders } from './mcp-server-headers';
import { McpClientPool } from './mcp-client-pool';

/**
 * Admin CRUD of the MCP server registry: headers (credentials) encrypted at rest, shown as
 * hints only. Each server belongs to the workspace of the scope it was registered in (slugs
 * unique per workspace); an id is found among the visible workspaces, a slug in the acting one.
 */
@Injectable()
export class McpServersService {
  constructor(
    @InjectRepository(McpServerEntity) private readonly repo: Repository<McpServerEntity>,
    private readonly secretBox: SecretBox,
    private readonly keyChanges: KeyChangeNotifier,
    private readonly registry: McpRegistry,
    private readonly workspaces: WorkspaceDirectory,
    private readonly pool: McpClientPool,
  ) {}

  async create(scope: WorkspaceScope, dto: McpServerCreateDto): Promise<Record<string, unknown>> {
    await this.checkUrl(dto.url);
    const row = this.repo.create({
      workspaceId: scope.workspaceId,
      name: dto.name,
      slug: dto.slug,
      url: dto.url,
      headers: sealHeaders(dto.headers ?? {}, this.secretBox),
      allowedTools: dto.allowed_tools ?? null,
      description: dto.description ?? null,
    });
    let saved: McpServerEntity;
    try {
      saved = await this.repo.save(row);
    } catch (error) {
      rethrowSlugConflict(error, 'MCP server', dto.slug);
    }
    await this.keyChanges.changed('mcp_servers');
    return this.toResponse(saved);
  }

  async list(scope: WorkspaceScope, limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const visible = scope.visible === null ? '' : ' and row.workspace_id in (:...visible)';
    const page = await pageNewestFirst(this.repo, `row.deleted_at is null${visible}`, limit, cursor, { visible: scope.visible });
    return { ...page, data: await Promise.all(page.data.map((row) => this.toResponse(row))) };
  }

  async get(scope: WorkspaceScope, slugOrId: string): Promise<Record<string, unknown>> {
    return this.toResponse(await this.find(scope, slugOrId));
  }

  /**
   * The tools the server lists now (asked through the gateway's client pool, as a model
   * operation would), each with whether the registry's allow-list lets callers use it.
   */
  async tools(scope: WorkspaceScope, slugOrId: string): Promise<{ object: 'list'; data: Record<string, unknown>[] }> {
    const row = await this.find(scope, slugOrId);
    const target = await this.registry.find(row.workspaceId, row.id);
    if (!target) throw GatewayError.notFound(`MCP server '${slugOrId}' not found`, 'mcp_server_not_found');
    // Every tool it lists (the pool's own time limit applies), the allow-list told apart below.
    const listed = await this.pool.tools({ ...target, allowedTools: null });
    const allowed = (name: string) => row.allowedTools === null || row.allowedTools.includes(name);
    return { object: 'list', data: listed.map((tool) => ({ name: tool.name, description: tool.description ?? null, allowed: allowed(tool.name) })) };
  }

  async update(scope: WorkspaceScope, slugOrId: string, dto: McpServerUpdateDto): Promise<Record<string, unknown>> {
    const row = await this.find(scope, slugOrId);
    if (dto.url !== undefined && dto.url !== row.url) await this.checkUrl(dto.url);
    Object.assign(row, {
      ...(dto.name !== undefined && { name: dto.name }),
      ...(dto.url !== undefined && { url: dto.url }),
      ...(dto.headers !== undefined && { headers: sealHeaders(dto.headers, this.secretBox, row.headers) }),
      ...(dto.allowed_tools !== undefined && { allowedTools: dto.allowed_tools }),
      ...(dto.description !== undefined && { description: dto.description }),
    });
    const saved = await this.repo.save(row);
    await this.keyChanges.changed('mcp_servers');
    return this.toResponse(saved);
  }

  async remove(scope: WorkspaceScope, slugOrId: string): Promise<Record<string, unknown>> {
    const row = await this.find(scope, slugOrId);
    await this.repo.update({ id: row.id }, { deletedAt: new Date() });
    await this.keyChanges.changed('mcp_servers');
    return { id: row.id, object: 'mcp_server', deleted: true };
  }

  /**
   * The gateway reaches MCP servers the providers cannot (CONTRACT section 10): the host is
   * resolved now, and refused when an address is link-local or metadata, or private outside
   * MCP_ALLOWED_NETWORKS. Connections check again when made (the name may resolve elsewhere later).
   */
  private async checkUrl(url: string): Promise<void> {
    const parsed = new URL(url);
    if (parsed.username || parsed.password)
      throw GatewayError.invalidRequest('url must not carry credentials: send them in headers, which are encrypted and masked', 'url');
    let why: string | null;
    try {
      why = await this.registry.hostPolicy.resolvedRefusal(url);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw GatewayError.invalidRequest(`url: the host ${parsed.hostname} does not resolve (${code})`, 'url', 'mcp_server_unresolvable');
    }
    if (why) throw GatewayError.invalidRequest(`url: ${why}`, 'url', 'mcp_server_not_allowed');
  }

  private async find(scope: WorkspaceScope, slugOrId: string): Promise<McpServerEntity> {
    const where = isUuid(slugOrId) ? { id: slugOrId, ...scopeWhere(scope) } : { slug: slugOrId, workspaceId: scope.workspaceId };
    const row = await this.repo.findOneBy({ ...where, deletedAt: IsNull() });
    if (!row) throw GatewayError.notFound(`Unknown MCP server '${slugOrId}'`, 'mcp_server_not_found');
    return row;
  }

  private async toResponse(row: McpServerEntity): Promise<Record<string, unknown>> {
    return {
      id: row.id,
      object: 'mcp_server',
      name: row.name,
      slug: row.slug,
      workspace: (await this.workspaces.byId(row.workspaceId))?.slug ?? null,
      workspace_id: row.workspaceId,
      url: row.url,
      headers: maskHeaders(row.headers, this.secretBox),
      allowed_tools: row.allowedTools,
      description: row.description,
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}
