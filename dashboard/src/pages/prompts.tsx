/** The prompts page: prompt templates, versioned, their columns and form. */
import type { Prompt } from '../api';
import { formatDateTime } from '../format';
import { historyLink } from './resource-cells';
import type { ResourceSpec } from './resource-spec';

export const PROMPTS: ResourceSpec<Prompt> = {
  kind: 'prompt',
  title: 'Prompts',
  singular: 'prompt',
  path: '/v1/prompts',
  intro: (
    <>
      Prompt templates with <code>{'{{variables}}'}</code>, called with <code>POST /v1/prompts/{'{id}'}/completions</code>. Saving a change makes a new version.
    </>
  ),
  idOf: (row) => row.slug,
  nameOf: (row) => row.name,
  columns: [
    { label: 'Name', render: (row) => <strong>{row.name}</strong> },
    { label: 'Slug', render: (row) => <code>{row.slug}</code> },
    { label: 'Model', render: (row) => row.model },
    { label: 'Route', render: (row) => row.virtual_key ?? row.provider ?? <span class="muted">from the call</span> },
    { label: 'Version', render: (row) => historyLink(row), num: true },
    { label: 'Updated', render: (row) => formatDateTime(row.updated_at) },
  ],
  fields: [
    { name: 'name', label: 'Name', kind: 'text', required: true },
    { name: 'slug', label: 'Slug', kind: 'text', required: true, createOnly: true, placeholder: 'support-reply' },
    { name: 'model', label: 'Model', kind: 'text', placeholder: 'gpt-4o-mini' },
    { name: 'virtual_key', label: 'Virtual key (slug)', kind: 'text', nullable: true },
    { name: 'provider', label: 'or provider', kind: 'text', nullable: true },
    {
      name: 'messages',
      label: 'Messages (JSON)',
      kind: 'json',
      json: 'array',
      required: true,
      placeholder: '[{"role": "system", "content": "You help {{customer}}."}, {"role": "user", "content": "{{question}}"}]',
    },
    { name: 'variables', label: 'Default variables (JSON)', kind: 'json', json: 'object', placeholder: '{"customer": "a customer"}' },
    { name: 'hyperparameters', label: 'Hyperparameters (JSON)', kind: 'json', json: 'object', placeholder: '{"temperature": 0.2, "max_tokens": 300}' },
  ],
  deleteLabel: 'Delete',
  empty: 'No prompts yet. A prompt keeps a template and its model settings in the gateway, versioned.',
};
