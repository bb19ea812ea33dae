import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { EntityManager, IsNull, Repository } from 'typeorm';
import { maskSecret, sha256 } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { ListPage } from '../../common/http/list.dto';
import { pageNewestFirst } from './admin-list';
import { ApiKeyCreateDto, ApiKeyUpdateDto } from './dto/api-key.dto';
import { ApiKeyEntity } from './entities/api-key.entity';
import { KeyChangeNotifier } from './key-change-notifier';
import { KeyLookupService } from './key-lookup.service';
import { mcpAccessOf } from '../../context/mcp-access-fields';
import { SpendService } from './spend.service';
import { LEGACY_ROLES, outranks, Role } from '../workspaces/roles';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { inScope, scopeWhere } from '../workspaces/workspace-scope';
import { WorkspaceScope } from '../../context/caller';

export function generateApiKeySecret(): string {
  return `gk-${randomBytes(24).toString('base64url')}`;
}

/** Admin CRUD of gateway API keys. The secret is shown once, at creation. */
@Injectable()
export class ApiKeysService {
  constructor(
    @InjectRepository(ApiKeyEntity) private readonly repo: Repository<ApiKeyEntity>,
    private readonly keyChanges: KeyChangeNotifier,
    private readonly spend: SpendService,
    private readonly lookup: KeyLookupService,
    private readonly workspaces: WorkspaceDirectory,
  ) {}

  async create(scope: WorkspaceScope, dto: ApiKeyCreateDto): Promise<Record<string, unknown>> {
    const workspaceId = await this.workspaceFor(scope, dto.workspace);
    const role = roleOf(dto.role) ?? 'member';
    mayGive(scope, role);
    await this.checkDefaults(workspaceId, dto);
    const secret = generateApiKeySecret();
    const row = await this.repo.save(
      this.repo.create({
        workspaceId,
        name: dto.name,
        role,
        keyHash: sha256(secret),
        keyHint: maskSecret(secret),
        metadata: dto.metadata ?? {},
        defaultVirtualKey: dto.default_virtual_key ?? null,
        defaultConfig: dto.default_config ?? null,
        ...limitsOf(dto),
        ...mcpAccessOf(dto),
      }),
    );
    return { ...(await this.toResponse(row)), key: secret };
  }

  async list(scope: WorkspaceScope, limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const visible = scope.visible === null ? '' : ' and row.workspace_id in (:...visible)';
    const page = await pageNewestFirst(this.repo, `row.revoked_at is null${visible}`, limit, cursor, { visible: scope.visible });
    return { ...page, data: await Promise.all(page.data.map((row) => this.toResponse(row))) };
  }

  async get(scope: WorkspaceScope, id: string): Promise<Record<string, unknown>> {
    return this.toResponse(await this.find(scope, id));
  }

  async update(scope: WorkspaceScope, id: string, dto: ApiKeyUpdateDto): Promise<Record<string, unknown>> {
    const row = await this.find(scope, id);
    mayChange(scope, row);
    const role = roleOf(dto.role);
    if (role) mayGive(scope, role);
    await this.checkDefaults(row.workspaceId, dto);
    const demoted = row.role === 'owner' && role !== undefined && role !== 'owner';
    Object.assign(row, {
      ...(dto.name !== undefined && { name: dto.name }),
      ...(role !== undefined && { role }),
      ...(dto.metadata !== undefined && { metadata: dto.metadata }),
      ...(dto.default_virtual_key !== undefined && { defaultVirtualKey: dto.default_virtual_key }),
      ...(dto.default_config !== undefined && { defaultConfig: dto.default_config }),
      ...limitsOf(dto),
      ...mcpAccessOf(dto),
    });
    const saved = await this.repo.manager.transaction(async (tx) => {
      if (demoted) await ownerMayGo(tx, row, 'demoted');
      return tx.save(row);
    });
    await this.keyChanges.changed('api_keys');
    return this.toResponse(saved);
  }

  /** Revokes: the row stays, so its logs still name it. */
  async revoke(scope: WorkspaceScope, id: string): Promise<Record<string, unknown>> {
    const row = await this.find(scope, id);
    mayChange(scope, row);
    await this.repo.manager.transaction(async (tx) => {
      if (row.role === 'owner' || row.isBootstrap) await ownerMayGo(tx, row, 'revoked');
      await tx.update(ApiKeyEntity, { id: row.id }, { revokedAt: new Date() });
    });
    await this.keyChanges.changed('api_keys');
    return { id: row.id, object: 'api_key', deleted: true };
  }

  /**
   * A default route must name something that exists now in the key's own workspace (it is
   * looked up again per request, there only).
   */
  private async checkDefaults(workspaceId: string, dto: ApiKeyUpdateDto): Promise<void> {
    if (dto.default_virtual_key && !(await this.lookup.virtualKey(workspaceId, dto.default_virtual_key))) {
      throw GatewayError.invalidRequest(`default_virtual_key: no virtual key '${dto.default_virtual_key}'`, 'default_virtual_key');
    }
    if (dto.default_config && !(await this.lookup.storedConfig(workspaceId, dto.default_config))) {
      throw GatewayError.invalidRequest(`default_config: no config '${dto.default_config}'`, 'default_config');
    }
  }

