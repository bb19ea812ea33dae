import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { ListPage } from '../../common/http/list.dto';
import { pageNewestFirst, visibleLive, workspaceFields } from './admin-list';
import { EndUserCreateDto, EndUserUpdateDto } from './dto/end-user.dto';
import { EndUserEntity } from './entities/end-user.entity';
import { KeyChangeNotifier } from './key-change-notifier';
import { SpendService } from './spend.service';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { scopeWhere } from '../workspaces/workspace-scope';
import { WorkspaceScope } from '../../context/caller';

/**
 * Admin CRUD of end users: the `user` of requests, with a budget like a key's. An end user
 * belongs to a workspace: the same `user` in two workspaces is two end users, two budgets.
 */
@Injectable()
export class EndUsersService {
  constructor(
    @InjectRepository(EndUserEntity) private readonly repo: Repository<EndUserEntity>,
    private readonly keyChanges: KeyChangeNotifier,
    private readonly spend: SpendService,
    private readonly workspaces: WorkspaceDirectory,
  ) {}

  async create(scope: WorkspaceScope, dto: EndUserCreateDto): Promise<Record<string, unknown>> {
    const row = this.repo.create({
      workspaceId: scope.workspaceId,
      user: dto.user,
      budgetLimitUsd: dto.budget_limit_usd ?? null,
      budgetPeriod: dto.budget_period ?? null,
      metadata: dto.metadata ?? {},
    });
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

  async list(scope: WorkspaceScope, limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const [condition, parameters] = visibleLive(scope);
    const page = await pageNewestFirst(this.repo, condition, limit, cursor, parameters);
    return { ...page, data: await Promise.all(page.data.map((row) => this.toResponse(row))) };
  }

  async get(scope: WorkspaceScope, idOrUser: string): Promise<Record<string, unknown>> {
    return this.toResponse(await this.find(scope, idOrUser));
  }

  async update(scope: WorkspaceScope, idOrUser: string, dto: EndUserUpdateDto): Promise<Record<string, unknown>> {
    const row = await this.find(scope, idOrUser);
    if (dto.budget_limit_usd !== undefined) row.budgetLimitUsd = dto.budget_limit_usd;
    if (dto.budget_period !== undefined) row.budgetPeriod = dto.budget_period;
    if (dto.metadata !== undefined) row.metadata = dto.metadata;
    const saved = await this.repo.save(row);
    await this.keyChanges.changed('end_users');
    return this.toResponse(saved);
  }

  async remove(scope: WorkspaceScope, idOrUser: string): Promise<Record<string, unknown>> {
    const row = await this.find(scope, idOrUser);
    row.deletedAt = new Date();
    await this.repo.save(row);
    await this.keyChanges.changed('end_users');
    return { id: row.id, object: 'end_user', deleted: true };
  }

  /** By id in any workspace the scope sees, or by the `user` value itself in the workspace it acts in. */
  private async find(scope: WorkspaceScope, idOrUser: string): Promise<EndUserEntity> {
    const row =
      (isUuid(idOrUser) ? await this.repo.findOneBy({ id: idOrUser, deletedAt: IsNull(), ...scopeWhere(scope) }) : null) ??
      (await this.repo.findOneBy({ user: idOrUser, workspaceId: scope.workspaceId, deletedAt: IsNull() }));
    if (!row) throw GatewayError.notFound(`Unknown end user '${idOrUser}'`, 'end_user_not_found');
    return row;
  }

  private async toResponse(row: EndUserEntity): Promise<Record<string, unknown>> {
    return {
      id: row.id,
      object: 'end_user',
      user: row.user,
      ...(await workspaceFields(this.workspaces, row.workspaceId)),
      budget_limit_usd: row.budgetLimitUsd,
      budget_period: row.budgetPeriod,
      metadata: row.metadata,
      ...(await this.spend.budgetStatus('end_user', row)),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}
