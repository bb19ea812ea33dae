import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, ListPage, LogRow } from '../api';
import { ConversationView } from '../components/conversation-view';
import { JsonBlock } from '../components/json-block';
import { NamedLink } from '../components/named-link';
import { Guardrails, ToolCalls } from '../components/request-tables';
import { TokensAndCost } from '../components/tokens-and-cost';
import { Tabs } from '../components/tabs';
import { TraceView } from '../components/trace-view';
import { readConversation } from '../conversation';
import { formatCost, formatDateTime, formatInt, formatMs, statusClass } from '../format';
import type { RequestTotals } from '../api';
import { href, routeClick } from '../router';

const VIEWS = [
  { id: 'chat', label: 'Conversation' },
  { id: 'json', label: 'Raw JSON' },
];
/** The rows of a trace drawn at most (the API's page limit). */
const TRACE_LIMIT = 500;

/** The view last chosen, kept in this browser: who reads JSON keeps reading JSON. */
const VIEW_KEY = 'ai-gateway.request-view';
function preferredView(): string {
  try {
    return localStorage.getItem(VIEW_KEY) === 'json' ? 'json' : 'chat';
  } catch {
    return 'chat';
  }
}
function preferView(view: string): void {
  try {
    localStorage.setItem(VIEW_KEY, view);
  } catch {
    // Storage refused (private mode): the choice lasts while the detail is open.
  }
}

/**
 * One request: what was sent and answered, read as a conversation (the answer first) or as
 * the raw JSON (bodies pretty-printed; for a stream the API stores the assembled final
 * object), the headers as redacted by the server, the keys, config and prompt by name, the
 * rows of its trace (retries, fallbacks, tool-loop rounds, tool calls) as a waterfall, and
 * what it cost.
 */
