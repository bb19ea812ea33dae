import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, ListPage, LogRow } from '../api';
import { copyText, formatCost, formatDateTime, formatInt, formatMs, pretty, statusClass } from '../format';
import { href, routeClick } from '../router';

/**
 * One request: what was sent and answered (bodies pretty-printed; for a stream the API
 * stores the assembled final object), the headers as redacted by the server, the other
 * attempts of its trace (retries and fallbacks) and what it cost.
 */
export function LogDetail({ id, onClose, filterPath }: { id: string; onClose: () => void; filterPath: (filters: [string, string][]) => string }) {
  const [log, setLog] = useState<LogRow | null>(null);
  const [attempts, setAttempts] = useState<LogRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    let live = true;
    setLog(null);
    setAttempts(null);
    setError(null);
    api<LogRow>('GET', `/v1/logs/${encodeURIComponent(id)}`)
      .then(async (row) => {
        if (!live) return;
        setLog(row);
        const trace = await api<ListPage<LogRow>>('GET', `/v1/logs?trace_id=${encodeURIComponent(row.trace_id)}&include_bodies=false&limit=100`);
        // Tool calls share the trace id but are not attempts: they have their own section.
        if (live) setAttempts(trace.data.filter((row) => row.operation !== 'mcp.tools.call').sort(byAttemptOrder));
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

  const filterLink = (filters: [string, string][], label: string) => {
    const to = filterPath(filters);
    return (
      <a href={href(to)} onClick={(e) => routeClick(e, to)}>
        {label}
      </a>
    );
  };

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
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={statusClass(log.status_code)}>{log.status_code}</span>
              {log.is_stream && <span class="tag">stream</span>}
              {log.cache_status && <span class="tag">cache {log.cache_status.toLowerCase()}</span>}
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
            <dt>API key</dt>
            <dd>{log.api_key_id ? filterLink([['api_key_id', log.api_key_id]], log.api_key_id) : '—'}</dd>
            <dt>Virtual key</dt>
            <dd>{log.virtual_key_id ? filterLink([['virtual_key', log.virtual_key_id]], log.virtual_key_id) : '—'}</dd>
            {log.config_id && (
              <>
                <dt>Config</dt>
                <dd>
                  <code>{log.config_id}</code>
                </dd>
              </>
            )}
            {log.prompt_id && (
              <>
                <dt>Prompt</dt>
                <dd>
                  <code>{log.prompt_id}</code> version {log.prompt_version}
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

          <section aria-labelledby="cost-title">
            <h3 id="cost-title">Tokens and cost</h3>
            <table class="data compact">
              <tbody>
                <tr>
                  <th scope="row">Prompt tokens</th>
                  <td class="num">{formatInt(log.prompt_tokens)}</td>
                </tr>
                <tr>
                  <th scope="row">of which cached</th>
                  <td class="num">{formatInt(log.cached_tokens)}</td>
                </tr>
                <tr>
                  <th scope="row">Completion tokens</th>
                  <td class="num">{formatInt(log.completion_tokens)}</td>
                </tr>
                <tr>
                  <th scope="row">of which reasoning</th>
                  <td class="num">{formatInt(log.reasoning_tokens)}</td>
                </tr>
                <tr>
                  <th scope="row">Total tokens</th>
                  <td class="num">{formatInt(log.total_tokens)}</td>
                </tr>
                <tr>
                  <th scope="row">Cost</th>
                  <td class="num" data-testid="detail-cost">
                    <CostText log={log} />
                  </td>
                </tr>
              </tbody>
            </table>
          </section>

          <section aria-labelledby="attempts-title">
            <h3 id="attempts-title">Attempts in this trace</h3>
            {attempts === null ? (
              <p class="muted">Loading…</p>
            ) : attempts.length <= 1 ? (
              <p class="muted">One attempt: no retry or fallback.</p>
            ) : (
              <div class="table-wrap">
                <table class="data compact attempts">
                  <caption class="visually-hidden">Every logged attempt with this trace id, in the order tried (by target, then retry)</caption>
                  <thead>
                    <tr>
                      <th scope="col">Target</th>
                      <th scope="col" class="num">
                        Retry
                      </th>
                      <th scope="col">Status</th>
                      <th scope="col">Provider</th>
                      <th scope="col">Error</th>
                    </tr>
                  </thead>
                  <tbody>
                    {attempts.map((a) => (
                      <tr key={a.id} class={a.id === log.id ? 'selected' : ''}>
                        <td data-label="Target">
                          {a.id === log.id ? (
                            <strong aria-current="true">{a.target_index ?? '—'} (this one)</strong>
                          ) : (
                            <a href={href(`/logs/${a.id}`)} onClick={(e) => routeClick(e, `/logs/${a.id}`)}>
                              {a.target_index ?? '—'}
                            </a>
                          )}
                        </td>
                        <td data-label="Retry" class="num">
                          {a.retry_count}
                        </td>
                        <td data-label="Status">
                          <span class={statusClass(a.status_code)}>{a.status_code}</span>
                        </td>
                        <td data-label="Provider">{a.provider ?? '—'}</td>
                        <td data-label="Error">{errorText(a.error) ?? <span class="muted">—</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>

          {log.tool_calls && log.tool_calls.length > 0 && <ToolCalls calls={log.tool_calls} />}

          {log.guardrails && <Guardrails results={log.guardrails} />}

          {log.error !== null && log.error !== undefined && <JsonBlock title="Error" value={log.error} />}
          <JsonBlock title="Request headers" value={log.request_headers} note="As received, with secrets replaced by [REDACTED] by the gateway." />
          <JsonBlock title="Request body" value={log.request_body} />
          <JsonBlock title="Response body" value={log.response_body} note={log.is_stream ? 'A stream: this is the final object assembled from its events.' : undefined} />
        </div>
      )}
    </aside>
  );
}

/** The MCP tools the gateway ran for this request (`x-gateway-mcp`), by model round, each linked to its own row. */
function ToolCalls({ calls }: { calls: NonNullable<LogRow['tool_calls']> }) {
  return (
    <section aria-labelledby="tool-calls-title">
      <h3 id="tool-calls-title">Tool calls run by the gateway</h3>
      <div class="table-wrap">
        <table class="data compact tool-calls">
          <caption class="visually-hidden">Every MCP tool call the gateway ran for this request, by model round</caption>
          <thead>
            <tr>
              <th scope="col" class="num">
                Round
              </th>
              <th scope="col">Server</th>
              <th scope="col">Tool</th>
              <th scope="col">Result</th>
              <th scope="col" class="num">
                Latency
              </th>
            </tr>
          </thead>
          <tbody>
            {calls.map((call) => (
              <tr key={call.log_id}>
                <td data-label="Round" class="num">
                  {call.round}
                </td>
                <td data-label="Server">{call.server}</td>
                <td data-label="Tool">
                  <a href={href(`/logs/${call.log_id}`)} onClick={(e) => routeClick(e, `/logs/${call.log_id}`)}>
                    {call.tool}
                  </a>
                </td>
                <td data-label="Result">
                  <span class={call.is_error ? 'status status-4xx' : 'status status-2xx'}>{call.is_error ? 'error' : 'ok'}</span>
                </td>
                <td data-label="Latency" class="num">
                  {call.latency_ms} ms
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Each guardrail of the request and the answer: passed or failed, whether it could deny, and every check's reason. */
function Guardrails({ results }: { results: NonNullable<LogRow['guardrails']> }) {
  const rows = (['input', 'output'] as const).flatMap((stage) => (results[stage] ?? []).flatMap((guardrail) => guardrail.checks.map((check) => ({ stage, guardrail, check }))));
  return (
    <section aria-labelledby="guardrails-title">
      <h3 id="guardrails-title">Guardrails</h3>
      <div class="table-wrap">
        <table class="data compact">
          <caption class="visually-hidden">Every guardrail check run on this request and its answer</caption>
          <thead>
            <tr>
              <th scope="col">Stage</th>
              <th scope="col">Guardrail</th>
              <th scope="col">Check</th>
              <th scope="col">Result</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ stage, guardrail, check }, i) => (
              <tr key={i}>
                <td data-label="Stage">{stage}</td>
                <td data-label="Guardrail">
                  {guardrail.name}
                  {guardrail.deny && <span class="tag">denies</span>}
                </td>
                <td data-label="Check">{check.type}</td>
                <td data-label="Result">
                  <span class={check.verdict ? 'status status-2xx' : 'status status-4xx'}>{check.verdict ? 'passed' : 'failed'}</span>
                </td>
                <td data-label="Reason">{check.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/**
 * The order a request's attempts were made in: by target (the routing tree path, e.g.
 * 0, 1, 1.0, compared number by number), then by retry. (Ids do not tell: the request's
 * own row keeps the id it got when it arrived, its failed attempts get theirs later.)
 */
function byAttemptOrder(a: LogRow, b: LogRow): number {
  const pa = (a.target_index ?? '').split('.').map(Number);
  const pb = (b.target_index ?? '').split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? -1) - (pb[i] ?? -1);
    if (d) return d;
  }
  return a.retry_count - b.retry_count || a.created_at.localeCompare(b.created_at);
}

function errorText(error: unknown): string | null {
  if (error === null || error === undefined) return null;
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown; error?: { message?: unknown } }).message ?? (error as { error?: { message?: unknown } }).error?.message;
  return typeof message === 'string' ? message : JSON.stringify(error);
}

function JsonBlock({ title, value, note }: { title: string; value: unknown; note?: string }) {
  const [copied, setCopied] = useState(false);
  const text = value === null || value === undefined ? null : typeof value === 'string' ? value : pretty(value);
  const id = `json-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <section aria-labelledby={id} class="json-block">
      <div class="block-head">
        <h3 id={id}>{title}</h3>
        {text !== null && (
          <button
            type="button"
            class="secondary small"
            onClick={async () => {
              setCopied(await copyText(text));
              setTimeout(() => setCopied(false), 2000);
            }}
          >
            {copied ? 'Copied' : 'Copy'}
          </button>
        )}
      </div>
      {note && <p class="muted small-text">{note}</p>}
      {text === null ? (
        <p class="muted">Not recorded.</p>
      ) : (
        <pre class="code" tabIndex={0} aria-label={title}>
          {text}
        </pre>
      )}
    </section>
  );
}

/**
 * A log row's cost in words. No cost with no usage on a failure is a request that used
 * nothing (a guardrail's 446 before the provider, an unreachable provider): it cost nothing.
 * Only a request that used a model without a known price has an unknown cost.
 */
function CostText({ log }: { log: LogRow }) {
  if (log.cost_usd !== null) return <>{formatCost(log.cost_usd)}</>;
  const usedNothing = log.prompt_tokens === null && log.completion_tokens === null && log.status_code >= 400;
  if (usedNothing && log.status_code === 446) return <span>Not sent to the provider (a guardrail denied it): no cost</span>;
  if (usedNothing) return <span>Failed without using the model: no cost</span>;
  return <span>No price known for this model: cost unknown</span>;
}
