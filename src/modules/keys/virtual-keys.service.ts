import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { maskSecret, SecretBox } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import { redactUserinfo } from '../../common/http/http-url';
import { isUuid } from '../../common/ids';
import { ListPage } from '../../common/http/list.dto';
import { ProviderRegistry } from '../../providers/registry';
import { pageNewestFirst, rethrowSlugConflict, visibleLive, workspaceFields } from './admin-list';
import { limitsOf } from './api-keys.service';
import { VirtualKeyCreateDto, VirtualKeyUpdateDto } from './dto/virtual-key.dto';
import { VirtualKeyEntity } from './entities/virtual-key.entity';
import { KeyChangeNotifier } from './key-change-notifier';
import { mcpAccessOf } from '../../context/mcp-access-fields';
import { maskProviderOptions, sealProviderOptions } from './provider-option-secrets';
import { SpendService } from './spend.service';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { scopeWhere } from '../workspaces/workspace-scope';
import { WorkspaceScope } from '../../context/caller';

/**
 * Admin CRUD of virtual keys: provider credentials (`key`, secret `provider_options`) encrypted at rest, shown as a hint only.
 * Every verb acts inside the caller's `WorkspaceScope`: slugs are unique per workspace, another workspace's key is a 404.
 */
@Injectable()
export class VirtualKeysService {
  constructor(
    @InjectRepository(VirtualKeyEntity) private readonly repo: Repository<VirtualKeyEntity>,
    private readonly registry: ProviderRegistry,
    private readonly secretBox: SecretBox,
    private readonly keyChanges: KeyChangeNotifier,
    private readonly spend: SpendService,
    private readonly workspaces: WorkspaceDirectory,
  ) {}

  async create(scope: WorkspaceScope, dto: VirtualKeyCreateDto): Promise<Record<string, unknown>> {
    const adapter = this.registry.get(dto.provider);
    if (!dto.key && !adapter.credentialOptional) throw GatewayError.invalidRequest(`key is required for provider ${dto.provider}`, 'key');
    if (!dto.custom_host && adapter.requiresCustomHost)
      throw GatewayError.invalidRequest(`custom_host is required for provider ${dto.provider}`, 'custom_host');
    const row = this.repo.create({
      workspaceId: scope.workspaceId,
      name: dto.name,
      slug: dto.slug,
      provider: dto.provider,
      providerOptions: sealProviderOptions(dto.provider_options ?? {}, this.secretBox),
      ...this.fieldsOf(dto),
    });
    try {
      return this.toResponse(await this.repo.save(row));
    } catch (error) {
      rethrowSlugConflict(error, 'virtual key', dto.slug);
    } finally {
      await this.keyChanges.changed('virtual_keys');
    }
  }

  async list(scope: WorkspaceScope, limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const [condition, parameters] = visibleLive(scope);
    const page = await pageNewestFirst(this.repo, condition, limit, cursor, parameters);
    return { ...page, data: await Promise.all(page.data.map((row) => this.toResponse(row))) };
  }

  async get(scope: WorkspaceScope, slugOrId: string): Promise<Record<string, unknown>> {
    return this.toResponse(await this.find(scope, slugOrId));
  }

  async update(scope: WorkspaceScope, slugOrId: string, dto: VirtualKeyUpdateDto): Promise<Record<string, unknown>> {
    const row = await this.find(scope, slugOrId);
    if (dto.provider !== undefined) row.provider = this.registry.get(dto.provider).id;
    if (dto.name !== undefined) row.name = dto.name;
    if (dto.disabled !== undefined) row.disabled = dto.disabled;
    if (dto.provider_options !== undefined) row.providerOptions = sealProviderOptions(dto.provider_options, this.secretBox, row.providerOptions);
    Object.assign(row, this.fieldsOf(dto));
    const saved = await this.repo.save(row);
    await this.keyChanges.changed('virtual_keys');
    return this.toResponse(saved);
  }

  async remove(scope: WorkspaceScope, slugOrId: string): Promise<Record<string, unknown>> {
    const row = await this.find(scope, slugOrId);
    row.deletedAt = new Date();
    await this.repo.save(row);
    await this.keyChanges.changed('virtual_keys');
    return { id: row.id, object: 'virtual_key', deleted: true };
  }

  private fieldsOf(dto: VirtualKeyUpdateDto): Partial<VirtualKeyEntity> {
    return {
      ...(dto.key !== undefined && { encryptedKey: this.secretBox.encrypt(dto.key), keyHint: maskSecret(dto.key) }),
      ...(dto.provider_organization !== undefined && { providerOrganization: dto.provider_organization }),
      ...(dto.provider_project !== undefined && { providerProject: dto.provider_project }),
      ...(dto.custom_host !== undefined && { customHost: dto.custom_host }),
      ...(dto.allowed_models !== undefined && { allowedModels: dto.allowed_models }),
      ...limitsOf(dto),
      ...mcpAccessOf(dto),
    };
  }

  /** By id in any workspace the scope sees, by slug in the workspace it acts in. */
  private async find(scope: WorkspaceScope, slugOrId: string): Promise<VirtualKeyEntity> {
    const where = isUuid(slugOrId) ? { id: slugOrId, ...scopeWhere(scope) } : { slug: slugOrId, workspaceId: scope.workspaceId };
    const row = await this.repo.findOneBy({ ...where, deletedAt: IsNull() });
    if (!row) throw GatewayError.notFound(`Unknown virtual key '${slugOrId}'`, 'virtual_key_not_found');
    return row;
  }

  private async toResponse(row: VirtualKeyEntity): Promise<Record<string, unknown>> {
    return {
      id: row.id,
      object: 'virtual_key',
      name: row.name,
      slug: row.slug,
      ...(await workspaceFields(this.workspaces, row.workspaceId)),
      provider: row.provider,
      key_hint: row.keyHint,
      provider_organization: row.providerOrganization,
      provider_project: row.providerProject,
      // A host stored with `user:password@` before such hosts were refused shows without it.
      custom_host: row.customHost && redactUserinfo(row.customHost),
      provider_options: maskProviderOptions(row.providerOptions, this.secretBox),
      budget_limit_usd: row.budgetLimitUsd,
      budget_period: row.budgetPeriod,
      rate_limits: row.rateLimits,
      allowed_models: row.allowedModels,
      allowed_mcp_servers: row.allowedMcpServers,
      allowed_tools: row.allowedMcpTools,
      expires_at: row.expiresAt?.toISOString() ?? null,
      disabled: row.disabled,
      ...(await this.spend.budgetStatus('virtual_key_id', row)),
      last_used_at: row.lastUsedAt?.toISOString() ?? null,
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}
