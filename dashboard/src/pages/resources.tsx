import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, currentSession, ListPage } from '../api';
import { copyText } from '../clipboard';
import { formatDateTime, formatRelative, fromLocalInput, pretty, toLocalInput } from '../format';
import { forgetNames, KINDS } from '../names';
import { href, routeClick, useLocation } from '../router';
import { actingWorkspace } from '../acting-workspace';
import { type Caller } from '../workspace';
import { RowBudgetStatus } from '../components/budget-status';
import { ResourceItem } from './resource-item';
import { titleInText, type FieldSpec, type ResourceSpec, type Row } from './resource-spec';
import { versionsPath } from './version-history';

export const PERIODS = [
  { value: '', label: 'No budget period' },
  { value: 'daily', label: 'Daily' },
  { value: 'weekly', label: 'Weekly' },
  { value: 'monthly', label: 'Monthly' },
];

const budgetCell = (row: Row) => <RowBudgetStatus row={row} />;

/** The version, linked to the history page of the config or prompt (its versions, diffs, restore). */
const historyLink = (row: Row) => {
  const to = versionsPath(row.object === 'prompt' ? 'prompt' : 'config', row.slug);
  return (
    <a href={href(to)} onClick={(e) => routeClick(e, to)} title="Version history: changes and restore">
      {row.version} · history
    </a>
  );
};

const logsLink = (filter: [string, string], label: string) => {
  const to = `/logs?${new URLSearchParams([filter])}`;
  return (
    <a href={href(to)} onClick={(e) => routeClick(e, to)}>
      {label}
    </a>
  );
};

const limitFields: FieldSpec[] = [
  {
    name: 'budget_limit_usd',
    label: 'Budget (USD)',
    kind: 'number',
    nullable: true,
    help: 'Requests are refused (402) once the period’s spend reaches it. Empty: no budget.',
  },
  { name: 'budget_period', label: 'Budget period', kind: 'select', options: PERIODS, nullable: true },
  {
    name: 'rate_limits',
    label: 'Rate limits (JSON)',
    kind: 'json',
    json: 'array',
    placeholder: '[{"type": "requests", "unit": "rpm", "value": 60}]',
    help: 'A list of {type: requests or tokens, unit: rpm, rph or rpd, value}.',
  },
  { name: 'expires_at', label: 'Expires at', kind: 'datetime', nullable: true, help: 'Empty: never.' },
];

const ROLE_OPTIONS = [
  { value: 'owner', label: 'owner: the whole organisation' },
  { value: 'admin', label: 'admin: keys and resources of its workspace' },
  { value: 'member', label: 'member: model calls, own logs' },
  { value: 'viewer', label: "viewer: its workspace's logs and analytics" },
];

export const API_KEYS: ResourceSpec = {
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
  deleteLabel: 'Revoke',
  empty: 'No API keys yet besides the one you signed in with? Create one for each application or person.',
};

/** When a key's newest request was stored: relative, the exact time on hover; "never" before its first. */
function lastUsedCell(row: Row): ComponentChildren {
  if (!row.last_used_at) return <span class="muted">never</span>;
  return (
    <time dateTime={row.last_used_at} title={formatDateTime(row.last_used_at)}>
      {formatRelative(row.last_used_at)}
    </time>
  );
}

