import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, IsNull, LessThan, Repository } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { listPage, ListPage } from '../../common/http/list.dto';
import { ProviderRegistry } from '../../providers/registry';
import { validateGatewayConfig } from '../routing/gateway-config.schema';
import { pageNewestFirst, parseVersionCursor, rethrowSlugConflict, visibleLive, workspaceFields } from './admin-list';
import { encryptConfigSecrets, maskConfigSecrets } from './config-secrets';
import { ConfigCreateDto, ConfigUpdateDto } from './dto/config.dto';
import { ConfigVersionEntity } from './entities/config-version.entity';
import { StoredConfigEntity } from './entities/stored-config.entity';
import { KeyChangeNotifier } from './key-change-notifier';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { scopeWhere } from '../workspaces/workspace-scope';
import { WorkspaceScope } from '../../context/caller';

/**
 * Admin CRUD of stored gateway configs; credentials inside are encrypted, masked on read.
 * Every config body is kept as an immutable version in `config_versions`; `configs` holds the latest.
 * Every verb acts inside the caller's `WorkspaceScope`: slugs are unique per workspace, another workspace's config is a 404.
 */
@Injectable()
export class ConfigsService {
  constructor(
    @InjectRepository(StoredConfigEntity) private readonly repo: Repository<StoredConfigEntity>,
    private readonly registry: ProviderRegistry,
    private readonly secretBox: SecretBox,
    private readonly keyChanges: KeyChangeNotifier,
    private readonly workspaces: WorkspaceDirectory,
  ) {}

  async create(scope: WorkspaceScope, dto: ConfigCreateDto): Promise<Record<string, unknown>> {
    this.validate(dto.config);
    try {
      const saved = await this.repo.manager.transaction(async (tx) => {
        const row = tx.create(StoredConfigEntity, {
          workspaceId: scope.workspaceId,
          name: dto.name,
          slug: dto.slug,
          config: encryptConfigSecrets(dto.config, this.secretBox),
          version: 1,
        });
        await tx.save(row);
        await insertVersion(tx, row);
        return row;
      });
      return await this.toResponse(saved);
    } catch (error) {
      rethrowSlugConflict(error, 'config', dto.slug);
    } finally {
      await this.keyChanges.changed('configs');
    }
  }

  async list(scope: WorkspaceScope, limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const [condition, parameters] = visibleLive(scope);
    const page = await pageNewestFirst(this.repo, condition, limit, cursor, parameters);
    return { ...page, data: await Promise.all(page.data.map((row) => this.toResponse(row))) };
  }

  /** The latest version, or the given one in the same shape. */
  async get(scope: WorkspaceScope, slugOrId: string, version?: number): Promise<Record<string, unknown>> {
    const row = await this.find(scope, slugOrId);
    if (version === undefined) return this.toResponse(row);
    const old = await this.repo.manager.findOneBy(ConfigVersionEntity, { configId: row.id, version });
    if (!old) throw GatewayError.notFound(`Config '${slugOrId}' has no version ${version}`, 'config_version_not_found');
    // updated_at is when this version was written.
    return this.toResponse({ ...row, name: old.name, config: old.config, version: old.version, updatedAt: old.createdAt });
  }

  /** Newest first; the cursor is the last version number of the page. */
  async versions(scope: WorkspaceScope, slugOrId: string, limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const row = await this.find(scope, slugOrId);
    const rows = await this.repo.manager.find(ConfigVersionEntity, {
      where: { configId: row.id, ...(cursor !== undefined && { version: LessThan(parseVersionCursor(cursor)) }) },
      order: { version: 'DESC' },
      take: limit + 1,
    });
    const page = listPage(rows, limit, (version) => String(version.version));
    return {
      ...page,
      data: page.data.map((version) => ({
        version: version.version,
        name: version.name,
        created_at: version.createdAt.toISOString(),
        config: maskConfigSecrets(version.config, this.secretBox),
      })),
    };
  }

  /** A new config body is a new version; a rename alone is not. */
  async update(scope: WorkspaceScope, slugOrId: string, dto: ConfigUpdateDto): Promise<Record<string, unknown>> {
    if (dto.config !== undefined) this.validate(dto.config);
    const saved = await this.repo.manager.transaction(async (tx) => {
      const row = await this.find(scope, slugOrId, tx);
      if (dto.name !== undefined) row.name = dto.name;
      if (dto.config !== undefined) {
        row.config = encryptConfigSecrets(dto.config, this.secretBox, row.config);
        row.version += 1;
        await insertVersion(tx, row);
      }
      return tx.save(row);
    });
    await this.keyChanges.changed('configs');
    return this.toResponse(saved);
  }

  async remove(scope: WorkspaceScope, slugOrId: string): Promise<Record<string, unknown>> {
    const row = await this.find(scope, slugOrId);
    row.deletedAt = new Date();
    await this.repo.save(row);
    await this.keyChanges.changed('configs');
    return { id: row.id, object: 'config', deleted: true };
  }

  private validate(config: Record<string, unknown>): void {
    const problems = validateGatewayConfig(config, this.registry.ids());
    if (problems.length) throw GatewayError.invalidRequest(`Invalid config: ${problems.join('; ')}`, 'config', 'invalid_config');
  }

  /**
   * A live config by id or slug. Given a transaction, the row stays locked until it ends, so
   * concurrent PATCHes take turns and each one numbers its version after the previous one.
   * By id in any workspace the scope sees, by slug in the workspace it acts in.
   */
  private async find(scope: WorkspaceScope, slugOrId: string, tx?: EntityManager): Promise<StoredConfigEntity> {
    const where = { ...(isUuid(slugOrId) ? { id: slugOrId, ...scopeWhere(scope) } : { slug: slugOrId, workspaceId: scope.workspaceId }), deletedAt: IsNull() };
    const row = tx ? await tx.findOne(StoredConfigEntity, { where, lock: { mode: 'pessimistic_write' } }) : await this.repo.findOneBy(where);
    if (!row) throw GatewayError.notFound(`Unknown config '${slugOrId}'`, 'config_not_found');
    return row;
  }

  private async toResponse(row: StoredConfigEntity): Promise<Record<string, unknown>> {
    return {
      id: row.id,
      object: 'config',
      name: row.name,
      slug: row.slug,
      ...(await workspaceFields(this.workspaces, row.workspaceId)),
      version: row.version,
      config: maskConfigSecrets(row.config, this.secretBox),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}

/** A plain insert, never an upsert: a version once written does not change. */
async function insertVersion(tx: EntityManager, row: StoredConfigEntity): Promise<void> {
  await tx.query('insert into config_versions (config_id, version, name, config) values ($1, $2, $3, $4)', [row.id, row.version, row.name, row.config]);
}
