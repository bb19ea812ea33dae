import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, FindOptionsWhere, In, IsNull, LessThan, Repository } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { listPage, ListPage } from '../../common/http/list.dto';
import { TtlCache } from '../../common/ttl-cache';
import type { Environment } from '../../config/environment';
import { ProviderRegistry } from '../../providers/registry';
import { pageNewestFirst, parseVersionCursor, rethrowSlugConflict } from '../keys/admin-list';
import { KeyChangeNotifier } from '../keys/key-change-notifier';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import type { WorkspaceScope } from '../../context/caller';
import { PromptCreateDto, PromptUpdateDto } from './dto/prompt.dto';
import { PromptEntity } from './entities/prompt.entity';
import { PromptVersionEntity } from './entities/prompt-version.entity';
import { PromptTemplate, validateTemplate } from './prompt-template';

/** One version of a prompt, as the completions call runs it. */
export interface PromptVersion {
  id: string;
  slug: string;
  version: number;
  template: PromptTemplate;
}

const TEMPLATE_FIELDS = ['model', 'virtual_key', 'provider', 'messages', 'variables', 'hyperparameters'] as const;

/**
 * Where a prompt is looked up (CONTRACT section 13): an id among the rows of `workspaces`
 * (null: every workspace), a slug inside `slugWorkspace` only.
 */
interface PromptLookup {
  workspaces: readonly string[] | null;
  slugWorkspace: string;
}

const lookupOf = (scope: WorkspaceScope): PromptLookup => ({ workspaces: scope.visible, slugWorkspace: scope.workspaceId });

/**
 * Admin CRUD of prompt templates, each in the workspace of the scope it was made in (slugs
 * are unique per workspace). Every template is kept as an immutable version in
 * `prompt_versions` (a PATCH adds one); `prompts` holds the latest. `version()` serves
 * the completions call, inside the calling key's workspace, from a cache keyed by
 * workspace that admin changes invalidate on every instance.
 */
@Injectable()
export class PromptsService {
  private readonly cache: TtlCache<PromptVersion>;

  constructor(
    @InjectRepository(PromptEntity) private readonly repo: Repository<PromptEntity>,
    private readonly registry: ProviderRegistry,
    private readonly changes: KeyChangeNotifier,
    private readonly workspaces: WorkspaceDirectory,
    config: ConfigService<Environment, true>,
  ) {
    this.cache = new TtlCache(config.get('KEY_CACHE_TTL_MS', { infer: true }));
    // Load again on any change, keeping what is known as the fallback during an outage (as KeyLookupService does).
    changes.onChange('prompts', () => this.cache.expireAll());
  }

  async create(scope: WorkspaceScope, dto: PromptCreateDto): Promise<Record<string, unknown>> {
    const template = this.checkedTemplate(dto);
    try {
      const saved = await this.repo.manager.transaction(async (tx) => {
        const row = tx.create(PromptEntity, { workspaceId: scope.workspaceId, name: dto.name, slug: dto.slug, template, version: 1 });
        await tx.save(row);
        await insertVersion(tx, row);
        return row;
      });
      return await this.toResponse(saved);
    } catch (error) {
      rethrowSlugConflict(error, 'prompt', dto.slug);
    } finally {
      await this.changes.changed('prompts');
    }
  }

  async list(scope: WorkspaceScope, limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const visible = scope.visible === null ? '' : ' and row.workspace_id in (:...visible)';
    const page = await pageNewestFirst(this.repo, `row.deleted_at is null${visible}`, limit, cursor, { visible: scope.visible });
    return { ...page, data: await Promise.all(page.data.map((row) => this.toResponse(row))) };
  }

  async get(scope: WorkspaceScope, slugOrId: string, version?: number): Promise<Record<string, unknown>> {
    const row = await this.find(lookupOf(scope), slugOrId);
    if (version === undefined) return this.toResponse(row);
    const old = await this.findVersion(row, version);
    return this.toResponse({ ...row, name: old.name, template: old.template, version: old.version, updatedAt: old.createdAt });
  }

  /** Newest first; the cursor is the last version number of the page. */
  async versions(scope: WorkspaceScope, slugOrId: string, limit: number, cursor?: string): Promise<ListPage<Record<string, unknown>>> {
    const row = await this.find(lookupOf(scope), slugOrId);
    const rows = await this.repo.manager.find(PromptVersionEntity, {
      where: { promptId: row.id, ...(cursor !== undefined && { version: LessThan(parseVersionCursor(cursor)) }) },
      order: { version: 'DESC' },
      take: limit + 1,
    });
    const page = listPage(rows, limit, (version) => String(version.version));
    return { ...page, data: page.data.map((v) => ({ version: v.version, name: v.name, created_at: v.createdAt.toISOString(), ...v.template })) };
  }

