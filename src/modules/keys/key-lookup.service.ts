import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Not, Repository } from 'typeorm';
import { SecretBox, sha256, UndecryptableSecretError } from '../../common/crypto/secret-box';
import { BatchLineToken, type BatchLineClaims } from '../../common/crypto/batch-line-token';
import { GatewayError } from '../../common/errors/gateway-error';
import { isUuid } from '../../common/ids';
import { LookupCache } from '../../common/lookup-cache';
import { TtlCache } from '../../common/ttl-cache';
import type { Environment } from '../../config/environment';
import { ApiKeyEntity } from './entities/api-key.entity';
import { EndUserEntity } from './entities/end-user.entity';
import { StoredConfigEntity } from './entities/stored-config.entity';
import { VirtualKeyEntity } from './entities/virtual-key.entity';
import { decryptConfigSecrets } from './config-secrets';
import { openProviderOptions } from './provider-option-secrets';
import type { BudgetPeriod, RateLimit } from '../../context/key-limits';
import type { McpAccessFields } from '../../context/mcp-access-fields';
import type { ApiKeyPrincipal, KeyBudget } from '../../context/caller';

const budgetOf = (row: { budgetLimitUsd: number | null; budgetPeriod: BudgetPeriod | null }): KeyBudget | null =>
  row.budgetLimitUsd === null ? null : { limitUsd: row.budgetLimitUsd, period: row.budgetPeriod };

/** A virtual key with its credential decrypted, ready to route with; its MCP fields narrow the API key's. */
export interface ResolvedVirtualKey extends McpAccessFields {
  id: string;
  slug: string;
  provider: string;
  apiKey: string | null;
  providerOrganization: string | null;
  providerProject: string | null;
  customHost: string | null;
  providerOptions: Record<string, string>;
  allowedModels: string[] | null;
  expiresAt: Date | null;
  disabled: boolean;
  budget: KeyBudget | null;
  rateLimits: RateLimit[];
}

/** An end user that has a budget. */
export interface EndUserBudget {
  id: string;
  workspaceId: string;
  budget: KeyBudget;
}

export interface ResolvedConfig {
  id: string;
  slug: string;
  version: number;
  config: Record<string, unknown>;
}

/** Cache key of a look-up inside one workspace (slugs and users are unique per workspace only). */
function cacheKey(workspaceId: string, name: string): string {
  return `${workspaceId}:${name}`;
}

/**
 * Keys, virtual keys and configs found missing are remembered briefly (apart from those
 * found), so that a flood of bad keys does not reach the database.
 */
const MISS_TTL_MS = 5_000;

/**
 * Keys, virtual keys and configs for the request path, from an in-process cache
 * (no database round trip per request). The admin services invalidate entries on
 * every change; other instances see changes within KEY_CACHE_TTL_MS.
 */
@Injectable()
export class KeyLookupService implements OnApplicationBootstrap {
  private readonly logger = new Logger(KeyLookupService.name);
  private readonly apiKeys: LookupCache<ApiKeyPrincipal>;
  private readonly virtualKeys: LookupCache<ResolvedVirtualKey>;
  private readonly configs: LookupCache<ResolvedConfig>;
  /**
   * Every end user with a budget, loaded whole: there are few (an admin creates each),
   * while requests carry any number of distinct users, most without one.
   */
  private readonly endUsers: TtlCache<Map<string, EndUserBudget>>;

  constructor(
    @InjectRepository(ApiKeyEntity) private readonly apiKeyRepo: Repository<ApiKeyEntity>,
    @InjectRepository(VirtualKeyEntity) private readonly virtualKeyRepo: Repository<VirtualKeyEntity>,
    @InjectRepository(StoredConfigEntity) private readonly configRepo: Repository<StoredConfigEntity>,
    @InjectRepository(EndUserEntity) private readonly endUserRepo: Repository<EndUserEntity>,
    private readonly secretBox: SecretBox,
    config: ConfigService<Environment, true>,
  ) {
    const ttlMs = config.get('KEY_CACHE_TTL_MS', { infer: true });
    this.apiKeys = new LookupCache(ttlMs, MISS_TTL_MS);
    this.virtualKeys = new LookupCache(ttlMs, MISS_TTL_MS);
    this.configs = new LookupCache(ttlMs, MISS_TTL_MS);
    this.endUsers = new TtlCache(ttlMs);
  }

  /**
   * End users' budgets are loaded at start-up rather than by the first request naming a
   * user: should the database be down by then, that request would have nothing to fall back on.
   */
  async onApplicationBootstrap(): Promise<void> {
    await Promise.resolve(this.endUserBudgets()).catch((error: Error) => this.logger.warn(`End users' budgets not loaded at start-up: ${error.message}`));
  }

  apiKeyBySecret(secret: string): Promise<ApiKeyPrincipal | null> | ApiKeyPrincipal | null {
    return this.apiKeyByHash(sha256(secret));
  }

  /** A key by the SHA-256 of its secret: a dashboard session made from a key keeps only that. */
  apiKeyByHash(hash: string): Promise<ApiKeyPrincipal | null> | ApiKeyPrincipal | null {
    return this.apiKeys.get(hash, () => this.guard(this.loadApiKey(hash)));
  }

  /** The claims of a batch line's token (BatchLineToken), or null when the gateway did not make it. */
  batchLine(token: string): BatchLineClaims | null {
    return BatchLineToken.verify(this.secretBox, token);
  }

