import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { TtlCache } from '../../common/ttl-cache';
import type { Environment } from '../../config/environment';
import { KeyChangeNotifier } from '../keys/key-change-notifier';
import type { KeyBudget } from '../../context/caller';
import type { RateLimit } from '../../context/key-limits';
import { WorkspaceEntity } from './workspace.entity';

/** What the request path needs of a workspace. */
export interface WorkspaceFacts {
  id: string;
  slug: string;
  name: string;
  budget: KeyBudget | null;
  rateLimits: RateLimit[];
}

interface Directory {
  byId: Map<string, WorkspaceFacts>;
  bySlug: Map<string, WorkspaceFacts>;
}

/**
 * Every live workspace, loaded whole into memory (there are few): the request path reads a
 * key's workspace budget and rate limits from here, and `x-gateway-workspace` is resolved
 * here, with no database round trip. Reloaded on every instance when a workspace changes.
 */
@Injectable()
export class WorkspaceDirectory implements OnApplicationBootstrap {
  private readonly logger = new Logger(WorkspaceDirectory.name);
  private readonly cache: TtlCache<Directory>;

  constructor(
    @InjectRepository(WorkspaceEntity) private readonly repo: Repository<WorkspaceEntity>,
    keyChanges: KeyChangeNotifier,
    config: ConfigService<Environment, true>,
  ) {
    this.cache = new TtlCache(config.get('KEY_CACHE_TTL_MS', { infer: true }));
    keyChanges.onChange('workspaces', () => this.cache.expireAll());
  }

  async onApplicationBootstrap(): Promise<void> {
    await Promise.resolve(this.directory()).catch((error: Error) => this.logger.warn(`Workspaces not loaded at start-up: ${error.message}`));
  }

  byId(id: string): WorkspaceFacts | null | Promise<WorkspaceFacts | null> {
    const directory = this.directory();
    return directory instanceof Promise ? directory.then((d) => d.byId.get(id) ?? null) : (directory.byId.get(id) ?? null);
  }

  bySlug(slug: string): WorkspaceFacts | null | Promise<WorkspaceFacts | null> {
    const directory = this.directory();
    return directory instanceof Promise ? directory.then((d) => d.bySlug.get(slug) ?? null) : (directory.bySlug.get(slug) ?? null);
  }

  private directory(): Directory | Promise<Directory> {
    return this.cache.get('all', () =>
      this.load().catch(() => {
        throw GatewayError.unavailable('The gateway cannot read its workspaces right now: its database is unreachable');
      }),
    );
  }

  private async load(): Promise<Directory> {
    const rows = await this.repo.findBy({ deletedAt: IsNull() });
    const facts = rows.map((row): WorkspaceFacts => ({
      id: row.id,
      slug: row.slug,
      name: row.name,
      budget: row.budgetLimitUsd === null ? null : { limitUsd: row.budgetLimitUsd, period: row.budgetPeriod },
      rateLimits: row.rateLimits ?? [],
    }));
    return { byId: new Map(facts.map((w) => [w.id, w])), bySlug: new Map(facts.map((w) => [w.slug, w])) };
  }
}