export function LogDetail({ id, onClose, filterPath }: { id: string; onClose: () => void; filterPath: (filters: [string, string][]) => string }) {
  const [log, setLog] = useState<LogRow | null>(null);
  const [trace, setTrace] = useState<ListPage<LogRow> | null>(null);
  const [traceError, setTraceError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [view, setView] = useState(preferredView);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    let live = true;
    setLog(null);
    setTrace(null);
    setTraceError(null);
    setError(null);
    api<LogRow>('GET', `/v1/logs/${encodeURIComponent(id)}`)
      .then((row) => {
        if (!live) return;
        setLog(row);
        api<ListPage<LogRow>>('GET', `/v1/logs?trace_id=${encodeURIComponent(row.trace_id)}&include_bodies=false&limit=${TRACE_LIMIT}`).then(
          (page) => live && setTrace(page),
          (e: ApiError) => live && setTraceError(e.message),
        );
      })
      .catch((e: ApiError) => {
        if (!live) return;
        setError(e.status === 404 ? 'There is no request log with this id (it may have been mistyped, or the link is from another gateway).' : e.message);
      });
    return () => {
      live = false;
    };
  }, [id]);

  useEffect(() => {
    heading.current?.focus();
  }, [id, log !== null]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape' && !event.defaultPrevented) {
        event.preventDefault();
        onClose();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);

  const conversation = useMemo(() => (log ? readConversation(log) : null), [log]);

  const filterLink = (filters: [string, string][], label: string) => {
    const to = filterPath(filters);
    return (
      <a href={href(to)} onClick={(e) => routeClick(e, to)}>
        {label}
      </a>
    );
  };
  const requestsLink = (filters: [string, string][], what: string) => (
    <span class="small-text">
      {' · '}
      {filterLink(filters, 'its requests')}
      <span class="visually-hidden"> (of this {what})</span>
    </span>
  );

  const rawJson = log && (
    <>
      {log.error !== null && log.error !== undefined && <JsonBlock title="Error" value={log.error} />}
      <JsonBlock title="Request headers" value={log.request_headers} note="As received, with secrets replaced by [REDACTED] by the gateway." />
      <JsonBlock title="Request body" value={log.request_body} />
      <JsonBlock
        title="Response body"
        value={log.response_body}
        note={log.is_stream ? 'A stream: this is the final object assembled from its events.' : undefined}
      />
    </>
  );

  return (
    <aside class="detail" aria-labelledby="detail-title" role="region">
      <div class="detail-head">
        <h2 id="detail-title" ref={heading} tabIndex={-1}>
          {log ? `${log.operation} · ${log.model ?? 'no model'}` : 'Request'}
        </h2>
        <button type="button" class="secondary" onClick={onClose} aria-keyshortcuts="Escape">
          Close <span class="muted">(Esc)</span>
        </button>
      </div>
      {error ? (
        <p class="error-box" role="alert">
          {error}
        </p>
      ) : !log ? (
        <p class="muted" role="status">
          Loading the request…
        </p>
      ) : (
        <div class="detail-body">
          <NestedUnder log={log} filterLink={filterLink} />
          {log.totals && log.nested_rows > 0 && <RequestInAll log={log} totals={log.totals} />}
          <FailureText log={log} />
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={statusClass(log.status_code)}>{log.status_code}</span>
              {log.is_stream && <span class="tag">stream</span>}
              {log.cache_status && <span class="tag">cache {log.cache_status.toLowerCase()}</span>}
              {log.kind === 'request' && log.failed_attempts > 0 && log.status_code < 400 && (
                <span class="tag recovered">
                  recovered after {log.failed_attempts} failed {log.failed_attempts === 1 ? 'try' : 'tries'}
                </span>
              )}
            </dd>
            <dt>Time</dt>
            <dd>
              <time dateTime={log.created_at}>{formatDateTime(log.created_at)}</time>
            </dd>
            <dt>Provider</dt>
            <dd>{log.provider ?? '—'}</dd>
            <dt>Latency</dt>
            <dd>
              {formatMs(log.latency_ms)}
              {log.ttft_ms !== null && <span class="muted"> · first token after {formatMs(log.ttft_ms)}</span>}
            </dd>
            <dt>User</dt>
            <dd>{log.user ? filterLink([['user', log.user]], log.user) : '—'}</dd>
            <dt>Request id</dt>
            <dd>
              <code>{log.id}</code>
            </dd>
            <dt>Trace id</dt>
            <dd>{filterLink([['trace_id', log.trace_id]], log.trace_id)}</dd>
            {log.batch_id && (
              <>
                <dt>Batch</dt>
                <dd data-testid="log-batch">
                  <a href={href(`/batches/${log.batch_id}`)} onClick={(e) => routeClick(e, `/batches/${log.batch_id}`)}>
                    {log.batch_id}
                  </a>
                  <span class="small-text">
                    {' · '}
                    {filterLink([['batch_id', log.batch_id]], 'its lines')}
                  </span>
                </dd>
                <dt>Custom id</dt>
                <dd data-testid="log-custom-id">
                  <code>{log.custom_id ?? '—'}</code>
                </dd>
              </>
            )}
            <dt>API key</dt>
            <dd>
              {log.api_key_id ? (
                <>
                  <NamedLink kind="api-key" id={log.api_key_id} />
                  {requestsLink([['api_key_id', log.api_key_id]], 'API key')}
                </>
              ) : (
                '—'
              )}
            </dd>
            <dt>Virtual key</dt>
            <dd>
              {log.virtual_key_id ? (
                <>
                  <NamedLink kind="virtual-key" id={log.virtual_key_id} />
                  {requestsLink([['virtual_key', log.virtual_key_id]], 'virtual key')}
                </>
              ) : (
                '—'
              )}
            </dd>
            {log.config_id && (
              <>
                <dt>Config</dt>
                <dd>
                  <NamedLink kind="config" id={log.config_id} />
                </dd>
              </>
            )}
            {log.prompt_id && (
              <>
                <dt>Prompt</dt>
                <dd>
                  <NamedLink kind="prompt" id={log.prompt_id} /> <span class="muted">version {log.prompt_version}</span>
                </dd>
              </>
            )}
            <dt>Target</dt>
            <dd>
              {log.target_index ?? '—'} · {log.retry_count} {log.retry_count === 1 ? 'retry' : 'retries'}
            </dd>
            <dt>Metadata</dt>
            <dd>
              {Object.keys(log.metadata ?? {}).length === 0 ? (
                '—'
              ) : (
                <ul class="inline-list">
                  {Object.entries(log.metadata).map(([key, value]) => (
                    <li key={key}>{filterLink([[`metadata.${key}`, String(value)]], `${key}: ${value}`)}</li>
                  ))}
                </ul>
              )}
            </dd>
          </dl>

          {conversation ? (
            <Tabs
              label="How to show the request"
              tabs={VIEWS}
              selected={view}
              onSelect={(next) => {
                preferView(next);
                setView(next);
              }}
            >
              {view === 'chat' ? <ConversationView conversation={conversation} error={answerError(log)} streamed={log.is_stream} /> : rawJson}
            </Tabs>
          ) : (
            rawJson
          )}

          <section aria-labelledby="trace-title">
            <h3 id="trace-title">Trace</h3>
            {traceError ? (
              <p class="warning" role="status">
                The other rows of this trace could not be read: {traceError}
              </p>
            ) : trace === null ? (
              <p class="muted">Loading…</p>
            ) : trace.data.length <= 1 ? (
              <p class="muted">One row: no retry, fallback or tool call.</p>
            ) : (
              <>
                {trace.next_cursor && (
                  <p class="warning small-text">
                    This trace has more than {TRACE_LIMIT} rows: the newest {TRACE_LIMIT} are drawn.{' '}
                    {filterLink([['trace_id', log.trace_id]], 'All its rows in the log')}.
                  </p>
                )}
                <TraceView rows={trace.data} currentId={log.id} />
              </>
            )}
          </section>

          <TokensAndCost log={log} />

          {log.tool_calls && log.tool_calls.length > 0 && <ToolCalls calls={log.tool_calls} />}

          {log.guardrails && <Guardrails results={log.guardrails} />}
        </div>
      )}
    </aside>
  );
}

