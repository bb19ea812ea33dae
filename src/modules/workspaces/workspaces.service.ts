import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { ListPage } from '../../common/http/list.dto';
import { pageNewestFirst, rethrowSlugConflict } from '../keys/admin-list';
import { limitsOf } from '../keys/api-keys.service';
import { KeyChangeNotifier } from '../keys/key-change-notifier';
import { SpendService } from '../keys/spend.service';
import { WorkspaceCreateDto, WorkspaceUpdateDto } from './dto/workspace.dto';
import { DEFAULT_WORKSPACE_ID, WorkspaceEntity } from './workspace.entity';
import { inScope } from './workspace-scope';
import { WorkspaceScope } from '../../context/caller';

/** What a workspace holds that keeps it from being deleted. */
const HOLDINGS: { table: string; live: string; what: string }[] = [
  { table: 'api_keys', live: 'revoked_at is null', what: 'API keys' },
  { table: 'virtual_keys', live: 'deleted_at is null', what: 'virtual keys' },
  { table: 'configs', live: 'deleted_at is null', what: 'configs' },
  { table: 'prompts', live: 'deleted_at is null', what: 'prompts' },
  { table: 'mcp_servers', live: 'deleted_at is null', what: 'MCP servers' },
  { table: 'end_users', live: 'deleted_at is null', what: 'end users' },
];

/** Admin CRUD of workspaces (CONTRACT section 13): owners change them, anyone reads the ones it acts in. */
@Injectable()
export class WorkspacesService {
  constructor(
    @InjectRepository(WorkspaceEntity) private readonly repo: Repository<WorkspaceEntity>,
    private readonly keyChanges: KeyChangeNotifier,
    private readonly spend: SpendService,
  ) {}

  async create(dto: WorkspaceCreateDto): Promise<Record<string, unknown>> {
    const row = await this.repo
      .save(this.repo.create({ name: dto.name, slug: dto.slug, ...limitsOf(dto) }))
      .catch((error: unknown) => rethrowSlugConflict(error, 'workspace', dto.slug));
    await this.keyChanges.changed('workspaces');
    return this.toResponse(row);
  }

  async list(scope: WorkspaceScope, limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const visible = scope.visible === null ? '' : ' and row.id in (:...visible)';
    const page = await pageNewestFirst(this.repo, `row.deleted_at is null${visible}`, limit, cursor, { visible: scope.visible });
    return { ...page, data: await Promise.all(page.data.map((row) => this.toResponse(row))) };
  }

  async get(scope: WorkspaceScope, idOrSlug: string): Promise<Record<string, unknown>> {
    return this.toResponse(await this.find(scope, idOrSlug));
  }

  async update(scope: WorkspaceScope, idOrSlug: string, dto: WorkspaceUpdateDto): Promise<Record<string, unknown>> {
    const row = await this.find(scope, idOrSlug);
    if (dto.name === null || dto.slug === null)
      throw GatewayError.invalidRequest(`${dto.name === null ? 'name' : 'slug'} cannot be null`, dto.name === null ? 'name' : 'slug');
    if (row.id === DEFAULT_WORKSPACE_ID && dto.slug !== undefined && dto.slug !== row.slug) {
      throw GatewayError.conflict('The default workspace keeps its slug: existing data and clients name it', 'default_workspace');
    }
    Object.assign(row, { ...(dto.name !== undefined && { name: dto.name }), ...(dto.slug !== undefined && { slug: dto.slug }), ...limitsOf(dto) });
    const saved = await this.repo.save(row).catch((error: unknown) => rethrowSlugConflict(error, 'workspace', dto.slug ?? row.slug));
    await this.keyChanges.changed('workspaces');
    return this.toResponse(saved);
  }

  /** Only an empty workspace goes: what it holds would otherwise be left without an owner. */
  async remove(scope: WorkspaceScope, idOrSlug: string): Promise<Record<string, unknown>> {
    const row = await this.find(scope, idOrSlug);
    if (row.id === DEFAULT_WORKSPACE_ID) throw GatewayError.conflict('The default workspace cannot be deleted', 'default_workspace');
    const held: string[] = [];
    for (const { table, live, what } of HOLDINGS) {
      const [{ count }] = await this.repo.query(`select count(*)::int as count from ${table} where workspace_id = $1 and ${live}`, [row.id]);
      if (count > 0) held.push(`${count} ${what}`);
    }
    if (held.length > 0)
      throw GatewayError.conflict(`Workspace '${row.slug}' still holds ${held.join(', ')}: delete or revoke them first`, 'workspace_not_empty');
    await this.repo.update({ id: row.id }, { deletedAt: new Date() });
    await this.keyChanges.changed('workspaces');
    return { id: row.id, object: 'workspace', deleted: true };
  }

  private async find(scope: WorkspaceScope, idOrSlug: string): Promise<WorkspaceEntity> {
    const where = isUuid(idOrSlug) ? { id: idOrSlug } : { slug: idOrSlug };
    const row = await this.repo.findOneBy({ ...where, deletedAt: IsNull() });
    if (!row || !inScope(scope, row.id)) throw GatewayError.notFound(`No workspace '${idOrSlug}'`, 'workspace_not_found');
    return row;
  }

  private async toResponse(row: WorkspaceEntity): Promise<Record<string, unknown>> {
    return {
      id: row.id,
      object: 'workspace',
      name: row.name,
      slug: row.slug,
      budget_limit_usd: row.budgetLimitUsd,
      budget_period: row.budgetPeriod,
      rate_limits: row.rateLimits,
      ...(await this.spend.budgetStatus('workspace_id', row)),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}
