/**
 * Who may do what (CONTRACT section 13). A role belongs to an API key or to a signed-in
 * person, always inside one workspace; `owner` is organisation-wide. Every route declares
 * the permission it needs (`@Permission()`, or `models.call` for the model operations);
 * the key guard checks it against GRANTS, in one place.
 */
import { PERMISSIONS, type Permission, type Role } from '../../common/role-names';
export { LEGACY_ROLES, PERMISSIONS, ROLES, type Permission, type Role } from '../../common/role-names';

const ALL: readonly Permission[] = PERMISSIONS;
export const GRANTS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(ALL),
  admin: new Set(['models.call', 'logs.read', 'resources.read', 'resources.write', 'workspaces.read']),
  member: new Set(['models.call', 'logs.read', 'workspaces.read']),
  viewer: new Set(['logs.read', 'workspaces.read']),
};

export function roleMay(role: Role, permission: Permission): boolean {
  return GRANTS[role].has(permission);
}

/** A role and what it outranks: who may give which role to a key. */
const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1, viewer: 0 };
export function outranks(role: Role, other: Role): boolean {
  return RANK[role] >= RANK[other];
}

/** `member`/`viewer` read only; `member` only its own requests. */
export function readsOwnRequestsOnly(role: Role): boolean {
  return role === 'member';
}
