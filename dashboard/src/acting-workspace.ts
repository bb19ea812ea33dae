/** The workspace an owner picked to act in, sent as `x-gateway-workspace` on every admin call (api.ts). */
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
