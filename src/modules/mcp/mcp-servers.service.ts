import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { ListPage } from '../../common/http/list.dto';
import { pageNewestFirst, rethrowSlugConflict } from '../keys/admin-list';
import { KeyChangeNotifier } from '../keys/key-change-notifier.service';
import { McpServerCreateDto, McpServerUpdateDto } from './dto/mcp-server.dto';
import { McpServerEntity } from './entities/mcp-server.entity';
import { McpRegistry } from './mcp-registry.service';
import { maskHeaders, sealHeaders } from './mcp-server-headers';

/** Admin CRUD of the MCP server registry: headers (credentials) encrypted at rest, shown as hints only. */
@Injectable()
export class McpServersService {
  constructor(
    @InjectRepository(McpServerEntity) private readonly repo: Repository<McpServerEntity>,
    private readonly secretBox: SecretBox,
    private readonly keyChanges: KeyChangeNotifier,
    private readonly registry: McpRegistry,
  ) {}

  async create(dto: McpServerCreateDto): Promise<Record<string, unknown>> {
    await this.checkUrl(dto.url);
    const row = this.repo.create({
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

  async list(limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const page = await pageNewestFirst(this.repo, 'row.deleted_at is null', limit, cursor);
    return { ...page, data: page.data.map((row) => this.toResponse(row)) };
  }

  async get(slugOrId: string): Promise<Record<string, unknown>> {
    return this.toResponse(await this.find(slugOrId));
  }

  async update(slugOrId: string, dto: McpServerUpdateDto): Promise<Record<string, unknown>> {
    const row = await this.find(slugOrId);
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

  async remove(slugOrId: string): Promise<Record<string, unknown>> {
    const row = await this.find(slugOrId);
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
    if (parsed.username || parsed.password) throw GatewayError.invalidRequest('url must not carry credentials: send them in headers, which are encrypted and masked', 'url');
    let why: string | null;
    try {
      why = await this.registry.hostPolicy.resolvedRefusal(url);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw GatewayError.invalidRequest(`url: the host ${parsed.hostname} does not resolve (${code})`, 'url', 'mcp_server_unresolvable');
    }
    if (why) throw GatewayError.invalidRequest(`url: ${why}`, 'url', 'mcp_server_not_allowed');
  }

  private async find(slugOrId: string): Promise<McpServerEntity> {
    const where = isUuid(slugOrId) ? { id: slugOrId } : { slug: slugOrId };
    const row = await this.repo.findOneBy({ ...where, deletedAt: IsNull() });
    if (!row) throw GatewayError.notFound(`Unknown MCP server '${slugOrId}'`, 'mcp_server_not_found');
    return row;
  }

  private toResponse(row: McpServerEntity): Record<string, unknown> {
    return {
      id: row.id,
      object: 'mcp_server',
      name: row.name,
      slug: row.slug,
      url: row.url,
      headers: maskHeaders(row.headers, this.secretBox),
      allowed_tools: row.allowedTools,
      description: row.description,
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}