/** The error to show in place of (or beside) the answer: the log's error, else a failed answer's own. */
function answerError(log: LogRow): string | null {
  const text = errorText(log.error) ?? (log.status_code >= 400 ? errorText(log.response_body) : null);
  if (text) return `${log.status_code >= 400 ? `${log.status_code}: ` : ''}${text}`;
  return log.status_code >= 400 ? `The request failed with status ${log.status_code}.` : null;
}

function errorText(error: unknown): string | null {
  if (error === null || error === undefined) return null;
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown; error?: { message?: unknown } }).message ?? (error as { error?: { message?: unknown } }).error?.message;
  return typeof message === 'string' ? message : JSON.stringify(error);
}

/** A request's tokens and cost with the rows nested under it: what the request cost in all, shown first. */
function RequestInAll({ log, totals }: { log: LogRow; totals: RequestTotals }) {
  const cost = totals.cost_usd === null ? 'cost unknown (no price for its model)' : formatCost(totals.cost_usd);
  return (
    <p class="request-totals" data-testid="request-totals">
      <strong>In all: </strong>
      {formatInt(totals.total_tokens)} tokens · {cost}
      {totals.unpriced_rows > 0 && totals.cost_usd !== null && <span class="muted"> + {totals.unpriced_rows} without a price</span>}
      <span class="muted">
        {' '}
        over {totals.rows} rows: this request and {log.nested_rows} nested under it
        {log.failed_attempts > 0 && ` (${log.failed_attempts} failed ${log.failed_attempts === 1 ? 'try' : 'tries'})`}, listed in the trace below
      </span>
    </p>
  );
}

/** For a row nested under a request: what it is, and a link to the request. */
function NestedUnder({ log, filterLink }: { log: LogRow; filterLink: (filters: [string, string][], label: string) => preact.JSX.Element }) {
  if (log.kind === 'request' || !log.parent_id) return null;
  const what = { attempt: 'A failed try', tool_round: 'A tool round', tool_call: 'A tool call' }[log.kind];
  const to = `/logs/${log.parent_id}`;
  return (
    <p class="nested-note" data-testid="nested-note">
      {what} of a request: its tokens and cost count in the request's, not as a request of its own.{' '}
      <a href={href(to)} onClick={(e) => routeClick(e, to)}>
        Open the request
      </a>
      {' · '}
      {filterLink([['parent_id', log.parent_id]], 'all its nested rows')}
    </p>
  );
}

/**
 * A failed request's provider message, above the views: the conversation shows the
 * gateway's error, and the provider's own words were only in the raw JSON.
 */
function FailureText({ log }: { log: LogRow }) {
  const provider = log.status_code >= 400 ? providerMessage(log.response_body) : null;
  if (!provider || provider === errorText(log.error)) return null;
  return (
    <p class="failure" role="note" data-testid="provider-error">
      <strong>{log.provider ?? 'The provider'} answered: </strong>
      {provider}
    </p>
  );
}

/** The message of a provider's error answer (OpenAI's, Anthropic's and Google's shapes, or a bare `message`). */
function providerMessage(body: unknown): string | null {
  if (typeof body === 'string') return body.slice(0, 2000) || null;
  if (!body || typeof body !== 'object') return null;
  const error = (body as { error?: unknown }).error;
  const message =
    error && typeof error === 'object' ? (error as { message?: unknown }).message : typeof error === 'string' ? error : (body as { message?: unknown }).message;
  return typeof message === 'string' && message ? message : null;
}
