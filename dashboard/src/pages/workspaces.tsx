/** The workspaces page: owners manage them, others read their own. */
import type { Workspace } from '../api';
import { formatDateTime } from '../format';
import { budgetCell } from './resource-cells';
import { limitFields } from './resource-limits';
import type { ResourceSpec } from './resource-spec';

/** Workspaces: owners list, create, change (budget, rate limits) and delete them; a workspace's key reads its own. */
export function workspacesSpec(isOwner: boolean): ResourceSpec<Workspace> {
  return {
    kind: 'workspace',
    title: 'Workspaces',
    singular: 'workspace',
    path: '/v1/workspaces',
    intro: isOwner ? (
      <>
        Each key, virtual key, config, prompt and request belongs to one workspace. A workspace's budget and rate limits hold across all its keys. Pick a
        workspace in the header to see and manage only its objects. A workspace is deleted once it is empty; <code>default</code> stays.
      </>
    ) : (
      <>Your key acts inside this workspace: its budget and rate limits hold across all the workspace's keys. Only organisation owners change them.</>
    ),
    idOf: (row) => row.slug,
    nameOf: (row) => row.name,
    columns: [
      { label: 'Name', render: (row) => <strong>{row.name}</strong> },
      { label: 'Slug', render: (row) => <code>{row.slug}</code> },
      { label: 'Budget', render: budgetCell },
      {
        label: 'Rate limits',
        render: (row) => (row.rate_limits.length ? row.rate_limits.map((l) => `${l.value} ${l.type} ${l.unit}`).join(', ') : <span class="muted">none</span>),
      },
      { label: 'Created', render: (row) => formatDateTime(row.created_at) },
    ],
    fields: [
      { name: 'name', label: 'Name', kind: 'text', required: true },
      {
        name: 'slug',
        label: 'Slug',
        kind: 'text',
        required: true,
        placeholder: 'search-team',
        help: 'Lower-case letters, digits and dashes; keys name it on creation.',
      },
      ...limitFields.filter((f) => f.name !== 'expires_at'),
    ],
    deleteLabel: 'Delete',
    empty: 'No workspaces to show.',
    readOnly: !isOwner,
    deletable: (row) => row.slug !== 'default',
  };
}
