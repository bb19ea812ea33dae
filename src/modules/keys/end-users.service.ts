import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { ListPage } from '../../common/http/list.dto';
import { pageNewestFirst } from './admin-list';
import { EndUserCreateDto, EndUserUpdateDto } from './dto/end-user.dto';
import { EndUserEntity } from './entities/end-user.entity';
import { KeyChangeNotifier } from './key-change-notifier.service';
import { SpendService } from './spend.service';

/** Admin CRUD of end users: the `user` of requests, with a budget like a key's. */
@Injectable()
export class EndUsersService {
  constructor(
    @InjectRepository(EndUserEntity) private readonly repo: Repository<EndUserEntity>,
    private readonly keyChanges: KeyChangeNotifier,
    private readonly spend: SpendService,
  ) {}

  async create(dto: EndUserCreateDto): Promise<Record<string, unknown>> {
    const row = this.repo.create({ user: dto.user, budgetLimitUsd: dto.budget_limit_usd ?? null, budgetPeriod: dto.budget_period ?? null, metadata: dto.metadata ?? {} });
    try {
      return await this.toResponse(await this.repo.save(row));
    } catch (error) {
      if ((error as { driverError?: { code?: string } }).driverError?.code === '23505') {
        throw new GatewayError(409, 'invalid_request_error', `End user '${dto.user}' already exists`, 'end_user_exists', 'user');
      }
      throw error;
    } finally {
      await this.keyChanges.changed('end_users');
    }
  }

  async list(limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const page = await pageNewestFirst(this.repo, 'row.deleted_at is null', limit, cursor);
    return { ...page, data: await Promise.all(page.data.map((row) => this.toResponse(row))) };
  }

  async get(idOrUser: string): Promise<Record<string, unknown>> {
    return this.toResponse(await this.find(idOrUser));
  }

  async update(idOrUser: string, dto: EndUserUpdateDto): Promise<Record<string, unknown>> {
    const row = await this.find(idOrUser);
    if (dto.budget_limit_usd !== undefined) row.budgetLimitUsd = dto.budget_limit_usd;
    if (dto.budget_period !== undefined) row.budgetPeriod = dto.budget_period;
    if (dto.metadata !== undefined) row.metadata = dto.metadata;
    const saved = await this.repo.save(row);
    await this.keyChanges.changed('end_users');
    return this.toResponse(saved);
  }

  async remove(idOrUser: string): Promise<Record<string, unknown>> {
    const row = await this.find(idOrUser);
    row.deletedAt = new Date();
    await this.repo.save(row);
    await this.keyChanges.changed('end_users');
    return { id: row.id, object: 'end_user', deleted: true };
  }

  /** By id, or by the `user` value itself. */
  private async find(idOrUser: string): Promise<EndUserEntity> {
    const row =
      (isUuid(idOrUser) ? await this.repo.findOneBy({ id: idOrUser, deletedAt: IsNull() }) : null) ??
      (await this.repo.findOneBy({ user: idOrUser, deletedAt: IsNull() }));
    if (!row) throw GatewayError.notFound(`Unknown end user '${idOrUser}'`, 'end_user_not_found');
    return row;
  }

  private async toResponse(row: EndUserEntity): Promise<Record<string, unknown>> {
    return {
      id: row.id,
      object: 'end_user',
      user: row.user,
      budget_limit_usd: row.budgetLimitUsd,
      budget_period: row.budgetPeriod,
      metadata: row.metadata,
      ...(await this.spend.budgetStatus('end_user', row)),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}
