import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Batch, type BatchLines, type BatchPage } from '../api';
import { SpentText } from '../components/budget-status';
import { ACTIVITY_RANGES, DEFAULT_ACTIVITY_RANGE, PeriodSelect, replaceQuery, RouteLink, usePeriod } from '../components/activity-view';
import { ErrorRetry } from '../components/error-retry';
import { formatDateTime, formatInt, formatTime } from '../format';
import type { Location } from '../router';
import { displayZone, zoneName } from '../time-zone';

const PAGE = 50;
/** How often a page showing a running batch reads it again. */
const POLL_MS = 4000;

/** The statuses of a batch still running (its lines may change). */
const RUNNING = ['validating', 'in_progress', 'finalizing', 'cancelling'];
const ENDED = ['completed', 'failed', 'expired', 'cancelled'];
/** The status filter: a group, or one status; the URL carries `value`, the API the statuses. */
const STATUS_FILTERS: { value: string; label: string; statuses: string }[] = [
  { value: '', label: 'Any status', statuses: '' },
  { value: 'running', label: 'Running', statuses: RUNNING.join(',') },
  { value: 'ended', label: 'Ended', statuses: ENDED.join(',') },
  ...[...RUNNING, ...ENDED].map((status) => ({ value: status, label: statusLabel(status), statuses: status })),
];
const SHAPES: Record<Batch['shape'], { label: string; routes: string }> = {
  openai: { label: 'OpenAI', routes: '/v1/batches' },
  anthropic: { label: 'Anthropic', routes: '/v1/messages/batches' },
};

/** A batch's lines by status, in the order they are told. */
const LINE_STATUSES: { status: keyof Omit<BatchLines, 'total'>; label: string; meaning: string }[] = [
  { status: 'succeeded', label: 'Succeeded', meaning: 'Answered with a success' },
  { status: 'failed', label: 'Failed', meaning: 'Answered with an error status (the provider or the gateway refused it)' },
  { status: 'errored', label: 'Errored', meaning: 'Not answered: an invalid line, a budget reached, or its instance stopped mid-flight' },
  { status: 'expired', label: 'Expired', meaning: 'Not sent within the completion window' },
  { status: 'cancelled', label: 'Cancelled', meaning: 'Not sent: the batch was cancelled' },
  { status: 'sending', label: 'Sending', meaning: 'Sent, the answer not in yet' },
  { status: 'pending', label: 'Pending', meaning: 'Not sent yet' },
];

function statusLabel(status: string): string {
  const text = status.replace(/_/g, ' ');
  return text[0].toUpperCase() + text.slice(1);
}

const isRunning = (batch: Batch) => RUNNING.includes(batch.status);
const ended = (lines: BatchLines) => lines.total - lines.pending - lines.sending;
const logsPath = (id: string) => `/logs?${new URLSearchParams({ batch_id: id })}`;

/**
 * Batches (`GET /v1/analytics/batches`): those created in the period, newest first, with their
 * progress, lines and cost so far; `/batches/<id>` is one batch. Batches are created by API
 * keys (`/v1/batches`, `/v1/messages/batches`); the dashboard reads them. A page showing a
 * running batch reads it again every few seconds.
 */
export function BatchesPage({ location }: { location: Location }) {
  const id = location.path.startsWith('/batches/') ? decodeURIComponent(location.path.slice('/batches/'.length)) : null;
  if (id) return <BatchView id={id} />;
  return <BatchList query={location.query} />;
}

