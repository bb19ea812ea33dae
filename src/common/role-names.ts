/**
 * The role names (CONTRACT section 13), on the ground floor: the environment's check of
 * OIDC_ROLE_MAPPING (config/) reads them, as do the permissions (modules/workspaces/roles.ts).
 */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** Accepted on input for today's `user` keys; always read back as `member`. */
export const LEGACY_ROLES: Record<string, Role> = { user: 'member' };
