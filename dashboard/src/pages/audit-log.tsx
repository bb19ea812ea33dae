import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, ListPage, type AuditEntry } from '../api';
import { changedFields, showValue } from '../audit-diff';
import { formatTime, fromLocalInput, toLocalInput } from '../format';
import { Location, navigate } from '../router';

const PAGE = 50;
const RESOURCES = ['api_key', 'virtual_key', 'config', 'prompt', 'mcp_server', 'end_user', 'workspace', 'price'] as const;
const ACTIONS = ['create', 'update', 'delete', 'revoke'] as const;
const FILTERS = ['resource', 'action', 'resource_id', 'actor_id', 'from', 'to'] as const;

const label = (resource: string) => resource.replace(/_/g, ' ').replace(/^api /, 'API ').replace(/^mcp /, 'MCP ');

/** The audit log (owners): who changed what, when, each change a diff of the fields it touched. */
export function AuditLogPage({ location }: { location: Location }) {
  const filters = useMemo(
    () => FILTERS.flatMap((name) => (location.query.get(name) ? [[name, location.query.get(name)!] as [string, string]] : [])),
    [location.search],
  );
  const query = new URLSearchParams(filters).toString();
  const [rows, setRows] = useState<AuditEntry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);

  const fetchPage = (cursor?: string) =>
    api<ListPage<AuditEntry>>('GET', `/v1/audit-log?limit=${PAGE}${query ? `&${query}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);

  useEffect(() => {
    let live = true;
    setLoading(true);
    setError(null);
    fetchPage()
      .then((page) => live && (setRows(page.data), setNext(page.next_cursor)))
      .catch((e) => live && setError(e as ApiError))
      .finally(() => live && setLoading(false));
    return () => void (live = false);
  }, [query]);

  const more = async () => {
    try {
      const page = await fetchPage(next!);
      setRows([...rows, ...page.data]);
      setNext(page.next_cursor);
    } catch (e) {
      setError(e as ApiError);
    }
  };

  return (
    <section class="audit" aria-labelledby="audit-title">
      <div class="page-head">
        <h1 id="audit-title">Audit log</h1>
        <p class="muted small-text">Every change made through the admin API, newest first. Secrets show only as hints.</p>
      </div>
      <AuditFilters key={query} initial={Object.fromEntries(filters)} />
      {error ? (
        <div class="error-box" role="alert">
          <p>{error.status === 403 ? 'Only organisation owners can read the audit log. Sign in with an owner key.' : error.message}</p>
        </div>
      ) : loading ? (
        <p class="muted" role="status">
          Loading changes…
        </p>
      ) : rows.length === 0 ? (
        <div class="empty">
          <h2>{filters.length ? 'No changes match these filters' : 'No changes yet'}</h2>
        </div>
      ) : (
        <>
          <ol class="audit-list">
            {rows.map((row) => (
              <AuditItem key={row.id} row={row} />
            ))}
          </ol>
          <div class="more">
            {next ? (
              <button type="button" class="secondary" onClick={more}>
                Load {PAGE} older changes
              </button>
            ) : (
              <p class="muted">That is the oldest change{filters.length ? ' matching these filters' : ''}.</p>
            )}
          </div>
        </>
      )}
    </section>
  );
}

function AuditItem({ row }: { row: AuditEntry }) {
  const changes = changedFields(row.before, row.after);
  const name = (row.after ?? row.before)?.name ?? (row.after ?? row.before)?.slug ?? (row.after ?? row.before)?.user;
  return (
    <li class="audit-item" data-audit-id={row.id} data-change={`${row.action} ${row.resource}`}>
      <details>
        <summary>
          <time dateTime={row.created_at} title={row.created_at}>
            {formatTime(row.created_at)}
          </time>{' '}
          <strong>{row.actor.name}</strong> <span class="muted">({row.actor.kind === 'api_key' ? 'API key' : row.actor.kind})</span>{' '}
          <span class={`tag action-${row.action}`}>{row.action}</span> {label(row.resource)} {typeof name === 'string' ? <strong>{name}</strong> : null}{' '}
          <code class="muted">{row.resource_id}</code>{' '}
          <span class="muted">
            · {changes.length} {changes.length === 1 ? 'field' : 'fields'}
          </span>
        </summary>
        <table class="data compact audit-diff">
          <caption class="visually-hidden">Fields changed</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {changes.map((c) => (
              <tr key={c.field} class={`diff-${c.kind}`}>
                <th scope="row">{c.field}</th>
                <td class="diff-before">
                  <pre>{showValue(c.before)}</pre>
                </td>
                <td class="diff-after">
                  <pre>{showValue(c.after)}</pre>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <p class="muted small-text">
          Actor id <code>{row.actor.id}</code>
          {row.workspace_id ? (
            <>
              {' '}
              · workspace <code>{row.workspace_id}</code>
            </>
          ) : (
            ' · organisation-wide'
          )}
        </p>
      </details>
    </li>
  );
}

function AuditFilters({ initial }: { initial: Record<string, string> }) {
  const [values, setValues] = useState<Record<string, string>>(() => ({ ...initial, from: toLocalInput(initial.from), to: toLocalInput(initial.to) }));
  const set = (name: string) => (event: Event) => setValues({ ...values, [name]: (event.target as HTMLInputElement).value });
  const submit = (event: Event) => {
    event.preventDefault();
    const out: [string, string][] = [];
    for (const name of FILTERS) {
      const raw = values[name]?.trim();
      const value = name === 'from' || name === 'to' ? fromLocalInput(raw ?? '') : raw;
      if (value) out.push([name, value]);
    }
    navigate(`/audit-log${out.length ? `?${new URLSearchParams(out)}` : ''}`);
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Filter changes">
      <div class="filter-grid">
        <div class="field">
          <label for="a-resource">Resource</label>
          <select id="a-resource" value={values.resource ?? ''} onChange={set('resource')}>
            <option value="">Any</option>
            {RESOURCES.map((r) => (
              <option key={r} value={r}>
                {label(r)}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="a-action">Action</label>
          <select id="a-action" value={values.action ?? ''} onChange={set('action')}>
            <option value="">Any</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="a-resource-id">Resource id</label>
          <input id="a-resource-id" value={values.resource_id ?? ''} onInput={set('resource_id')} autoComplete="off" spellcheck={false} />
        </div>
        <div class="field">
          <label for="a-actor-id">Actor id</label>
          <input id="a-actor-id" value={values.actor_id ?? ''} onInput={set('actor_id')} autoComplete="off" spellcheck={false} />
        </div>
        <div class="field">
          <label for="a-from">From</label>
          <input id="a-from" type="datetime-local" value={values.from ?? ''} onInput={set('from')} />
        </div>
        <div class="field">
          <label for="a-to">Until</label>
          <input id="a-to" type="datetime-local" value={values.to ?? ''} onInput={set('to')} />
        </div>
      </div>
      <div class="actions">
        <button type="submit">Apply filters</button>
        <button type="button" class="secondary" onClick={() => navigate('/audit-log')}>
          Clear
        </button>
      </div>
    </form>
  );
}
