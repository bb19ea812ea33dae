import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { ListPage } from '../../common/http/list.dto';
import { ProviderRegistry } from '../../providers/registry';
import { validateGatewayConfig } from '../routing/gateway-config.schema';
import { pageNewestFirst, rethrowSlugConflict } from './admin-list';
import { encryptConfigSecrets, maskConfigSecrets } from './config-secrets';
import { ConfigCreateDto, ConfigUpdateDto } from './dto/config.dto';
import { StoredConfigEntity } from './entities/stored-config.entity';
import { KeyChangeNotifier } from './key-change-notifier.service';

/** Admin CRUD of stored gateway configs; credentials inside are encrypted, masked on read. */
@Injectable()
export class ConfigsService {
  constructor(
    @InjectRepository(StoredConfigEntity) private readonly repo: Repository<StoredConfigEntity>,
    private readonly registry: ProviderRegistry,
    private readonly secretBox: SecretBox,
    private readonly keyChanges: KeyChangeNotifier,
  ) {}

  async create(dto: ConfigCreateDto): Promise<Record<string, unknown>> {
    this.validate(dto.config);
    const row = this.repo.create({ name: dto.name, slug: dto.slug, config: encryptConfigSecrets(dto.config, this.secretBox) });
    try {
      return this.toResponse(await this.repo.save(row));
    } catch (error) {
      rethrowSlugConflict(error, 'config', dto.slug);
    } finally {
      await this.keyChanges.changed('configs');
    }
  }

  async list(limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const page = await pageNewestFirst(this.repo, 'row.deleted_at is null', limit, cursor);
    return { ...page, data: page.data.map((row) => this.toResponse(row)) };
  }

  async get(slugOrId: string): Promise<Record<string, unknown>> {
    return this.toResponse(await this.find(slugOrId));
  }

  async update(slugOrId: string, dto: ConfigUpdateDto): Promise<Record<string, unknown>> {
    const row = await this.find(slugOrId);
    if (dto.name !== undefined) row.name = dto.name;
    if (dto.config !== undefined) {
      this.validate(dto.config);
      row.config = encryptConfigSecrets(dto.config, this.secretBox);
      row.version += 1;
    }
    const saved = await this.repo.save(row);
    await this.keyChanges.changed('configs');
    return this.toResponse(saved);
  }

  async remove(slugOrId: string): Promise<Record<string, unknown>> {
    const row = await this.find(slugOrId);
    row.deletedAt = new Date();
    await this.repo.save(row);
    await this.keyChanges.changed('configs');
    return { id: row.id, object: 'config', deleted: true };
  }

  private validate(config: Record<string, unknown>): void {
    const problems = validateGatewayConfig(config, this.registry.ids());
    if (problems.length) throw GatewayError.invalidRequest(`Invalid config: ${problems.join('; ')}`, 'config', 'invalid_config');
  }

  private async find(slugOrId: string): Promise<StoredConfigEntity> {
    const where = isUuid(slugOrId) ? { id: slugOrId } : { slug: slugOrId };
    const row = await this.repo.findOneBy({ ...where, deletedAt: IsNull() });
    if (!row) throw GatewayError.notFound(`Unknown config '${slugOrId}'`, 'config_not_found');
    return row;
  }

  private toResponse(row: StoredConfigEntity): Record<string, unknown> {
    return {
      id: row.id,
      object: 'config',
      name: row.name,
      slug: row.slug,
      version: row.version,
      config: maskConfigSecrets(row.config, this.secretBox),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}