export const VIRTUAL_KEYS: ResourceSpec = {
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

export const CONFIGS: ResourceSpec = {
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
    { label: 'Strategy', render: (row) => row.config?.strategy?.mode ?? <span class="muted">single</span> },
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

export const PROMPTS: ResourceSpec = {
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
    { label: 'Model', render: (row) => row.model ?? '—' },
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

/** The API key form for this caller: owners give any role and pick the workspace; others give roles up to admin, in their own. */
export function apiKeysSpec(caller: Caller): ResourceSpec {
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

/** Workspaces: owners list, create, change (budget, rate limits) and delete them; a workspace's key reads its own. */
export function workspacesSpec(isOwner: boolean): ResourceSpec {
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
        render: (row) =>
          row.rate_limits?.length ? (
            (row.rate_limits as { type: string; unit: string; value: number }[]).map((l) => `${l.value} ${l.type} ${l.unit}`).join(', ')
          ) : (
            <span class="muted">none</span>
          ),
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

/** Form values (strings) from a row, for editing; empty ones for a new row. */
function valuesOf(fields: FieldSpec[], row: Row | null): Record<string, string> {
  const values: Record<string, string> = {};
  for (const field of fields) {
    const value = row?.[field.name];
    if (field.kind === 'checkbox') values[field.name] = value ? 'true' : 'false';
    else if (field.kind === 'password') values[field.name] = '';
    else if (value === null || value === undefined) values[field.name] = !row ? (field.initial ?? '') : '';
    else if (field.kind === 'json')
      values[field.name] = (Array.isArray(value) && value.length === 0) || (typeof value === 'object' && Object.keys(value).length === 0) ? '' : pretty(value);
    else if (field.kind === 'datetime') values[field.name] = toLocalInput(value);
    else if (field.kind === 'list') values[field.name] = (value as string[]).join(', ');
    else values[field.name] = String(value);
  }
  return values;
}

/** The request body from form values: on edit only the fields that changed. */
function bodyOf(
  fields: FieldSpec[],
  values: Record<string, string>,
  initial: Record<string, string>,
  editing: boolean,
): { body: Row; errors: Record<string, string> } {
  const body: Row = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    if ((editing && field.createOnly) || (!editing && field.editOnly)) continue;
    const raw = values[field.name] ?? '';
    if (editing && raw === initial[field.name]) continue;
    const text = raw.trim();
    if (field.required && text === '') {
      errors[field.name] = `${field.label} is required.`;
      continue;
    }
    if (text === '' && field.kind !== 'checkbox') {
      if (editing && field.nullable) body[field.name] = null;
      else if (editing && field.kind === 'json') body[field.name] = field.json === 'array' ? [] : {};
      continue;
    }
    switch (field.kind) {
      case 'number': {
        const n = Number(text);
        if (!Number.isFinite(n)) errors[field.name] = `${field.label} must be a number.`;
        else body[field.name] = n;
        break;
      }
      case 'json': {
        try {
          const parsed = JSON.parse(text);
          if (field.json === 'array' && !Array.isArray(parsed)) errors[field.name] = `${field.label} must be a JSON list ([…]).`;
          else if (field.json === 'object' && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)))
            errors[field.name] = `${field.label} must be a JSON object ({…}).`;
          else body[field.name] = parsed;
        } catch (e) {
          errors[field.name] = `${field.label} is not valid JSON: ${(e as Error).message}`;
        }
        break;
      }
      case 'datetime': {
        const iso = fromLocalInput(text);
        if (!iso) errors[field.name] = `${field.label} is not a date and time.`;
        else body[field.name] = iso;
        break;
      }
      case 'list':
        body[field.name] = text
          .split(/[,\n]/)
          .map((s) => s.trim())
          .filter(Boolean);
        break;
      case 'checkbox':
        body[field.name] = raw === 'true';
        break;
      default:
        body[field.name] = text;
    }
  }
  return { body, errors };
}

/** List, create, edit and delete one kind of admin object. */
export function ResourcePage({ spec, onChanged }: { spec: ResourceSpec; onChanged?: () => void }) {
  // `/api-keys/<id>`, `/virtual-keys/<slug>`…: one object's page, shown above the list (links from the log name them so).
  const location = useLocation();
  const selectedPart = location.path.slice(KINDS[spec.kind].page.length + 1);
  const selected = selectedPart ? decodeURIComponent(selectedPart) : null;
  const [loads, setLoads] = useState(0);
  const [rows, setRows] = useState<Row[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Row | 'new' | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  // Revoking the key this dashboard is signed in with takes a second, explicit confirmation.
  const [confirmingSignOut, setConfirmingSignOut] = useState(false);
  const signedInWith = (row: Row) => {
    const key = currentSession()?.api_key;
    return spec.path === '/v1/api-keys' && key != null && row.id === key.id;
  };
  const [notice, setNotice] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);

  const load = async () => {
    setError(null);
    try {
      const page = await api<ListPage<Row>>('GET', `${spec.path}?limit=50`);
      setRows(page.data);
      setCursor(page.next_cursor);
      setLoads((n) => n + 1);
    } catch (e) {
      setError((e as ApiError).message);
    }
  };

  useEffect(() => {
    setRows(null);
    setEditing(null);
    setSecret(null);
    setNotice(null);
    void load();
  }, [spec]);

  const more = async () => {
    try {
      const page = await api<ListPage<Row>>('GET', `${spec.path}?limit=50&cursor=${encodeURIComponent(cursor!)}`);
      setRows([...(rows ?? []), ...page.data]);
      setCursor(page.next_cursor);
    } catch (e) {
      setError((e as ApiError).message);
    }
  };

  const remove = async (row: Row) => {
    try {
      await api('DELETE', `${spec.path}/${encodeURIComponent(spec.idOf(row))}`);
      forgetNames(spec.kind);
      setConfirming(null);
      onChanged?.();
      await load();
      setNotice(`${spec.deleteLabel === 'Revoke' ? 'Revoked' : 'Deleted'} ${spec.singular} “${spec.nameOf(row)}”.`);
    } catch (e) {
      setNotice(null);
      setError((e as ApiError).message);
    }
  };

  return (
    <div class="resources">
      <div class="page-head">
        <h1>{spec.title}</h1>
        {editing === null && !spec.readOnly && (
          <button
            type="button"
            onClick={() => {
              setEditing('new');
              setSecret(null);
              setNotice(null);
            }}
          >
            New {spec.singular}
          </button>
        )}
      </div>
      <p class="intro">{spec.intro}</p>
      {secret && <SecretOnce name={secret.name} secret={secret.key} onDone={() => setSecret(null)} />}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {editing !== null && (
        <ResourceForm
          spec={spec}
          row={editing === 'new' ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={async (saved, created) => {
            setEditing(null);
            forgetNames(spec.kind);
            onChanged?.();
            if (created && spec.secretOnCreate && typeof saved.key === 'string') setSecret({ name: saved.name, key: saved.key });
            await load();
            if (!(created && spec.secretOnCreate)) setNotice(`${created ? 'Created' : 'Saved'} ${spec.singular} “${spec.nameOf(saved)}”.`);
          }}
        />
      )}
      {selected && editing === null && (
        <ResourceItem
          key={`${selected}:${loads}`}
          spec={spec}
          id={selected}
          onEdit={(row) => {
            setEditing(row);
            setSecret(null);
            setNotice(null);
          }}
        />
      )}
      {error && (
        <div class="error-box" role="alert">
          <p>{error}</p>
          <button type="button" onClick={() => void load()}>
            Try again
          </button>
        </div>
      )}
      {rows === null ? (
        !error && (
          <p class="muted" role="status">
            Loading…
          </p>
        )
      ) : rows.length === 0 ? (
        <div class="empty">
          <h2>No {titleInText(spec)} yet</h2>
          <p>{spec.empty}</p>
        </div>
      ) : (
        <div class="table-wrap">
          <table class="data resource-table">
            <caption class="visually-hidden">{spec.title}, newest first</caption>
            <thead>
              <tr>
                {spec.columns.map((c) => (
                  <th scope="col" key={c.label} class={c.num ? 'num' : undefined}>
                    {c.label}
                  </th>
                ))}
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => {
                const id = spec.idOf(row);
                const isSelected = selected !== null && (selected === id || selected === row.id);
                return (
                  <tr key={row.id} class={isSelected ? 'selected' : undefined} aria-current={isSelected ? 'true' : undefined}>
                    {spec.columns.map((c) => (
                      <td key={c.label} data-label={c.label} class={c.num ? 'num' : undefined}>
                        {c.render(row)}
                      </td>
                    ))}
                    <td class="row-actions" data-label="Actions">
                      {confirming === id && confirmingSignOut ? (
                        <span class="confirm" role="group" aria-label={`Confirm again: revoke ${spec.nameOf(row)} and sign out`}>
                          <strong>
                            “{spec.nameOf(row)}” is the key you are signed in with: revoking it signs you out of the dashboard, and only another admin key can
                            sign in again.
                          </strong>
                          <button type="button" class="danger small" onClick={() => void remove(row)} autoFocus>
                            Revoke and sign out
                          </button>
                          <button
                            type="button"
                            class="secondary small"
                            onClick={() => {
                              setConfirming(null);
                              setConfirmingSignOut(false);
                            }}
                          >
                            Cancel
                          </button>
                        </span>
                      ) : confirming === id ? (
                        <span class="confirm" role="group" aria-label={`Confirm: ${spec.deleteLabel.toLowerCase()} ${spec.nameOf(row)}`}>
                          <span>
                            {spec.deleteLabel} “{spec.nameOf(row)}”?
                          </span>
                          <button
                            type="button"
                            class="danger small"
                            onClick={() => (signedInWith(row) ? setConfirmingSignOut(true) : void remove(row))}
                            autoFocus
                          >
                            Yes, {spec.deleteLabel.toLowerCase()}
                          </button>
                          <button type="button" class="secondary small" onClick={() => setConfirming(null)}>
                            Cancel
                          </button>
                        </span>
                      ) : (
                        !spec.readOnly && (
                          <>
                            <button
                              type="button"
                              class="secondary small"
                              aria-label={`Edit ${spec.nameOf(row)}`}
                              onClick={() => {
                                setEditing(row);
                                setSecret(null);
                                setNotice(null);
                              }}
                            >
                              Edit
                            </button>
                            {(spec.deletable ? spec.deletable(row) : !row.is_bootstrap) && (
                              <button
                                type="button"
                                class="secondary small"
                                aria-label={`${spec.deleteLabel} ${spec.nameOf(row)}`}
                                onClick={() => {
                                  setConfirming(id);
                                  setConfirmingSignOut(false);
                                }}
                              >
                                {spec.deleteLabel}
                              </button>
                            )}
                          </>
                        )
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <div class="more">
          <button type="button" class="secondary" onClick={more}>
            Load more
          </button>
        </div>
      )}
    </div>
  );
}

export function ResourceForm({
  spec,
  row,
  onCancel,
  onSaved,
}: {
  spec: ResourceSpec;
  row: Row | null;
  onCancel: () => void;
  onSaved: (saved: Row, created: boolean) => void;
}) {
  const editing = row !== null;
  const [initial] = useState(() => valuesOf(spec.fields, row));
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const fields = spec.fields.filter((f) => !(editing && f.createOnly) && !(!editing && f.editOnly));
  const prefix = `${spec.singular.replace(/\W+/g, '-')}-field`;

  const submit = async (event: Event) => {
    event.preventDefault();
    const { body, errors: problems } = bodyOf(spec.fields, values, initial, editing);
    setErrors(problems);
    if (Object.keys(problems).length) {
      setFormError('Some fields need attention: see the messages below them.');
      document.getElementById(`${prefix}-${Object.keys(problems)[0]}`)?.focus();
      return;
    }
    if (editing && Object.keys(body).length === 0) {
      setFormError('Nothing changed, so there is nothing to save.');
      return;
    }
    setBusy(true);
    setFormError(null);
    try {
      const saved = await api<Row>(editing ? 'PATCH' : 'POST', editing ? `${spec.path}/${encodeURIComponent(spec.idOf(row))}` : spec.path, body);
      onSaved(saved, !editing);
    } catch (e) {
      const err = e as ApiError;
      setFormError(err.message);
      const field = err.param?.split(/[.[]/)[0];
      if (field && fields.some((f) => f.name === field)) {
        setErrors({ [field]: err.message });
        document.getElementById(`${prefix}-${field}`)?.focus();
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="resource-form" onSubmit={submit} noValidate aria-labelledby={`${prefix}-title`} onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
      <h2 id={`${prefix}-title`} ref={heading} tabIndex={-1}>
        {editing ? `Edit ${spec.singular} “${spec.nameOf(row)}”` : `New ${spec.singular}`}
      </h2>
      {formError && (
        <p class="error-box" role="alert">
          {formError}
        </p>
      )}
      <div class="form-grid">
        {fields.map((field) => {
          const id = `${prefix}-${field.name}`;
          const described = [field.help ? `${id}-help` : '', errors[field.name] ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
          const common = {
            id,
            name: field.name,
            'aria-invalid': errors[field.name] ? true : undefined,
            'aria-describedby': described,
            'aria-required': field.required ? true : undefined,
          };
          const set = (value: string) => setValues({ ...values, [field.name]: value });
          let input;
          if (field.kind === 'select') {
            input = (
              <select {...common} value={values[field.name]} onChange={(e) => set((e.target as HTMLSelectElement).value)}>
                {field.options!.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </select>
            );
          } else if (field.kind === 'json') {
            input = (
              <textarea
                {...common}
                rows={field.name === 'config' || field.name === 'messages' ? 8 : 3}
                spellcheck={false}
                placeholder={field.placeholder}
                value={values[field.name]}
                onInput={(e) => set((e.target as HTMLTextAreaElement).value)}
              />
            );
          } else if (field.kind === 'checkbox') {
            input = (
              <input
                {...common}
                type="checkbox"
                checked={values[field.name] === 'true'}
                onChange={(e) => set((e.target as HTMLInputElement).checked ? 'true' : 'false')}
              />
            );
          } else {
            input = (
              <input
                {...common}
                type={
                  // Preact's typings list fewer input types than HTML has; tsc needs the assertion.
                  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
                  (field.kind === 'password'
                    ? 'password'
                    : field.kind === 'number'
                      ? 'number'
                      : field.kind === 'datetime'
                        ? 'datetime-local'
                        : 'text') as 'text'
                }
                step={field.kind === 'number' ? 'any' : undefined}
                min={field.kind === 'number' ? 0 : undefined}
                autoComplete={field.kind === 'password' ? 'new-password' : 'off'}
                spellcheck={false}
                placeholder={field.placeholder}
                value={values[field.name]}
                onInput={(e) => set((e.target as HTMLInputElement).value)}
              />
            );
          }
          return (
            <div class={`field ${field.kind === 'json' ? 'wide' : ''} ${field.kind === 'checkbox' ? 'checkbox' : ''}`} key={field.name}>
              <div class="label-row">
                <label for={id}>{field.label}</label>
                {field.required && <span class="required-mark">required</span>}
              </div>
              {input}
              {field.help && (
                <p id={`${id}-help`} class="help">
                  {field.help}
                </p>
              )}
              {errors[field.name] && (
                <p id={`${id}-error`} class="error">
                  {errors[field.name]}
                </p>
              )}
            </div>
          );
        })}
      </div>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : editing ? 'Save changes' : `Create ${spec.singular}`}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The new API key's secret, shown once with a copy button. */
function SecretOnce({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.focus(), []);
  return (
    <div class="secret" role="region" aria-labelledby="secret-title" tabIndex={-1} ref={box}>
      <h2 id="secret-title">API key “{name}” created</h2>
      <p>
        <strong>Copy the key now: it is shown only this once.</strong> The gateway keeps only its hash.
      </p>
      <div class="secret-row">
        <label for="new-secret" class="visually-hidden">
          The new API key
        </label>
        <input id="new-secret" readOnly value={secret} onFocus={(e) => (e.target as HTMLInputElement).select()} spellcheck={false} />
        <button type="button" onClick={async () => setCopied(await copyText(secret))}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <p class="muted small-text" role="status">
        {copied === false ? 'Copying did not work here: select the key and copy it yourself.' : copied ? 'The key is on your clipboard.' : ''}
      </p>
      <button type="button" class="secondary" onClick={onDone}>
        I have saved it
      </button>
    </div>
  );
}