  /** The workspace a new key goes to: the one named, if the caller may act there, else the caller's. */
  private async workspaceFor(scope: WorkspaceScope, slug: string | undefined): Promise<string> {
    if (slug === undefined) return scope.workspaceId;
    const workspace = await this.workspaces.bySlug(slug);
    if (!workspace || !inScope(scope, workspace.id)) throw GatewayError.notFound(`No workspace '${slug}'`, 'workspace_not_found');
    return workspace.id;
  }

  private async find(scope: WorkspaceScope, id: string): Promise<ApiKeyEntity> {
    const row = isUuid(id) ? await this.repo.findOneBy({ id, revokedAt: IsNull(), ...scopeWhere(scope) }) : null;
    if (!row) throw GatewayError.notFound(`No API key with id '${id}'`, 'api_key_not_found');
    return row;
  }

  private async toResponse(row: ApiKeyEntity): Promise<Record<string, unknown>> {
    return {
      id: row.id,
      object: 'api_key',
      name: row.name,
      role: row.role,
      workspace: (await this.workspaces.byId(row.workspaceId))?.slug ?? null,
      workspace_id: row.workspaceId,
      key_hint: row.keyHint,
      /** GATEWAY_ADMIN_KEY's own row: it cannot be revoked or demoted. */
      is_bootstrap: row.isBootstrap,
      budget_limit_usd: row.budgetLimitUsd,
      budget_period: row.budgetPeriod,
      rate_limits: row.rateLimits,
      expires_at: row.expiresAt?.toISOString() ?? null,
      metadata: row.metadata,
      default_virtual_key: row.defaultVirtualKey,
      default_config: row.defaultConfig,
      allowed_mcp_servers: row.allowedMcpServers,
      allowed_tools: row.allowedMcpTools,
      ...(await this.spend.budgetStatus('api_key_id', row)),
      last_used_at: row.lastUsedAt?.toISOString() ?? null,
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}

function roleOf(name: string | undefined): Role | undefined {
  return name === undefined ? undefined : (LEGACY_ROLES[name] ?? (name as Role));
}

/** Nobody gives a role above their own: only an owner makes owners (CONTRACT section 13). */
function mayGive(scope: WorkspaceScope, role: Role): void {
  if (!outranks(scope.caller.role, role)) {
    throw new GatewayError(403, 'permission_error', `A caller with role ${scope.caller.role} cannot give the role ${role}`, 'role_not_allowed', 'role');
  }
}

/** Nor changes or revokes a key that outranks it (an admin cannot revoke an owner's key). */
function mayChange(scope: WorkspaceScope, row: ApiKeyEntity): void {
  if (!outranks(scope.caller.role, row.role)) {
    throw GatewayError.permission(`A caller with role ${scope.caller.role} cannot change a key with role ${row.role}`, 'role_not_allowed');
  }
}

/**
 * Nobody may lock the organisation out, whatever client asks: the bootstrap key
 * (GATEWAY_ADMIN_KEY, recreated only at a restart) and the last usable owner key are
 * neither revoked nor demoted (409). The owner rows stay locked until the caller's change
 * commits, so two owners revoking each other at once cannot both succeed.
 */
async function ownerMayGo(tx: EntityManager, row: ApiKeyEntity, what: 'revoked' | 'demoted'): Promise<void> {
  if (row.isBootstrap) {
    throw GatewayError.conflict(
      `The bootstrap admin key cannot be ${what}: it is GATEWAY_ADMIN_KEY; change that variable and restart to replace it`,
      'bootstrap_key',
    );
  }
  const owners: { id: string }[] = await tx.query(
    `select id from api_keys where role = 'owner' and revoked_at is null and (expires_at is null or expires_at > now()) order by id for update`,
  );
  if (!owners.some((owner) => owner.id !== row.id))
    throw GatewayError.conflict(`The last owner key cannot be ${what}: create another owner key first`, 'last_owner_key');
}

/** The budget/limit fields of a create or update body, as entity fields. */
export function limitsOf(dto: {
  budget_limit_usd?: number | null;
  budget_period?: ApiKeyEntity['budgetPeriod'];
  rate_limits?: ApiKeyEntity['rateLimits'];
  expires_at?: string | null;
}): Partial<Pick<ApiKeyEntity, 'budgetLimitUsd' | 'budgetPeriod' | 'rateLimits' | 'expiresAt'>> {
  return {
    ...(dto.budget_limit_usd !== undefined && { budgetLimitUsd: dto.budget_limit_usd }),
    ...(dto.budget_period !== undefined && { budgetPeriod: dto.budget_period }),
    ...(dto.rate_limits !== undefined && { rateLimits: dto.rate_limits.map(({ type, unit, value }) => ({ type, unit, value })) }),
    ...(dto.expires_at !== undefined && { expiresAt: dto.expires_at === null ? null : new Date(dto.expires_at) }),
  };
}
