/**
 * The role and permission names (CONTRACT section 13), on the ground floor: the environment's
 * check of OIDC_ROLE_MAPPING (config/) reads the roles, the `@Permission()` decorator
 * (context/) the permissions; which role has which is GRANTS (modules/workspaces/roles.ts).
 */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** Accepted on input for today's `user` keys; always read back as `member`. */
export const LEGACY_ROLES: Record<string, Role> = { user: 'member' };

export const PERMISSIONS = [
  /** Model operations, the MCP proxy, the provider list. */
  'models.call',
  /** The log and analytics: a `member` sees its own requests, the others their workspace's. */
  'logs.read',
  /** API keys, virtual keys, configs, prompts, MCP servers, end users, prices: read. */
  'resources.read',
  /** The same: create, change, delete, inside the caller's workspace. */
  'resources.write',
  /** Workspaces: read (a workspace key reads its own). */
  'workspaces.read',
  /** Workspaces: create, change (budgets, rate limits), delete; prices, which are organisation-wide. */
  'organisation.manage',
  /** The audit log of admin changes. */
  'audit.read',
] as const;
export type Permission = (typeof PERMISSIONS)[number];
