import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { isDeepStrictEqual } from 'node:util';
import { IsNull, Repository } from 'typeorm';
import { SecretBox, UndecryptableSecretError } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import { TtlCache } from '../../common/ttl-cache';
import type { Environment } from '../../config/environment';
import { KeyChangeNotifier } from '../keys/key-change-notifier';
import type { ResolvedVirtualKey } from '../keys/key-lookup.service';
import type { ApiKeyPrincipal } from '../../context/caller';
import { UpstreamHostPolicy } from '../upstream/upstream-host-policy';
import { McpServerEntity } from './entities/mcp-server.entity';
import { openHeaders } from './mcp-server-headers';
import type { McpAccess, McpServerTarget } from './mcp-types';
import { mcpHostPolicy } from './mcp-host-policy';

/** The live servers of one workspace, by id and by slug. */
interface WorkspaceServers {
  all: McpServerTarget[];
  byIdOrSlug: Map<string, McpServerTarget>;
}

/** Every live server, per workspace (CONTRACT section 13: a caller reaches its own workspace's only). */
interface LiveServers {
  byWorkspace: Map<string, WorkspaceServers>;
}

const NONE: WorkspaceServers = { all: [], byIdOrSlug: new Map() };

/**
 * The tools allowed by every level that restricts them (null: no level does). The first
 * list's order is kept.
 */
function intersectTools(...levels: (readonly string[] | null | undefined)[]): string[] | null {
  const lists = levels.filter((level): level is readonly string[] => Array.isArray(level));
  if (lists.length === 0) return null;
  const [first, ...others] = lists;
  return [...new Set(first)].filter((tool) => others.every((list) => list.includes(tool)));
}

/**
 * The registered MCP servers as the request path sees them: loaded whole (there are few,
 * an admin registers each) into memory, headers decrypted, so that no request waits on the
 * database. A change (here or, through KeyChangeNotifier, on another instance) reloads them;
 * what was known stays the fallback should that load fail.
 */
@Injectable()
export class McpRegistry {
  private readonly logger = new Logger(McpRegistry.name);
  /**
   * Where MCP servers may be: public addresses, and private ones inside MCP_ALLOWED_NETWORKS;
   * link-local and metadata addresses never. For the registration check and for connections
   * (its `lookup` checks again at connection time, against DNS rebinding).
   */
  readonly hostPolicy: UpstreamHostPolicy;
  private readonly servers: TtlCache<LiveServers>;
  private readonly listeners = new Set<(serverId: string) => void>();
  /** The servers as last loaded, to tell listeners which of them changed. */
  private lastLoaded = new Map<string, McpServerTarget>();

  constructor(
    @InjectRepository(McpServerEntity) private readonly repo: Repository<McpServerEntity>,
    private readonly secretBox: SecretBox,
    keyChanges: KeyChangeNotifier,
    config: ConfigService<Environment, true>,
  ) {
    this.hostPolicy = mcpHostPolicy(config);
    this.servers = new TtlCache(config.get('KEY_CACHE_TTL_MS', { infer: true }));
    keyChanges.onChange('mcp_servers', () => this.reload());
  }

  /**
   * A live server of workspace `workspaceId` by slug or id, headers decrypted (never log
   * them); null when there is none there (another workspace's server is none).
   */
  async find(workspaceId: string, slugOrId: string): Promise<McpServerTarget | null> {
    return (await this.inWorkspace(workspaceId)).byIdOrSlug.get(slugOrId) ?? null;
  }

  /** Every live server of workspace `workspaceId`, by slug. */
  async list(workspaceId: string): Promise<McpServerTarget[]> {
    return (await this.inWorkspace(workspaceId)).all;
  }

  /**
   * What a caller may use (CONTRACT section 10): the API key's `allowed_mcp_servers` (unset:
   * every server for an admin key, none for a user key), narrowed by the virtual key's when it
   * sets one; per server, the tools every level allows (the API key's `allowed_tools`, the
   * virtual key's, the server's own). Only live servers of the key's own workspace appear.
   */
  async accessOf(principal: ApiKeyPrincipal, virtualKey?: ResolvedVirtualKey | null): Promise<McpAccess> {
    const access = new Map<string, readonly string[] | null>();
    const keyServers = principal.allowedMcpServers ?? (principal.role === 'admin' || principal.role === 'owner' ? null : []);
    for (const server of await this.list(principal.workspaceId)) {
      if (keyServers && !keyServers.includes(server.slug)) continue;
      if (virtualKey?.allowedMcpServers && !virtualKey.allowedMcpServers.includes(server.slug)) continue;
      access.set(server.slug, intersectTools(principal.allowedMcpTools?.[server.slug], virtualKey?.allowedMcpTools?.[server.slug], server.allowedTools));
    }
    return access;
  }

  /**
   * Calls `listener` with the id of every server that changed or went away (here or on
   * another instance), so that connections to it can be dropped. Returns the unsubscribe.
   */
  onChange(listener: (serverId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private live(): Promise<LiveServers> {
    return Promise.resolve(this.servers.get('all', () => this.load()));
  }

  private async inWorkspace(workspaceId: string): Promise<WorkspaceServers> {
    return (await this.live()).byWorkspace.get(workspaceId) ?? NONE;
  }

  /** Loads again at once (not at the next request), so listeners hear of the change promptly. */
  private reload(): void {
    this.servers.expireAll();
    this.live().catch((error: Error) => this.logger.warn(`MCP servers not reloaded after a change: ${error.message}`));
  }

  private async load(): Promise<LiveServers> {
    let rows: McpServerEntity[];
    try {
      rows = await this.repo.find({ where: { deletedAt: IsNull() }, order: { slug: 'ASC' } });
    } catch {
      throw GatewayError.unavailable('The gateway cannot read its MCP servers right now: its database is unreachable');
    }
    const byWorkspace = new Map<string, WorkspaceServers>();
    const all = new Map<string, McpServerTarget>();
    for (const row of rows) {
      const target = this.targetOf(row);
      if (!target) continue;
      all.set(target.id, target);
      let servers = byWorkspace.get(row.workspaceId);
      if (!servers) byWorkspace.set(row.workspaceId, (servers = { all: [], byIdOrSlug: new Map() }));
      servers.all.push(target);
      servers.byIdOrSlug.set(target.id, target).set(target.slug, target);
    }
    this.announceChanges(all);
    return { byWorkspace };
  }

  private targetOf(row: McpServerEntity): McpServerTarget | null {
    try {
      return {
        id: row.id,
        slug: row.slug,
        name: row.name,
        url: row.url,
        headers: openHeaders(row.headers, this.secretBox),
        allowedTools: row.allowedTools,
        description: row.description,
      };
    } catch (error) {
      if (!(error instanceof UndecryptableSecretError)) throw error;
      // One server stored under another key must not take the others down with it.
      this.logger.error(
        `MCP server '${row.slug}' has headers this instance cannot decrypt (is GATEWAY_ENCRYPTION_KEY the same on every instance?); it is left out`,
      );
      return null;
    }
  }

  private announceChanges(loaded: Map<string, McpServerTarget>): void {
    const previous = this.lastLoaded;
    this.lastLoaded = loaded;
    for (const [id, before] of previous) {
      if (isDeepStrictEqual(before, loaded.get(id))) continue;
      for (const listener of this.listeners) {
        try {
          listener(id);
        } catch (error) {
          this.logger.warn(`An MCP server change listener failed: ${(error as Error).message}`);
        }
      }
    }
  }
}
