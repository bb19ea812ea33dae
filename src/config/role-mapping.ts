import { LEGACY_ROLES, type Role, ROLES } from '../common/role-names';

/** A person's place as the identity provider's groups give it: a workspace by slug (it may not exist yet) and a role there. */
export interface MappedMembership {
  workspace: string;
  role: Role;
}

/** OIDC_ROLE_MAPPING: group name → where members of that group sit. */
export type RoleMapping = ReadonlyMap<string, MappedMembership>;

/** An `owner` is organisation-wide; the workspace it names (default `default`) is only where it acts when it names none. */
const OWNER_HOME = 'default';
const SLUG = /^[a-z0-9-]+$/;
const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1, viewer: 0 };

/**
 * Parses OIDC_ROLE_MAPPING, e.g. `{"search-admins": {"workspace": "search", "role": "admin"},
 * "platform": {"role": "owner"}}`; throws naming the first bad entry (the environment check
 * lists it at start-up).
 */
export function parseRoleMapping(json: string | undefined): RoleMapping {
  if (json === undefined || json.trim() === '') return new Map();
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('must be a JSON object: {"<group>": {"workspace": "<slug>", "role": "admin"}, …}');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('must be a JSON object of group → {workspace, role}');
  const mapping = new Map<string, MappedMembership>();
  for (const [group, entry] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error(`group '${group}': must be an object {workspace, role}`);
    const { workspace, role: rawRole } = entry as { workspace?: unknown; role?: unknown };
    const role = typeof rawRole === 'string' ? (LEGACY_ROLES[rawRole] ?? rawRole) : rawRole;
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) throw new Error(`group '${group}': role must be one of ${ROLES.join(', ')}`);
    if (workspace === undefined && role !== 'owner') throw new Error(`group '${group}': workspace (a slug) is required for role ${role}`);
    if (workspace !== undefined && (typeof workspace !== 'string' || !SLUG.test(workspace)))
      throw new Error(`group '${group}': workspace must be a slug ([a-z0-9-]+)`);
    mapping.set(group, { workspace: workspace ?? OWNER_HOME, role: role as Role });
  }
  return mapping;
}

/**
 * The memberships a person's groups give, highest role first (an owner's first, so that
 * it acts organisation-wide); one per workspace, the highest role of those it is given.
 */
export function membershipsOf(groups: readonly string[], mapping: RoleMapping): MappedMembership[] {
  const best = new Map<string, MappedMembership>();
  for (const group of groups) {
    const found = mapping.get(group);
    if (!found) continue;
    const held = best.get(found.workspace);
    if (!held || RANK[found.role] > RANK[held.role]) best.set(found.workspace, found);
  }
  return [...best.values()].sort((a, b) => RANK[b.role] - RANK[a.role]);
}

/** The groups claim as a list of names: an array of strings, or one string; anything else is none. */
export function groupsOf(claim: unknown): string[] {
  if (typeof claim === 'string') return [claim];
  if (Array.isArray(claim)) return claim.filter((g): g is string => typeof g === 'string');
  return [];
}
