import { Fragment, type ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, ListPage, LogRow, type SearchSnippet } from '../api';
import { formatCost, formatInt, formatMs, formatTime, fromLocalInput, statusClass, toLocalInput } from '../format';
import { href, Location, navigate, routeClick } from '../router';
import { LogDetail } from './log-detail';
import { ExportButtons } from '../components/export-buttons';
import { NamePicker } from '../components/name-picker';
import { Kind, useName } from '../names';
import { displayZone, zoneName } from '../time-zone';

const POLL_MS = 4000;
const PAGE = 50;
/** The rows nested under one request shown at most (the API's page limit). */
const NESTED_LIMIT = 500;

type NestedState = 'loading' | LogRow[] | { error: string };
/** Filters of GET /v1/logs that the dashboard URL carries under the same names. */
const FILTERS = [
  { name: 'q', label: 'Search bodies' },
  { name: 'user', label: 'User' },
  { name: 'model', label: 'Model' },
  { name: 'model_contains', label: 'Model contains' },
  { name: 'provider', label: 'Provider' },
  { name: 'status', label: 'Status' },
  { name: 'api_key_id', label: 'API key' },
  { name: 'virtual_key', label: 'Virtual key' },
  { name: 'config', label: 'Config' },
  { name: 'prompt', label: 'Prompt' },
  { name: 'trace_id', label: 'Trace id' },
  { name: 'batch_id', label: 'Batch' },
] as const;

/** What each filter takes, where it is not plain. */
const PLACEHOLDERS: Record<string, string> = {
  q: 'words, "a phrase", -excluded',
  model: 'one, or several with commas',
  provider: 'one, or several with commas',
  status: '200, 429 or 4xx, 5xx, error',
  batch_id: 'batch_… or msgbatch_…',
};

/** The API filters held in the dashboard URL: the known names, from/to and metadata.<key>. */
export function filtersOf(query: URLSearchParams): [string, string][] {
  const known = new Set<string>([...FILTERS.map((f) => f.name), 'from', 'to', 'operation', 'kind', 'parent_id']);
  return [...query.entries()].filter(([name, value]) => value !== '' && (known.has(name) || (name.startsWith('metadata.') && name.length > 9)));
}

const toQuery = (filters: [string, string][]) => new URLSearchParams(filters).toString();

function labelOf(name: string): string {
  if (name.startsWith('metadata.')) return `metadata ${name.slice(9)}`;
  if (name === 'from') return 'from';
  if (name === 'to') return 'until';
  return FILTERS.find((f) => f.name === name)?.label.toLowerCase() ?? name;
}

function valueLabel(name: string, value: string): string {
  return name === 'from' || name === 'to' ? new Date(value).toLocaleString() : value;
}

/** The filters that name an admin object, shown by its name in a chip. */
const NAMED: Record<string, Kind> = { api_key_id: 'api-key', virtual_key: 'virtual-key', config: 'config', prompt: 'prompt' };

function ChipValue({ name, value }: { name: string; value: string }) {
  const kind = NAMED[name];
  return kind ? <NamedValue kind={kind} value={value} /> : <strong>{valueLabel(name, value)}</strong>;
}

function NamedValue({ kind, value }: { kind: Kind; value: string }) {
  const named = useName(kind, value);
  return <strong title={value}>{named && 'name' in named ? named.name : value}</strong>;
}

