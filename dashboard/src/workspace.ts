import { listAll, type Session, type Workspace } from './api';
import { actingWorkspace, setActingWorkspace } from './acting-workspace';

/**
 * Who the dashboard is signed in as, as far as the workspaces go: an organisation owner
 * (every workspace, a switcher in the header) or a workspace's key (its own, read-only),
 * and the workspace an owner picked, sent as `x-gateway-workspace` on every admin call.
 */
export interface Caller {
  isOwner: boolean;
  /** Every workspace for an owner; the caller's own for the others. */
  workspaces: Workspace[];
}

/** The caller and its workspaces; a picked workspace that is gone, or a caller who is not an owner, drops the pick. */
export async function loadCaller(session: Session): Promise<Caller> {
  // The session says the role: an owner of the organisation, or a role inside one workspace.
  const owner = session.role === 'owner';
  const workspaces = await listAll<Workspace>('/v1/workspaces');
  const picked = actingWorkspace();
  if (picked !== null && (!owner || !workspaces.some((w) => w.slug === picked))) setActingWorkspace(null);
  return { isOwner: owner, workspaces: workspaces.sort((a, b) => a.name.localeCompare(b.name)) };
}