  /**
   * A virtual key of the workspace `workspaceId`, by id or slug: another workspace's is not
   * found, exactly like an unknown one (CONTRACT section 13).
   */
  virtualKey(workspaceId: string, slugOrId: string): Promise<ResolvedVirtualKey | null> | ResolvedVirtualKey | null {
    return this.virtualKeys.get(cacheKey(workspaceId, slugOrId), () => this.guard(this.loadVirtualKey(workspaceId, slugOrId)));
  }

  /** The budget of `user` in the workspace: the same `user` in two workspaces is two end users. */
  endUserBudget(workspaceId: string, user: string): Promise<EndUserBudget | null> | EndUserBudget | null {
    const key = cacheKey(workspaceId, user);
    const budgets = this.endUserBudgets();
    return budgets instanceof Map ? (budgets.get(key) ?? null) : budgets.then((map) => map.get(key) ?? null);
  }

  private endUserBudgets(): Map<string, EndUserBudget> | Promise<Map<string, EndUserBudget>> {
    return this.endUsers.get('all', () =>
      this.guard(this.loadEndUserBudgets(), "The gateway cannot check end users' budgets right now: its database is unreachable"),
    );
  }

  /** A stored config of the workspace, by id or slug (another workspace's is not found). */
  storedConfig(workspaceId: string, slugOrId: string): Promise<ResolvedConfig | null> | ResolvedConfig | null {
    return this.configs.get(cacheKey(workspaceId, slugOrId), () => this.guard(this.loadConfig(workspaceId, slugOrId)));
  }

  /** After missed change notifications: reload everything, keeping what is known for an outage. */
  expireAll(): void {
    for (const cache of [this.apiKeys, this.virtualKeys, this.configs, this.endUsers]) cache.expireAll();
  }

  /*
   * A change (here or, through NOTIFY, on another instance) makes every entry of its kind
   * load again; what was known stays the fallback should that load fail. Clearing instead
   * would turn every key into a 503 during an outage that follows any key change.
   */
  invalidateApiKeys(): void {
    this.apiKeys.expireAll();
  }

  invalidateVirtualKeys(): void {
    this.virtualKeys.expireAll();
  }

  invalidateConfigs(): void {
    this.configs.expireAll();
  }

  invalidateEndUsers(): void {
    this.endUsers.expireAll();
  }

  private async loadEndUserBudgets(): Promise<Map<string, EndUserBudget>> {
    const rows = await this.endUserRepo.findBy({ deletedAt: IsNull(), budgetLimitUsd: Not(IsNull()) });
    return new Map(rows.map((row) => [cacheKey(row.workspaceId, row.user), { id: row.id, workspaceId: row.workspaceId, budget: budgetOf(row)! }]));
  }

  private async loadApiKey(hash: string): Promise<ApiKeyPrincipal | null> {
    const row = await this.apiKeyRepo.findOneBy({ keyHash: hash, revokedAt: IsNull() });
    if (!row) return null;
    return {
      kind: 'api_key',
      id: row.id,
      name: row.name,
      role: row.role,
      workspaceId: row.workspaceId,
      expiresAt: row.expiresAt,
      metadata: row.metadata,
      budget: budgetOf(row),
      rateLimits: row.rateLimits ?? [],
      defaultConfig: row.defaultConfig,
      defaultVirtualKey: row.defaultVirtualKey,
      allowedMcpServers: row.allowedMcpServers,
      allowedMcpTools: row.allowedMcpTools,
    };
  }

  private async loadVirtualKey(workspaceId: string, slugOrId: string): Promise<ResolvedVirtualKey | null> {
    const where = isUuid(slugOrId) ? { id: slugOrId } : { slug: slugOrId };
    const row = await this.virtualKeyRepo.findOneBy({ ...where, workspaceId, deletedAt: IsNull() });
    if (!row) return null;
    return {
      id: row.id,
      slug: row.slug,
      provider: row.provider,
      apiKey: row.encryptedKey ? this.secretBox.decrypt(row.encryptedKey) : null,
      providerOrganization: row.providerOrganization,
      providerProject: row.providerProject,
      customHost: row.customHost,
      providerOptions: openProviderOptions(row.providerOptions, this.secretBox),
      allowedModels: row.allowedModels,
      allowedMcpServers: row.allowedMcpServers,
      allowedMcpTools: row.allowedMcpTools,
      expiresAt: row.expiresAt,
      disabled: row.disabled,
      budget: budgetOf(row),
      rateLimits: row.rateLimits ?? [],
    };
  }

  private async loadConfig(workspaceId: string, slugOrId: string): Promise<ResolvedConfig | null> {
    const where = isUuid(slugOrId) ? { id: slugOrId } : { slug: slugOrId };
    const row = await this.configRepo.findOneBy({ ...where, workspaceId, deletedAt: IsNull() });
    if (!row) return null;
    return { id: row.id, slug: row.slug, version: row.version, config: decryptConfigSecrets(row.config, this.secretBox) };
  }

  /**
   * A database failure on a key never seen before is a 503, not a 401. So is a stored
   * credential this instance cannot decrypt, which says so: the operator has to fix it.
   */
  private async guard<T>(load: Promise<T>, unreachable = 'The gateway cannot verify this key right now: its database is unreachable'): Promise<T> {
    try {
      return await load;
    } catch (error) {
      if (error instanceof UndecryptableSecretError) {
        this.logger.error('A stored provider credential cannot be decrypted: is GATEWAY_ENCRYPTION_KEY the same on every instance?');
        throw GatewayError.unavailable(
          'This virtual key or config holds a credential the gateway cannot decrypt (its GATEWAY_ENCRYPTION_KEY differs from the one that stored it)',
        );
      }
      throw GatewayError.unavailable(unreachable);
    }
  }
}
