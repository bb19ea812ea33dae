/** The API keys page: its columns and form, and the form's roles and workspace as the caller may give them. */
import type { ApiKey } from '../api';
import { formatDateTime } from '../format';
import { actingWorkspace } from '../acting-workspace';
import type { Caller } from '../workspace';
import { budgetCell, lastUsedCell, logsLink } from './resource-cells';
import { limitFields } from './resource-limits';
import type { FieldSpec, ResourceSpec } from './resource-spec';

const ROLE_OPTIONS = [
  { value: 'owner', label: 'owner: the whole organisation' },
  { value: 'admin', label: 'admin: keys and resources of its workspace' },
  { value: 'member', label: 'member: model calls, own logs' },
  { value: 'viewer', label: "viewer: its workspace's logs and analytics" },
];

export const API_KEYS: ResourceSpec<ApiKey> = {
  kind: 'api-key',
  title: 'API keys',
  singular: 'API key',
  path: '/v1/api-keys',
  intro: (
    <>
      Keys for calling the gateway (<code>x-gateway-api-key</code>, or as the client's own API key: <code>Authorization: Bearer gk-…</code> or{' '}
      <code>x-api-key</code>), each in one workspace with a role: <strong>owner</strong> (the whole organisation), <strong>admin</strong> (its workspace's keys
      and resources), <strong>member</strong> (model calls, its own logs), <strong>viewer</strong> (its workspace's logs and analytics). The secret is shown
      once, when the key is created.
    </>
  ),
  idOf: (row) => row.id,
  nameOf: (row) => row.name,
  columns: [
    { label: 'Name', render: (row) => <strong>{row.name}</strong> },
    { label: 'Role', render: (row) => <span class={`tag role-${row.role}`}>{row.role}</span> },
    { label: 'Workspace', render: (row) => <code>{row.workspace}</code> },
    { label: 'Key', render: (row) => <code>{row.key_hint}</code> },
    { label: 'Budget', render: budgetCell },
    { label: 'Expires', render: (row) => (row.expires_at ? formatDateTime(row.expires_at) : <span class="muted">never</span>) },
    { label: 'Last used', render: lastUsedCell },
    { label: 'Logs', render: (row) => logsLink(['api_key_id', row.id], 'See requests') },
  ],
  fields: [
    { name: 'name', label: 'Name', kind: 'text', required: true },
    {
      name: 'role',
      label: 'Role',
      kind: 'select',
      options: ROLE_OPTIONS.filter((o) => o.value !== 'owner'),
      initial: 'member',
    },
    {
      name: 'default_virtual_key',
      label: 'Default virtual key (slug)',
      kind: 'text',
      nullable: true,
      placeholder: 'openai-prod',
      help: 'Routes requests that name no route, so clients that send only a base URL and this key (Codex, Claude Code, Cursor) need no x-gateway header.',
    },
    { name: 'default_config', label: 'Default config (slug)', kind: 'text', nullable: true, help: 'Like the default virtual key, and wins over it.' },
    ...limitFields,
    {
      name: 'metadata',
      label: 'Metadata (JSON)',
      kind: 'json',
      json: 'object',
      placeholder: '{"team": "search"}',
      help: 'Merged into the metadata of every request of this key.',
    },
  ],
  secretOnCreate: true,
  // GATEWAY_ADMIN_KEY's own row cannot be revoked.
  deletable: (row) => !row.is_bootstrap,
  deleteLabel: 'Revoke',
  empty: 'No API keys yet besides the one you signed in with? Create one for each application or person.',
};

/** The API key form for this caller: owners give any role and pick the workspace; others give roles up to admin, in their own. */
export function apiKeysSpec(caller: Caller): ResourceSpec<ApiKey> {
  if (!caller.isOwner) return API_KEYS;
  // Acting in one workspace (the header's switcher), an owner creates keys there only.
  const acting = actingWorkspace();
  const choices = caller.workspaces.filter((w) => acting === null || w.slug === acting);
  const workspace: FieldSpec = {
    name: 'workspace',
    label: 'Workspace',
    kind: 'select',
    createOnly: true,
    options: choices.map((w) => ({ value: w.slug, label: `${w.name} (${w.slug})` })),
    initial: choices.find((w) => w.slug === 'default')?.slug ?? choices[0]?.slug,
    help: acting === null ? 'Fixed once the key is created.' : 'Fixed once the key is created. Pick “All workspaces” in the header to create it in another.',
  };
  const fields = API_KEYS.fields.map((f) => (f.name === 'role' ? { ...f, options: ROLE_OPTIONS } : f));
  return { ...API_KEYS, fields: [fields[0], workspace, ...fields.slice(1)] };
}