export function LogsPage({ location }: { location: Location }) {
  const filters = useMemo(() => filtersOf(location.query), [location.search]);
  const filterQuery = toQuery(filters);
  const openId = location.path.startsWith('/logs/') ? decodeURIComponent(location.path.slice(6)) : null;
  const listPath = `/logs${filterQuery ? `?${filterQuery}` : ''}`;

  const [rows, setRows] = useState<LogRow[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [pollError, setPollError] = useState<string | null>(null);
  const [paused, setPaused] = useState(false);
  const [announcement, setAnnouncement] = useState('');
  const [freshIds, setFreshIds] = useState<Set<string>>(new Set());
  const [updatedAt, setUpdatedAt] = useState<Date | null>(null);
  const rowsRef = useRef<LogRow[]>([]);
  rowsRef.current = rows;
  const generation = useRef(0);

  // Requests as clients sent them; the rows nested under one (failed tries, tool rounds and calls) open beneath it.
  const kinds = filters.some(([name]) => name === 'kind' || name === 'parent_id') ? '' : '&kind=request';
  const pagePath = (cursor?: string) =>
    `/v1/logs?limit=${PAGE}&include_bodies=false${kinds}${filterQuery ? `&${filterQuery}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;

  const load = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    setError(null);
    try {
      const page = await api<ListPage<LogRow>>('GET', pagePath());
      if (mine !== generation.current) return;
      setRows(page.data);
      setNextCursor(page.next_cursor);
      setFreshIds(new Set());
      setUpdatedAt(new Date());
    } catch (e) {
      if (mine === generation.current) setError((e as ApiError).message);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, [filterQuery]);

  useEffect(() => {
    void load();
  }, [load]);

  // Live updates: the first page again, and the rows newer than the newest shown on top. After
  // a failed load (the gateway or its database down) the same tick tries again, quietly, so
  // the list comes back by itself when they do.
  useEffect(() => {
    if (paused) return;
    // The poll catches its own failures (pollError): its promise is not awaited.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    const timer = setInterval(async () => {
      if (document.hidden) return;
      const mine = generation.current;
      try {
        const page = await api<ListPage<LogRow>>('GET', pagePath());
        if (mine !== generation.current) return;
        setPollError(null);
        if (error) {
          setError(null);
          setRows(page.data);
          setNextCursor(page.next_cursor);
          setUpdatedAt(new Date());
          return;
        }
        setUpdatedAt(new Date());
        const current = rowsRef.current;
        const newest = current[0]?.id ?? '';
        const added = page.data.filter((row) => row.id > newest);
        if (added.length === 0) return;
        if (added.length === page.data.length && current.length > 0) {
          // More new rows than a page: start again from this page (the rows between are a page away).
          setRows(page.data);
          setNextCursor(page.next_cursor);
        } else {
          setRows([...added, ...current]);
          if (current.length === 0) setNextCursor(page.next_cursor);
        }
        setFreshIds(new Set(added.map((row) => row.id)));
        setAnnouncement(`${added.length} new ${added.length === 1 ? 'request' : 'requests'}`);
      } catch (e) {
        if (mine === generation.current && !error) setPollError((e as ApiError).message);
      }
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [paused, error, filterQuery]);

  const loadMore = async () => {
    if (!nextCursor) return;
    setLoadingMore(true);
    try {
      const page = await api<ListPage<LogRow>>('GET', pagePath(nextCursor));
      setRows([...rowsRef.current, ...page.data]);
      setNextCursor(page.next_cursor);
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setLoadingMore(false);
    }
  };

  const close = useCallback(() => {
    const id = openId;
    navigate(listPath);
    // Back to the row that was open.
    requestAnimationFrame(() => document.querySelector<HTMLAnchorElement>(`a[data-log-id="${id}"]`)?.focus());
  }, [openId, listPath]);

  const openPath = (id: string) => `/logs/${id}${filterQuery ? `?${filterQuery}` : ''}`;

  // The rows nested under each request opened, read when it is opened.
  const [nested, setNested] = useState<Map<string, NestedState>>(new Map());
  useEffect(() => setNested(new Map()), [filterQuery]);
  const toggleNested = (id: string) => {
    if (nested.has(id)) {
      const next = new Map(nested);
      next.delete(id);
      setNested(next);
      return;
    }
    setNested(new Map(nested).set(id, 'loading'));
    api<ListPage<LogRow>>('GET', `/v1/logs?parent_id=${encodeURIComponent(id)}&include_bodies=false&limit=${NESTED_LIMIT}`).then(
      (page) => setNested((current) => (current.has(id) ? new Map(current).set(id, page.data) : current)),
      (e: ApiError) => setNested((current) => (current.has(id) ? new Map(current).set(id, { error: e.message }) : current)),
    );
  };

  const onTableKey = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    const links = [...document.querySelectorAll<HTMLAnchorElement>('a[data-log-id]')];
    const index = links.indexOf(document.activeElement as HTMLAnchorElement);
    if (index === -1) return;
    event.preventDefault();
    links[Math.max(0, Math.min(links.length - 1, index + (event.key === 'ArrowDown' ? 1 : -1)))]?.focus();
  };

  const failing = error !== null || pollError !== null;
  return (
    <div class={openId ? 'logs with-detail' : 'logs'}>
      <section class="logs-list" aria-labelledby="logs-title">
        <div class="page-head">
          <h1 id="logs-title">Request log</h1>
          <div class="live">
            <span class={paused ? 'live-dot paused' : failing ? 'live-dot failing' : 'live-dot'} aria-hidden="true" data-testid="live-dot" />
            <span>
              {paused ? 'Live updates paused' : failing ? `Not updating: trying again every ${POLL_MS / 1000} s` : `Live: checking every ${POLL_MS / 1000} s`}
            </span>
            {updatedAt && <span class="muted"> · updated {updatedAt.toLocaleTimeString()}</span>}
            <button type="button" class="secondary" aria-pressed={paused} onClick={() => setPaused(!paused)}>
              {paused ? 'Resume' : 'Pause'}
            </button>
            <ExportButtons path={`/v1/logs/export?${filterQuery}`} what="these requests" />
          </div>
        </div>
        <FilterForm key={filterQuery} filters={filters} path="/logs" />
        {filters.length > 0 && (
          <ul class="chips" aria-label="Active filters">
            {filters.map(([name, value]) => (
              <li key={name}>
                <span>
                  {labelOf(name)}: <ChipValue name={name} value={value} />
                </span>
                <button
                  type="button"
                  class="chip-remove"
                  aria-label={`Remove filter ${labelOf(name)} ${valueLabel(name, value)}`}
                  onClick={() => navigate(`/logs?${toQuery(filters.filter(([n]) => n !== name))}`)}
                >
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        <p class="visually-hidden" aria-live="polite">
          {announcement}
        </p>
        {pollError && !error && (
          <p class="warning" role="status">
            Live update failed: {pollError} Trying again in a few seconds.
          </p>
        )}
        {error ? (
          <div class="error-box" role="alert">
            <p>{error}</p>
            {!paused && <p class="muted small-text">Trying again every {POLL_MS / 1000} s; the list comes back by itself.</p>}
            <button type="button" onClick={() => void load()}>
              Try again now
            </button>
          </div>
        ) : loading && rows.length === 0 ? (
          <p class="muted" role="status">
            Loading requests…
          </p>
        ) : rows.length === 0 ? (
          <EmptyLog filters={filters} />
        ) : (
          <>
            <div class="table-wrap">
              <table class="data log-table" onKeyDown={onTableKey}>
                <caption class="visually-hidden">Requests, newest first. Open one with Enter on its time; arrow keys move between rows.</caption>
                <thead>
                  <tr>
                    <th scope="col">
                      Time <span class="zone-label">({zoneName(displayZone())})</span>
                    </th>
                    <th scope="col" class="col-operation">
                      Operation
                    </th>
                    <th scope="col" class="col-provider">
                      Provider
                    </th>
                    <th scope="col">Model</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num col-tokens">
                      Tokens
                    </th>
                    <th scope="col" class="num">
                      Cost
                    </th>
                    <th scope="col" class="num">
                      Latency
                    </th>
                    <th scope="col">User</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => (
                    <Fragment key={row.id}>
                      <LogTableRow
                        row={row}
                        openPath={openPath}
                        selected={row.id === openId}
                        fresh={freshIds.has(row.id)}
                        expander={row.nested_rows > 0 ? <Expander row={row} open={nested.has(row.id)} onToggle={() => toggleNested(row.id)} /> : null}
                      />
                      <NestedRows state={nested.get(row.id)} parent={row} openPath={openPath} openId={openId} />
                    </Fragment>
                  ))}
                </tbody>
              </table>
            </div>
            <div class="more">
              {nextCursor ? (
                <button type="button" class="secondary" onClick={loadMore} disabled={loadingMore}>
                  {loadingMore ? 'Loading…' : `Load ${PAGE} older requests`}
                </button>
              ) : (
                <p class="muted">That is the oldest request{filters.length ? ' matching these filters' : ''}.</p>
              )}
            </div>
          </>
        )}
      </section>
      {openId && <LogDetail id={openId} onClose={close} filterPath={(extra) => `/logs?${toQuery(extra)}`} />}
    </div>
  );
}

/**
 * What to try when nothing matches, as it applies: a wider range only when one is set, other
 * words (searched as word beginnings) only when searching.
 */
function emptyAdvice(filters: [string, string][]): string {
  const names = new Set(filters.map(([name]) => name));
  const ranged = names.has('from') || names.has('to');
  const others = [...names].filter((name) => name !== 'from' && name !== 'to' && name !== 'q').length;
  const tips = [
    ...(names.has('q') ? ['search other words (each word matches as a beginning: "refund" finds "refunds")'] : []),
    ...(ranged ? ['widen the time range'] : []),
    ...(others ? ['remove a filter'] : []),
  ];
  return tips.length ? `Try to ${tips.join(', or ')}.` : '';
}

/** A search's match in a row: the text around it, the words found marked. */
function Snippet({ snippet }: { snippet: SearchSnippet }) {
  const pieces: ComponentChildren[] = [];
  let at = 0;
  snippet.highlights.forEach(([start, end], i) => {
    pieces.push(snippet.text.slice(at, start), <mark key={i}>{snippet.text.slice(start, end)}</mark>);
    at = end;
  });
  pieces.push(snippet.text.slice(at));
  return (
    <div class="snippet" data-testid="snippet">
      <span class="muted">{snippet.in === 'request' ? 'request: ' : 'answer: '}</span>
      {pieces}
    </div>
  );
}

function EmptyLog({ filters }: { filters: [string, string][] }) {
  if (filters.length > 0) {
    return (
      <div class="empty" data-testid="empty-log">
        <h2>No requests match these filters</h2>
        <p>{emptyAdvice(filters)}</p>
        <button type="button" class="secondary" onClick={() => navigate('/logs')}>
          Clear all filters
        </button>
      </div>
    );
  }
  const origin = window.location.origin;
  return (
    <div class="empty">
      <h2>No requests yet</h2>
      <p>Send one through the gateway, for example with curl, and it appears here within a few seconds:</p>
      <pre class="code">{`curl ${origin}/v1/chat/completions \\
  -H "x-gateway-api-key: $GATEWAY_KEY" \\
  -H "x-gateway-virtual-key: openai-prod" \\
  -H "content-type: application/json" \\
  -d '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello"}]}'`}</pre>
      <p class="muted">
        No virtual key yet? Create one under{' '}
        <a href={href('/virtual-keys')} onClick={(e) => routeClick(e, '/virtual-keys')}>
          Virtual keys
        </a>
        .
      </p>
    </div>
  );
}

/** Quick time ranges: a start that many minutes before the moment the filter is applied. */
const RANGES = [
  { value: '', label: 'Any time', minutes: 0 },
  { value: '15m', label: 'Last 15 minutes', minutes: 15 },
  { value: '1h', label: 'Last hour', minutes: 60 },
  { value: '24h', label: 'Last 24 hours', minutes: 1440 },
  { value: '7d', label: 'Last 7 days', minutes: 10_080 },
  { value: '30d', label: 'Last 30 days', minutes: 43_200 },
  { value: 'custom', label: 'Custom range', minutes: 0 },
] as const;

/** The filters in the compact bar; the rest are behind "More filters". */
const IN_BAR = new Set(['q', 'status', 'model', 'from', 'to']);

/**
 * The filter bar: search, time range, status and model in one row above the list, the rest
 * behind "More filters" (open while one of them is set). Its values go to the URL (so a view
 * can be shared), the list reads them from there.
 */
export function FilterForm({ filters, path }: { filters: [string, string][]; path: string }) {
  const initial = Object.fromEntries(filters);
  const [values, setValues] = useState<Record<string, string>>(() => ({
    ...Object.fromEntries(FILTERS.map((f) => [f.name, initial[f.name] ?? ''])),
    from: toLocalInput(initial.from),
    to: toLocalInput(initial.to),
  }));
  const [range, setRange] = useState<string>(initial.from || initial.to ? 'custom' : '');
  const [metadata, setMetadata] = useState<{ key: string; value: string }[]>(() => {
    const pairs = filters.filter(([name]) => name.startsWith('metadata.')).map(([name, value]) => ({ key: name.slice(9), value }));
    return pairs.length ? pairs : [{ key: '', value: '' }];
  });
  const moreActive = filters.filter(([name]) => !IN_BAR.has(name) && name !== 'operation').length;
  const [more, setMore] = useState(moreActive > 0);
  const [problem, setProblem] = useState<string | null>(null);

  const set = (name: string) => (event: Event) => setValues({ ...values, [name]: (event.target as HTMLInputElement).value });
  const text = (name: (typeof FILTERS)[number]['name'], type: 'text' | 'search' = 'text') => (
    <div class={`field f-${name}`} key={name}>
      <label for={`f-${name}`}>{FILTERS.find((f) => f.name === name)!.label}</label>
      <input
        id={`f-${name}`}
        name={name}
        // Preact's typings list fewer input types than HTML has (no `search`); tsc needs the assertion.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
        type={type as 'text'}
        placeholder={PLACEHOLDERS[name]}
        value={values[name]}
        onInput={set(name)}
        autoComplete="off"
        spellcheck={false}
      />
    </div>
  );
  const picker = (name: string, kind: Kind) => (
    <NamePicker
      key={name}
      kind={kind}
      id={`f-${name}`}
      label={FILTERS.find((f) => f.name === name)!.label}
      value={values[name]}
      onChange={(value) => setValues({ ...values, [name]: value })}
    />
  );

  const submit = (event: Event) => {
    event.preventDefault();
    const out: [string, string][] = [];
    const preset = RANGES.find((r) => r.value === range);
    const from = range === 'custom' ? fromLocalInput(values.from) : preset?.minutes ? new Date(Date.now() - preset.minutes * 60_000).toISOString() : undefined;
    const to = range === 'custom' ? fromLocalInput(values.to) : undefined;
    if (from && to && from >= to) {
      setProblem('The start of the time range must be before its end.');
      return;
    }
    if (values.status && !/^(?:[1-5]\d\d|[1-5]xx|error)(?:,(?:[1-5]\d\d|[1-5]xx|error))*$/.test(values.status.replace(/\s/g, ''))) {
      setProblem('The status is codes (200, 429), classes (4xx, 5xx) or error, separated by commas.');
      return;
    }
    if (values.api_key_id && !/^[0-9a-f-]{36}$/i.test(values.api_key_id.trim())) {
      setProblem('The API key id is the id shown on the API keys page (a UUID), not the key itself.');
      return;
    }
    if (values.batch_id && !/^(batch|msgbatch)_[0-9a-f]{32}$/.test(values.batch_id.trim())) {
      setProblem('The batch is its id as the Batches page shows it: batch_ or msgbatch_ and 32 hexadecimal digits.');
      return;
    }
    setProblem(null);
    if (from) out.push(['from', from]);
    if (to) out.push(['to', to]);
    for (const f of FILTERS) if (values[f.name]?.trim()) out.push([f.name, f.name === 'status' ? values.status.replace(/\s/g, '') : values[f.name].trim()]);
    const operation = initial.operation;
    if (operation) out.push(['operation', operation]);
    for (const pair of metadata) if (pair.key.trim() && pair.value !== '') out.push([`metadata.${pair.key.trim()}`, pair.value]);
    navigate(`${path}${out.length ? `?${toQuery(out)}` : ''}`);
  };

  return (
    <form class="filters filter-bar" onSubmit={submit} aria-label="Filter requests">
      <div class="filter-row">
        {text('q', 'search')}
        <div class="field f-range">
          <label for="f-range">Time range</label>
          <select id="f-range" value={range} onChange={(e) => setRange((e.target as HTMLSelectElement).value)}>
            {RANGES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </div>
        {text('status')}
        {text('model')}
        <div class="filter-actions">
          <button type="submit">Apply filters</button>
          <button type="button" class="secondary" aria-expanded={more} aria-controls="more-filters" onClick={() => setMore(!more)}>
            {more ? 'Fewer filters' : `More filters${moreActive ? ` (${moreActive})` : ''}`}
          </button>
          <button type="button" class="secondary" onClick={() => navigate(path)}>
            Clear
          </button>
        </div>
      </div>
      {range === 'custom' && (
        <div class="filter-row custom-range">
          <div class="field">
            <label for="f-from">From</label>
            <input id="f-from" type="datetime-local" value={values.from} onInput={set('from')} />
          </div>
          <div class="field">
            <label for="f-to">Until</label>
            <input id="f-to" type="datetime-local" value={values.to} onInput={set('to')} />
          </div>
          <p class="muted small-text zone-note">Times in {zoneName(displayZone())}</p>
        </div>
      )}
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      <div id="more-filters" class="more-filters" hidden={!more}>
        <div class="filter-grid">
          {text('user')}
          {text('model_contains')}
          {text('provider')}
          {picker('api_key_id', 'api-key')}
          {picker('virtual_key', 'virtual-key')}
          {picker('config', 'config')}
          {picker('prompt', 'prompt')}
          {text('trace_id')}
          {text('batch_id')}
        </div>
        <fieldset class="metadata-filters">
          <legend>Metadata</legend>
          {metadata.map((pair, i) => (
            <div class="pair" key={i}>
              <div class="field">
                <label for={`f-meta-key-${i}`}>Key</label>
                <input
                  id={`f-meta-key-${i}`}
                  value={pair.key}
                  placeholder="e.g. team"
                  autoComplete="off"
                  onInput={(e) => setMetadata(metadata.map((p, j) => (j === i ? { ...p, key: (e.target as HTMLInputElement).value } : p)))}
                />
              </div>
              <div class="field">
                <label for={`f-meta-value-${i}`}>Value</label>
                <input
                  id={`f-meta-value-${i}`}
                  value={pair.value}
                  placeholder="e.g. search"
                  autoComplete="off"
                  onInput={(e) => setMetadata(metadata.map((p, j) => (j === i ? { ...p, value: (e.target as HTMLInputElement).value } : p)))}
                />
              </div>
              {metadata.length > 1 && (
                <button
                  type="button"
                  class="secondary small"
                  aria-label={`Remove metadata filter ${i + 1}`}
                  onClick={() => setMetadata(metadata.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              )}
            </div>
          ))}
          <button type="button" class="link-button" onClick={() => setMetadata([...metadata, { key: '', value: '' }])}>
            Add a metadata filter
          </button>
        </fieldset>
      </div>
    </form>
  );
}

/** What a row nested under a request is, in words. */
function nestedLabel(row: LogRow): string {
  if (row.kind === 'tool_round') return 'tool round';
  if (row.kind === 'tool_call') return 'tool call';
  if (row.retry_count > 0) return `failed retry ${row.retry_count}`;
  return row.target_index !== null ? `failed try (target ${row.target_index})` : 'failed try';
}

/** The button that opens the rows nested under a request (its failed tries, tool rounds and calls). */
function Expander({ row, open, onToggle }: { row: LogRow; open: boolean; onToggle: () => void }) {
  const what = row.failed_attempts > 0 ? `${row.failed_attempts} failed ${row.failed_attempts === 1 ? 'try' : 'tries'}` : null;
  return (
    <button
      type="button"
      class="expander"
      aria-expanded={open}
      aria-controls={`nested-${row.id}`}
      aria-label={`${open ? 'Hide' : 'Show'} the ${row.nested_rows} ${row.nested_rows === 1 ? 'row' : 'rows'} nested under this request`}
      title={what ? `${what} before the answer` : 'Tool rounds and calls'}
      onClick={onToggle}
    >
      <span aria-hidden="true">{open ? '▾' : '▸'}</span> {row.nested_rows}
    </button>
  );
}

/** The rows nested under an open request, beneath its row. */
function NestedRows({
  state,
  parent,
  openPath,
  openId,
}: {
  state: NestedState | undefined;
  parent: LogRow;
  openPath: (id: string) => string;
  openId: string | null;
}) {
  if (state === undefined) return null;
  if (state === 'loading' || 'error' in state) {
    return (
      <tr class="nested" id={`nested-${parent.id}`}>
        <td colSpan={9} class={state === 'loading' ? 'muted' : 'warning'} role="status">
          {state === 'loading' ? 'Loading the rows nested under this request…' : `The nested rows could not be read: ${state.error}`}
        </td>
      </tr>
    );
  }
  // Oldest first, as they happened.
  return (
    <>
      {[...state].reverse().map((row, i) => (
        <LogTableRow key={row.id} row={row} openPath={openPath} selected={row.id === openId} nestedId={i === 0 ? `nested-${parent.id}` : undefined} />
      ))}
    </>
  );
}

/** One row of the log table: a request, or (`nestedId` given or a nested kind) a row nested under one. */
function LogTableRow({
  row,
  openPath,
  selected,
  fresh = false,
  expander = null,
  nestedId,
}: {
  row: LogRow;
  openPath: (id: string) => string;
  selected: boolean;
  fresh?: boolean;
  expander?: ComponentChildren;
  nestedId?: string;
}) {
  const nested = row.kind !== 'request';
  const recovered = !nested && row.failed_attempts > 0 && row.status_code < 400;
  return (
    <tr
      id={nestedId}
      class={[selected ? 'selected' : '', fresh ? 'fresh' : '', nested ? 'nested' : ''].join(' ')}
      data-kind={row.kind}
      onClick={(e) => {
        if ((e.target as HTMLElement).closest('a, button')) return;
        navigate(openPath(row.id));
      }}
    >
      <td data-label="Time">
        {expander}
        {nested && <span class="nested-kind">{nestedLabel(row)}</span>}
        <a
          href={href(openPath(row.id))}
          data-log-id={row.id}
          aria-current={selected ? 'true' : undefined}
          title={row.created_at}
          onClick={(e) => routeClick(e, openPath(row.id))}
        >
          {formatTime(row.created_at)}
        </a>
      </td>
      <td data-label="Operation" class="col-operation">
        {row.operation}
        {row.is_stream && <span class="tag">stream</span>}
        {row.batch_id && (
          <span class="tag" title={`Line ${row.custom_id ?? ''} of batch ${row.batch_id}`}>
            batch
          </span>
        )}
        {row.snippet && <Snippet snippet={row.snippet} />}
      </td>
      <td data-label="Provider" class="col-provider">
        {row.provider ?? '—'}
      </td>
      <td data-label="Model" class="model">
        {row.model ?? '—'}
      </td>
      <td data-label="Status">
        <span class={statusClass(row.status_code)}>{row.status_code}</span>
        {row.cache_status === 'HIT' && <span class="tag">cache hit</span>}
        {recovered && (
          <span class="tag recovered" title={`Answered after ${row.failed_attempts} failed ${row.failed_attempts === 1 ? 'try' : 'tries'}`}>
            recovered
          </span>
        )}
      </td>
      <td data-label="Tokens" class="num col-tokens">
        {formatInt(row.total_tokens ?? (row.prompt_tokens ?? 0) + (row.completion_tokens ?? 0))}
      </td>
      <td data-label="Cost" class="num">
        {row.cost_usd === null && row.prompt_tokens === null && row.completion_tokens === null && row.status_code >= 400 ? (
          <span class="muted" title={row.status_code === 446 ? 'Not sent to the provider: a guardrail denied it' : 'Failed without using the model'}>
            no cost
          </span>
        ) : row.cost_usd === null ? (
          <span class="muted" title="No price is known for this model">
            no price
          </span>
        ) : (
          formatCost(row.cost_usd)
        )}
      </td>
      <td data-label="Latency" class="num">
        {formatMs(row.latency_ms)}
      </td>
      <td data-label="User">{row.user ?? <span class="muted">—</span>}</td>
    </tr>
  );
}
