import { FindOperator, In } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ApiKeyPrincipal, WorkspaceScope } from '../../context/caller';
import type { Role } from './roles';
import type { WorkspaceDirectory } from './workspace-directory';

/**
 * A key acts in its own workspace. An owner sees every workspace, or the one
 * `x-gateway-workspace` names; a person picks one of their memberships with it (default:
 * the first). A workspace the caller cannot act in answers as if it did not exist.
 */
export async function scopeOf(principal: ApiKeyPrincipal, header: string | string[] | undefined, directory: WorkspaceDirectory): Promise<WorkspaceScope> {
  const caller = (role: Role) => ({ kind: principal.kind, id: principal.id, name: principal.name, role });
  const wanted = typeof header === 'string' && header !== '' ? header : null;
  if (wanted === null) {
    const workspaceId = principal.memberships?.[0]?.workspaceId ?? principal.workspaceId;
    const role = principal.memberships?.[0]?.role ?? principal.role;
    return { caller: caller(role), workspaceId, visible: role === 'owner' ? null : [workspaceId] };
  }
  const workspace = await directory.bySlug(wanted);
  const membership =
    workspace && (principal.memberships ?? [{ workspaceId: principal.workspaceId, role: principal.role }]).find((m) => m.workspaceId === workspace.id);
  const role = principal.role === 'owner' ? 'owner' : membership?.role;
  if (!workspace || !role) throw GatewayError.notFound(`No workspace '${wanted}'`, 'workspace_not_found');
  return { caller: caller(role), workspaceId: workspace.id, visible: [workspace.id] };
}

/** Whether a row of `workspaceId` is inside the scope. */
export function inScope(scope: WorkspaceScope, workspaceId: string): boolean {
  return scope.visible === null || scope.visible.includes(workspaceId);
}

/**
 * The scope as a SQL condition on `column`, its parameter appended to `params`
 * (`true` for an unnarrowed owner).
 */
export function scopeCondition(scope: WorkspaceScope, column: string, params: unknown[]): string {
  if (scope.visible === null) return 'true';
  params.push(scope.visible);
  return `${column} = any($${params.length}::uuid[])`;
}

/** The scope as a TypeORM `where` part (nothing for an unnarrowed owner). */
export function scopeWhere(scope: WorkspaceScope): { workspaceId?: FindOperator<string> } {
  return scope.visible === null ? {} : { workspaceId: In([...scope.visible]) };
}
