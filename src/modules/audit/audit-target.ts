/** What an audited route declares (`@Audited`), shared by the decorator, the coverage check and the interceptor. */
import type { WorkspaceScope } from '../../context/caller';

/** What the audit log names (CONTRACT section 13). */
export const AUDIT_RESOURCES = ['api_key', 'virtual_key', 'config', 'prompt', 'mcp_server', 'end_user', 'workspace', 'price'] as const;
export type AuditResource = (typeof AUDIT_RESOURCES)[number];

/** The request of an audited change, as the audit target reads it (before the validation pipe has run: check what you take from `body`). */
export interface AuditedRequest {
  scope: WorkspaceScope;
  /** The route's path parameter when it has exactly one (`:id`, `:idOrSlug`, …). */
  id: string | undefined;
  params: Record<string, string | string[]>;
  body: Record<string, unknown>;
}

/** A JSON view of a resource, as the admin API answers it. */
export type ResourceView = Record<string, unknown>;

/**
 * How the audit interceptor sees one kind of resource. `read` is the resource's own admin
 * read (normally the controller's GET handler), so that `before` is what an admin GET showed,
 * already masked; it is called before the change when the request names a resource (a path
 * parameter, or always for an `upsert`); a 404 there means there was nothing before.
 */
export interface AuditTarget<C = any> {
  resource: AuditResource;
  read(controller: C, request: AuditedRequest): unknown;
  /** POST sets or replaces (prices): read `before` from the body; `create` or `update` by whether it existed. */
  upsert?: boolean;
  /** `resource_id` of a view (default: its `id`). */
  idOf?(view: ResourceView): string | null;
  /** The workspace the change happened in (default: the view's `workspace_id`, else the caller's acting workspace); null: the organisation (prices). */
  workspaceOf?(view: ResourceView | null, request: AuditedRequest): string | null;
}

export const AUDITED = 'gateway:audited';
export const AUDIT_ACTION = 'gateway:audit-action';
