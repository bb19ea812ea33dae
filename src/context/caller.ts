import type { Role } from '../common/role-names';
import type { BudgetPeriod, RateLimit } from './key-limits';
import type { McpAccessFields } from './mcp-access-fields';

/** A key's spending limit: USD per period (null period: for the key's lifetime). */
export interface KeyBudget {
  limitUsd: number;
  period: BudgetPeriod | null;
}

/** The caller, as the request path sees it; `allowedMcpServers`/`allowedMcpTools`: which MCP servers and tools it may use. */
export interface ApiKeyPrincipal extends McpAccessFields {
  /** An API key, or a person signed in to the dashboard (the auth module's session). */
  kind: 'api_key' | 'person';
  id: string;
  name: string;
  role: Role;
  /** The workspace the key belongs to: it acts there only (an owner anywhere). */
  workspaceId: string;
  /** A person's roles in each workspace they belong to (`x-gateway-workspace` picks one); absent for API keys. */
  memberships?: { workspaceId: string; role: Role }[];
  expiresAt: Date | null;
  metadata: Record<string, string>;
  budget: KeyBudget | null;
  rateLimits: RateLimit[];
  /** The route of requests that name none (CONTRACT section 12): a stored config, else a virtual key. */
  defaultConfig: string | null;
  defaultVirtualKey: string | null;
}

/**
 * Where an admin-API call acts (CONTRACT section 13), worked out once by the key guard and
 * handed to the services, which put it in every query: a row of a workspace outside
 * `visible` is never read, so another workspace's id or slug is a 404 and lists leave it out.
 */
export interface WorkspaceScope {
  /** Who acts: an API key or a signed-in person, with the role it has here. */
  caller: { kind: ApiKeyPrincipal['kind']; id: string; name: string; role: Role };
  /** The workspace it acts in: what it creates goes here, and slugs are looked up here. */
  workspaceId: string;
  /** The workspaces whose rows it may read and change; null: every one (an owner not narrowed by `x-gateway-workspace`). */
  visible: readonly string[] | null;
}
