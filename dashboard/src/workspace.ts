import { api, ApiError, listAll } from './api';

/**
 * Who the dashboard is signed in as, as far as the workspaces go: an organisation owner
 * (every workspace, a switcher in the header) or a workspace's key (its own, read-only),
 * and the workspace an owner picked, sent as `x-gateway-workspace` on every admin call.
 */
export interface Workspace {
  id: string;
  name: string;
  slug: string;
  budget_limit_usd: number | null;
  budget_period: string | null;
  rate_limits: unknown[];
  spent_usd?: number;
}

export interface Caller {
  isOwner: boolean;
  /** Every workspace for an owner; the caller's own for the others. */
  workspaces: Workspace[];
}

const STORAGE_KEY = 'ai-gateway.workspace';

/** The workspace an owner acts in (null: the whole organisation), kept across reloads. */
export function actingWorkspace(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function setActingWorkspace(slug: string | null): void {
  try {
    if (slug === null) localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, slug);
  } catch {
    // Storage refused (private mode): the pick lasts until the page is left.
  }
}

/** `x-gateway-workspace` for an admin call; the workspaces themselves are managed organisation-wide. */
export function workspaceHeader(path: string): Record<string, string> {
  const slug = actingWorkspace();
  return slug && !path.startsWith('/v1/workspaces') ? { 'x-gateway-workspace': slug } : {};
}

/**
 * Whether the caller is an organisation owner: changing a workspace needs that role, and the
 * key guard answers everyone else 403 before any work, so a change of a workspace that does
 * not exist tells them apart (404 for an owner) without changing anything.
 */
async function isOwner(): Promise<boolean> {
  try {
    await api('PATCH', '/v1/workspaces/dashboard-owner-check-none', {});
    return true;
  } catch (e) {
    if ((e as ApiError).status === 404) return true;
    if ((e as ApiError).status === 403) return false;
    throw e;
  }
}

/** The caller and its workspaces; a picked workspace that is gone, or a caller who is not an owner, drops the pick. */
export async function loadCaller(): Promise<Caller> {
  const [owner, workspaces] = await Promise.all([isOwner(), listAll<Workspace>('/v1/workspaces')]);
  const picked = actingWorkspace();
  if (picked !== null && (!owner || !workspaces.some((w) => w.slug === picked))) setActingWorkspace(null);
  return { isOwner: owner, workspaces: workspaces.sort((a, b) => a.name.localeCompare(b.name)) };
}
