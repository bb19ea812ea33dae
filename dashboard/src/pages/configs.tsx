/** The configs page: routing configs, versioned, their columns and form. */
import type { Config } from '../api';
import { formatDateTime } from '../format';
import { historyLink } from './resource-cells';
import type { ResourceSpec } from './resource-spec';

/** The config's strategy mode (`fallback`, `loadbalance` …), if it names one. */
function strategyMode(config: Config['config']): string | null {
  const strategy = config.strategy;
  return strategy !== null && typeof strategy === 'object' && 'mode' in strategy && typeof strategy.mode === 'string' ? strategy.mode : null;
}

export const CONFIGS: ResourceSpec<Config> = {
  kind: 'config',
  title: 'Configs',
  singular: 'config',
  path: '/v1/configs',
  intro: (
    <>
      Routing configs (fallbacks, load balancing, retries, cache), used with <code>x-gateway-config: slug</code>. Every change is kept as a new version.
      Credentials inside are shown masked: if you edit the config, type them again.
    </>
  ),
  idOf: (row) => row.slug,
  nameOf: (row) => row.name,
  columns: [
    { label: 'Name', render: (row) => <strong>{row.name}</strong> },
    { label: 'Slug', render: (row) => <code>{row.slug}</code> },
    { label: 'Version', render: (row) => historyLink(row), num: true },
    { label: 'Strategy', render: (row) => strategyMode(row.config) ?? <span class="muted">single</span> },
    { label: 'Updated', render: (row) => formatDateTime(row.updated_at) },
  ],
  fields: [
    { name: 'name', label: 'Name', kind: 'text', required: true },
    { name: 'slug', label: 'Slug', kind: 'text', required: true, createOnly: true, placeholder: 'prod-fallback' },
    {
      name: 'config',
      label: 'Config (JSON)',
      kind: 'json',
      json: 'object',
      required: true,
      placeholder: '{"strategy": {"mode": "fallback"}, "targets": [{"virtual_key": "openai-prod"}, {"virtual_key": "anthropic-prod"}]}',
    },
  ],
  deleteLabel: 'Delete',
  empty: 'No configs yet. A config routes requests across several targets with fallbacks, retries and caching.',
};
