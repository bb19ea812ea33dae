/** The virtual keys page: provider credentials kept encrypted, their columns and form. */
import type { VirtualKey } from '../api';
import { budgetCell, lastUsedCell, logsLink } from './resource-cells';
import { limitFields } from './resource-limits';
import type { ResourceSpec } from './resource-spec';

export const VIRTUAL_KEYS: ResourceSpec<VirtualKey> = {
  kind: 'virtual-key',
  title: 'Virtual keys',
  singular: 'virtual key',
  path: '/v1/virtual-keys',
  intro: (
    <>
      Provider credentials kept by the gateway (encrypted), used with <code>x-gateway-virtual-key: slug</code> or <code>@slug/model</code>. The credential is
      never shown again.
    </>
  ),
  idOf: (row) => row.slug,
  nameOf: (row) => row.name,
  columns: [
    { label: 'Name', render: (row) => <strong>{row.name}</strong> },
    { label: 'Slug', render: (row) => <code>{row.slug}</code> },
    { label: 'Provider', render: (row) => row.provider },
    { label: 'Credential', render: (row) => (row.key_hint ? <code>{row.key_hint}</code> : <span class="muted">none</span>) },
    { label: 'Budget', render: budgetCell },
    { label: 'State', render: (row) => (row.disabled ? <span class="tag role-admin">disabled</span> : 'active') },
    { label: 'Last used', render: lastUsedCell },
    { label: 'Logs', render: (row) => logsLink(['virtual_key', row.slug], 'See requests') },
  ],
  fields: [
    { name: 'name', label: 'Name', kind: 'text', required: true },
    { name: 'slug', label: 'Slug', kind: 'text', required: true, createOnly: true, placeholder: 'openai-prod', help: 'Lower-case letters, digits and dashes.' },
    { name: 'provider', label: 'Provider', kind: 'text', required: true, placeholder: 'openai' },
    { name: 'key', label: 'Provider API key', kind: 'password', help: 'Stored encrypted. When editing, leave empty to keep the current one.' },
    { name: 'custom_host', label: 'Custom host (base URL)', kind: 'text', nullable: true, placeholder: 'https://api.example.com/v1' },
    { name: 'provider_organization', label: 'Organization', kind: 'text', nullable: true },
    { name: 'provider_project', label: 'Project', kind: 'text', nullable: true },
    { name: 'allowed_models', label: 'Allowed models', kind: 'list', nullable: true, help: 'Comma-separated. Empty: any model.' },
    ...limitFields,
    { name: 'disabled', label: 'Disabled', kind: 'checkbox', editOnly: true },
  ],
  deleteLabel: 'Delete',
  empty: 'No virtual keys yet. Add your provider credential here, then route requests to it by its slug.',
};
