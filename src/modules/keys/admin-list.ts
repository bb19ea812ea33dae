import { ObjectLiteral, Repository } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { listPage, ListPage } from '../../common/http/list.dto';
import type { WorkspaceDirectory } from '../workspaces/workspace-directory';
import type { WorkspaceScope } from '../../context/caller';

/**
 * Newest-first keyset paging over an admin table: the cursor is the last row's
 * (created_at, id), base64url-encoded.
 */
export async function pageNewestFirst<T extends ObjectLiteral & { id: string; createdAt: Date }>(
  repo: Repository<T>,
  liveCondition: string,
  limit: number,
  cursor?: string,
  parameters: Record<string, unknown> = {},
): Promise<ListPage<T>> {
  const qb = repo
    .createQueryBuilder('row')
    .where(liveCondition, parameters)
    .orderBy('row.created_at', 'DESC')
    .addOrderBy('row.id', 'DESC')
    .take(limit + 1);
  if (cursor) {
    const [createdAt, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
    if (!createdAt || !id || Number.isNaN(Date.parse(createdAt))) throw GatewayError.invalidRequest('cursor is not a cursor this endpoint returned', 'cursor');
    qb.andWhere('(row.created_at, row.id) < (:createdAt, :id)', { createdAt, id });
  }
  const rows = await qb.getMany();
  return listPage(rows, limit, (row) => Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url'));
}

/** A unique-slug violation from PostgreSQL becomes a 409 naming the slug; anything else is rethrown. */
export function rethrowSlugConflict(error: unknown, what: string, slug: string): never {
  if ((error as { driverError?: { code?: string } }).driverError?.code === '23505') {
    throw new GatewayError(409, 'invalid_request_error', `A ${what} with slug '${slug}' already exists`, 'slug_taken', 'slug');
  }
  throw error;
}

/** The largest PostgreSQL `integer`: a larger version number is a 400, not a failed query. */
export const MAX_VERSION = 2_147_483_647;

/** The cursor of a versions list: the last version number of the previous page. */
export function parseVersionCursor(cursor: string): number {
  const version = Number(cursor);
  if (!/^\d+$/.test(cursor) || version < 1 || version > MAX_VERSION) {
    throw GatewayError.invalidRequest('cursor is not a cursor this endpoint returned', 'cursor');
  }
  return version;
}

/** A list's condition: the live rows of the workspaces the scope sees (in the query, never filtered after). */
export function visibleLive(scope: WorkspaceScope, live = 'row.deleted_at is null'): [string, Record<string, unknown>] {
  return scope.visible === null ? [live, {}] : [`${live} and row.workspace_id in (:...visible)`, { visible: scope.visible }];
}

/** The workspace a row belongs to, as every admin read names it. */
export async function workspaceFields(directory: WorkspaceDirectory, workspaceId: string): Promise<{ workspace: string | null; workspace_id: string }> {
  return { workspace: (await directory.byId(workspaceId))?.slug ?? null, workspace_id: workspaceId };
}