function BatchList({ query }: { query: URLSearchParams }) {
  const range = ACTIVITY_RANGES[query.get('range') ?? ''] ? query.get('range')! : DEFAULT_ACTIVITY_RANGE;
  const status = STATUS_FILTERS.find((f) => f.value === (query.get('status') ?? '')) ?? STATUS_FILTERS[0];
  const shape = query.get('shape') === 'openai' || query.get('shape') === 'anthropic' ? query.get('shape')! : '';
  const period = usePeriod(range);
  const [page, setPage] = useState<BatchPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loads, setLoads] = useState(0);

  const params = (limit: number, cursor: string | null) =>
    new URLSearchParams([
      ['from', period.from],
      ['to', period.to],
      ['limit', String(limit)],
      ...(status.statuses ? [['status', status.statuses]] : []),
      ...(shape ? [['shape', shape]] : []),
      ...(cursor ? [['cursor', cursor]] : []),
    ]);

  useEffect(() => {
    let live = true;
    setError(null);
    setPage(null);
    api<BatchPage>('GET', `/v1/analytics/batches?${params(PAGE, null)}`).then(
      (found) => live && setPage(found),
      (e: ApiError) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [period, status.value, shape, loads]);

  // While a batch shown runs: the rows shown, read again.
  const running = page?.data.some(isRunning) ?? false;
  const shown = page?.data.length ?? 0;
  useEffect(() => {
    if (!running) return;
    let live = true;
    const timer = setInterval(() => {
      if (document.hidden) return;
      api<BatchPage>('GET', `/v1/analytics/batches?${params(Math.min(Math.max(shown, PAGE), 500), null)}`).then(
        (found) => live && setPage(found),
        () => undefined,
      );
    }, POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [running, shown, period, status.value, shape]);

  const more = async () => {
    try {
      const next = await api<BatchPage>('GET', `/v1/analytics/batches?${params(PAGE, page!.next_cursor)}`);
      setPage({ ...next, data: [...page!.data, ...next.data] });
    } catch (e) {
      setError((e as ApiError).message);
    }
  };

  const setQuery = (changes: Record<string, string>) => replaceQuery('/batches', query, changes);

  const rangeLabel = ACTIVITY_RANGES[range].label;
  return (
    <div class="batches">
      <div class="page-head">
        <h1>Batches</h1>
      </div>
      <p class="intro">
        Batches of requests sent by API keys through <code>/v1/batches</code> (OpenAI's shape) and <code>/v1/messages/batches</code> (Anthropic's), each line
        run as a request of its own: its progress, its lines and what they cost so far.
      </p>
      <form class="period" aria-label="Filter batches" onSubmit={(e) => e.preventDefault()}>
        <PeriodSelect id="b-period" range={range} onChange={(value) => setQuery({ range: value })} />
        <div class="field">
          <label for="b-status">Status</label>
          <select id="b-status" value={status.value} onChange={(e) => setQuery({ status: (e.target as HTMLSelectElement).value })}>
            {STATUS_FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="b-shape">Shape</label>
          <select id="b-shape" value={shape} onChange={(e) => setQuery({ shape: (e.target as HTMLSelectElement).value })}>
            <option value="">Both</option>
            {Object.entries(SHAPES).map(([value, { label, routes }]) => (
              <option key={value} value={value}>
                {label} ({routes})
              </option>
            ))}
          </select>
        </div>
      </form>
      {error && <ErrorRetry message={error} onRetry={() => setLoads((n) => n + 1)} />}
      {page === null ? (
        !error && (
          <p class="muted" role="status">
            Loading…
          </p>
        )
      ) : page.data.length === 0 ? (
        <div class="empty">
          <h2>{status.value || shape ? 'No batches match these filters' : 'No batches yet'}</h2>
          <p>
            No batch was created in {rangeLabel.toLowerCase()}
            {status.value || shape ? ' with this status and shape' : ''}.
          </p>
        </div>
      ) : (
        <>
          <p class="muted small-text" data-testid="batch-count">
            {formatInt(page.data.length)} {page.data.length === 1 ? 'batch' : 'batches'}
            {page.next_cursor ? ' shown' : ''} · created in {rangeLabel.toLowerCase()}
            {running && ' · updating while they run'}
          </p>
          <div class="table-wrap">
            <table class="data resource-table batch-table">
              <caption class="visually-hidden">Batches created in {rangeLabel.toLowerCase()}, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Batch</th>
                  <th scope="col">Status</th>
                  <th scope="col">Runs</th>
                  <th scope="col" class="num">
                    Lines
                  </th>
                  <th scope="col" class="num">
                    Cost
                  </th>
                  <th scope="col">
                    Created <span class="zone-label">({zoneName(displayZone())})</span>
                  </th>
                  <th scope="col">API key</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((batch) => (
                  <tr key={batch.id} data-batch-id={batch.id}>
                    <td data-label="Batch">
                      <RouteLink to={`/batches/${encodeURIComponent(batch.id)}`}>
                        <code>{batch.id}</code>
                      </RouteLink>
                      <span class="tag">{SHAPES[batch.shape].label}</span>
                    </td>
                    <td data-label="Status">
                      <StatusTag batch={batch} />
                      <Progress lines={batch.lines} />
                    </td>
                    <td data-label="Runs">{batch.mode === 'native' ? `at ${batch.provider ?? 'its provider'}` : 'by the gateway'}</td>
                    <td data-label="Lines" class="num">
                      <LineTotals lines={batch.lines} />
                    </td>
                    <td data-label="Cost" class="num">
                      <BatchCost batch={batch} />
                    </td>
                    <td data-label="Created">
                      <time dateTime={batch.created_at} title={formatDateTime(batch.created_at)}>
                        {formatTime(batch.created_at)}
                      </time>
                    </td>
                    <td data-label="API key">{batch.api_key_name ?? (batch.api_key_id ? <code>{batch.api_key_id}</code> : '—')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="more">
            {page.next_cursor ? (
              <button type="button" class="secondary" onClick={more}>
                Load {PAGE} older batches
              </button>
            ) : (
              <p class="muted">That is the oldest batch of the period{status.value || shape ? ' matching these filters' : ''}.</p>
            )}
          </div>
        </>
      )}
    </div>
  );
}

/** One batch: its status and progress, lines by status, tokens and cost so far, times, key, files and its lines in the log. */
function BatchView({ id }: { id: string }) {
  const [batch, setBatch] = useState<Batch | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loads, setLoads] = useState(0);

  useEffect(() => {
    let live = true;
    setError(null);
    api<Batch>('GET', `/v1/analytics/batches/${encodeURIComponent(id)}`).then(
      (found) => live && setBatch(found),
      (e: ApiError) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [id, loads]);

  const running = batch !== null && isRunning(batch);
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => !document.hidden && setLoads((n) => n + 1), POLL_MS);
    return () => clearInterval(timer);
  }, [running]);

  const back = (
    <p class="small-text">
      <RouteLink to="/batches">← All batches</RouteLink>
    </p>
  );
  if (error && !batch)
    return (
      <section class="batch-view">
        {back}
        <div class="error-box" role="alert">
          <p>
            {error.status === 404
              ? `There is no batch ${id} that this sign-in may read (it may belong to another workspace or key).`
              : error.status === 400
                ? `${id} is not a batch id (batch_… or msgbatch_…).`
                : error.message}
          </p>
          {error.status !== 404 && error.status !== 400 && (
            <button type="button" onClick={() => setLoads((n) => n + 1)}>
              Try again
            </button>
          )}
        </div>
      </section>
    );
  if (!batch)
    return (
      <section class="batch-view">
        {back}
        <p class="muted" role="status">
          Loading the batch…
        </p>
      </section>
    );
  const shape = SHAPES[batch.shape];
  return (
    <section class="batch-view" aria-labelledby="batch-title">
      {back}
      <div class="page-head">
        <h1 id="batch-title">
          Batch <code>{batch.id}</code>
        </h1>
      </div>
      <div class="batch-state" data-testid="batch-state">
        <StatusTag batch={batch} />
        <Progress lines={batch.lines} wide />
        {running && <span class="muted small-text"> · updating every {POLL_MS / 1000} s while it runs</span>}
      </div>
      <p>
        <RouteLink to={logsPath(batch.id)}>Its lines in the request log</RouteLink>
        <span class="muted small-text"> · each line that ran is a request of its own, with its custom_id</span>
      </p>
      <dl class="facts" data-testid="batch-facts">
        <dt>Shape</dt>
        <dd>
          {shape.label} <span class="muted">({shape.routes})</span>
        </dd>
        <dt>Endpoint</dt>
        <dd>
          <code>{batch.endpoint}</code>
        </dd>
        <dt>Runs</dt>
        <dd>{batch.mode === 'native' ? `natively at ${batch.provider ?? 'its provider'}` : 'by the gateway, line by line'}</dd>
        <dt>API key</dt>
        <dd>
          {batch.api_key_name ?? '—'} {batch.api_key_id && <code class="muted small-text">{batch.api_key_id}</code>}
        </dd>
        <dt>Created</dt>
        <dd>
          <time dateTime={batch.created_at}>{formatDateTime(batch.created_at)}</time>
        </dd>
        {batch.in_progress_at && (
          <>
            <dt>In progress</dt>
            <dd>
              <time dateTime={batch.in_progress_at}>{formatDateTime(batch.in_progress_at)}</time>
            </dd>
          </>
        )}
        {batch.cancelling_at && (
          <>
            <dt>Cancel asked</dt>
            <dd>
              <time dateTime={batch.cancelling_at}>{formatDateTime(batch.cancelling_at)}</time>
            </dd>
          </>
        )}
        <dt>Ended</dt>
        <dd>{batch.ended_at ? <time dateTime={batch.ended_at}>{formatDateTime(batch.ended_at)}</time> : <span class="muted">not yet</span>}</dd>
        <dt>Expires</dt>
        <dd>
          <time dateTime={batch.expires_at}>{formatDateTime(batch.expires_at)}</time>{' '}
          <span class="muted small-text">(completion window {batch.completion_window})</span>
        </dd>
        <dt>Tokens</dt>
        <dd data-testid="batch-tokens">
          {formatInt(batch.prompt_tokens)} in / {formatInt(batch.completion_tokens)} out
        </dd>
        <dt>Cost so far</dt>
        <dd data-testid="batch-cost">
          <BatchCost batch={batch} />
        </dd>
        {batch.metadata && Object.keys(batch.metadata).length > 0 && (
          <>
            <dt>Metadata</dt>
            <dd>
              <ul class="inline-list">
                {Object.entries(batch.metadata).map(([key, value]) => (
                  <li key={key}>
                    {key}: {value}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
        {batch.errors && (
          <>
            <dt>Errors</dt>
            <dd>
              <ul class="inline-list">
                {batch.errors.map((e, i) => (
                  <li key={i}>
                    <code>{e.code}</code> {e.message}
                    {e.line !== null && e.line !== undefined && <span class="muted"> (line {e.line})</span>}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
      </dl>
      <h2>Lines</h2>
      <table class="data compact batch-lines" data-testid="batch-lines">
        <caption class="visually-hidden">The batch's lines by status</caption>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Lines
            </th>
            <th scope="col">Meaning</th>
          </tr>
        </thead>
        <tbody>
          {LINE_STATUSES.map(({ status, label, meaning }) => (
            <tr key={status} data-line-status={status} class={batch.lines[status] === 0 ? 'muted' : undefined}>
              <th scope="row">{label}</th>
              <td class="num">{formatInt(batch.lines[status])}</td>
              <td class="small-text">{meaning}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr data-line-status="total">
            <th scope="row">Total</th>
            <td class="num">{formatInt(batch.lines.total)}</td>
            <td />
          </tr>
        </tfoot>
      </table>
      <h2>Files</h2>
      <dl class="facts" data-testid="batch-files">
        <dt>Input</dt>
        <dd>{batch.input_file_id ? <code>{batch.input_file_id}</code> : <span class="muted">none: its requests were sent inline</span>}</dd>
        <dt>Output</dt>
        <dd>{batch.output_file_id ? <code>{batch.output_file_id}</code> : <span class="muted">{batch.ended_at ? 'none' : 'once it has ended'}</span>}</dd>
        <dt>Errors</dt>
        <dd>{batch.error_file_id ? <code>{batch.error_file_id}</code> : <span class="muted">{batch.ended_at ? 'none' : 'once it has ended'}</span>}</dd>
      </dl>
      <p class="muted small-text">
        {batch.shape === 'openai' ? (
          <>
            The files are read with the API key that created the batch: <code>GET /v1/files/&lt;id&gt;/content</code>.
          </>
        ) : (
          <>
            The results are read with the API key that created the batch: <code>GET /v1/messages/batches/{batch.id}/results</code>.
          </>
        )}
      </p>
    </section>
  );
}

function StatusTag({ batch }: { batch: Batch }) {
  return (
    <span class={`tag batch-status batch-${isRunning(batch) ? 'running' : batch.status}`} data-testid="batch-status-tag">
      {statusLabel(batch.status)}
    </span>
  );
}

/** The lines ended of all, as a bar: succeeded, failed (failed and errored), and the rest ended (expired, cancelled). */
function Progress({ lines, wide = false }: { lines: BatchLines; wide?: boolean }) {
  const done = ended(lines);
  const share = (n: number) => (lines.total ? `${(n / lines.total) * 100}%` : '0%');
  const failed = lines.failed + lines.errored;
  const other = lines.expired + lines.cancelled;
  return (
    <span class={wide ? 'batch-progress wide' : 'batch-progress'}>
      <span
        class="bar-track"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={lines.total}
        aria-valuenow={done}
        aria-label={`${done} of ${lines.total} lines ended`}
        data-testid="batch-progress"
      >
        <span class="bar bar-ok" style={{ width: share(lines.succeeded) }} />
        <span class="bar bar-failed" style={{ width: share(failed) }} />
        <span class="bar bar-other" style={{ width: share(other) }} />
      </span>
      <span class="bar-text">
        {formatInt(done)} / {formatInt(lines.total)}
      </span>
    </span>
  );
}

/** Succeeded and failed lines (failed and errored), and those that ended unsent (expired, cancelled) when any. */
function LineTotals({ lines }: { lines: BatchLines }) {
  const unsent = lines.expired + lines.cancelled;
  return (
    <span class="line-totals">
      <span data-testid="lines-succeeded">{formatInt(lines.succeeded)} succeeded</span>
      {' · '}
      <span data-testid="lines-failed">{formatInt(lines.failed + lines.errored)} failed</span>
      {unsent > 0 && (
        <span class="muted">
          {' · '}
          {formatInt(unsent)} {lines.cancelled ? 'cancelled' : 'expired'}
          {lines.cancelled && lines.expired ? ' or expired' : ''}
        </span>
      )}
    </span>
  );
}

/** The cost of the batch's log rows so far: priced, with the rows without a price apart (never a made-up $0). */
function BatchCost({ batch }: { batch: Batch }) {
  return <SpentText spent={batch.cost_usd ?? 0} unpriced={batch.unpriced_requests} />;
}