  /** Any template field given makes a new version (the others carried over); a rename alone does not. */
  async update(scope: WorkspaceScope, slugOrId: string, dto: PromptUpdateDto): Promise<Record<string, unknown>> {
    const saved = await this.repo.manager.transaction(async (tx) => {
      const row = await this.find(lookupOf(scope), slugOrId, tx);
      if (dto.name !== undefined) row.name = dto.name;
      if (TEMPLATE_FIELDS.some((field) => dto[field] !== undefined)) {
        const changed = Object.fromEntries(TEMPLATE_FIELDS.filter((field) => dto[field] !== undefined).map((field) => [field, dto[field]]));
        row.template = this.checkedTemplate({ ...row.template, ...changed });
        row.version += 1;
        await insertVersion(tx, row);
      }
      return tx.save(row);
    });
    await this.changes.changed('prompts');
    return this.toResponse(saved);
  }

  async remove(scope: WorkspaceScope, slugOrId: string): Promise<Record<string, unknown>> {
    const row = await this.find(lookupOf(scope), slugOrId);
    row.deletedAt = new Date();
    await this.repo.save(row);
    await this.changes.changed('prompts');
    return { id: row.id, object: 'prompt', deleted: true };
  }

  /**
   * The version a call of a key of `workspaceId` runs (the latest unless pinned), from the
   * cache: a prompt of another workspace is unknown to it, by id as by slug.
   */
  version(workspaceId: string, slugOrId: string, version?: number): PromptVersion | Promise<PromptVersion> {
    return this.cache.get(`${workspaceId}\u0000${slugOrId}\u0000${version ?? ''}`, () =>
      this.loadVersion({ workspaces: [workspaceId], slugWorkspace: workspaceId }, slugOrId, version),
    );
  }

  /** The version an admin call (render) reads, inside its scope. */
  versionIn(scope: WorkspaceScope, slugOrId: string, version?: number): Promise<PromptVersion> {
    return this.loadVersion(lookupOf(scope), slugOrId, version);
  }

  private async loadVersion(lookup: PromptLookup, slugOrId: string, version?: number): Promise<PromptVersion> {
    const row = await this.find(lookup, slugOrId);
    if (version === undefined || version === row.version) return { id: row.id, slug: row.slug, version: row.version, template: row.template };
    const old = await this.findVersion(row, version);
    return { id: row.id, slug: row.slug, version: old.version, template: old.template };
  }

  /** The template fields of a body, checked: a 400 names the field. */
  private checkedTemplate(fields: Partial<PromptTemplate>): PromptTemplate {
    const template: PromptTemplate = { model: fields.model!, messages: fields.messages! };
    for (const field of TEMPLATE_FIELDS) if (fields[field] !== undefined && fields[field] !== null) (template as any)[field] = fields[field];
    if (template.provider) this.registry.get(template.provider); // 400 naming the provider when unknown
    validateTemplate(template);
    return template;
  }

  /**
   * A live prompt by id (in the lookup's workspaces) or slug (in its slug workspace); in a
   * transaction, locked so concurrent PATCHes number their versions in turn.
   */
  private async find(lookup: PromptLookup, slugOrId: string, tx?: EntityManager): Promise<PromptEntity> {
    const where: FindOptionsWhere<PromptEntity> = {
      ...(isUuid(slugOrId)
        ? { id: slugOrId, ...(lookup.workspaces !== null && { workspaceId: In([...lookup.workspaces]) }) }
        : { slug: slugOrId, workspaceId: lookup.slugWorkspace }),
      deletedAt: IsNull(),
    };
    const row = tx ? await tx.findOne(PromptEntity, { where, lock: { mode: 'pessimistic_write' } }) : await this.repo.findOneBy(where);
    if (!row) throw GatewayError.notFound(`Unknown prompt '${slugOrId}'`, 'prompt_not_found');
    return row;
  }

  private async findVersion(row: PromptEntity, version: number): Promise<PromptVersionEntity> {
    const old = await this.repo.manager.findOneBy(PromptVersionEntity, { promptId: row.id, version });
    if (!old) throw GatewayError.notFound(`Prompt '${row.slug}' has no version ${version}`, 'prompt_version_not_found');
    return old;
  }

  private async toResponse(row: PromptEntity): Promise<Record<string, unknown>> {
    return response(row, (await this.workspaces.byId(row.workspaceId))?.slug ?? null);
  }
}

function response(row: PromptEntity, workspace: string | null): Record<string, unknown> {
  return {
    id: row.id,
    object: 'prompt',
    name: row.name,
    slug: row.slug,
    workspace,
    workspace_id: row.workspaceId,
    version: row.version,
    ...row.template,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A plain insert, never an upsert: a version once written does not change. */
async function insertVersion(tx: EntityManager, row: PromptEntity): Promise<void> {
  await tx.query('insert into prompt_versions (prompt_id, version, name, template) values ($1, $2, $3, $4)', [row.id, row.version, row.name, row.template]);
}
