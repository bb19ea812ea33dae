import type { LogRow } from '../api';
import { formatMs, statusClass } from '../format';
import { href, routeClick } from '../router';
import { Span, traceTree } from '../trace-tree';

/** What a row is in its trace, in words. */
function kindOf(span: Span, isChild: boolean): string {
  const { row } = span;
  if (row.operation === 'mcp.tools.call') return row.error ? 'tool call, failed' : 'tool call';
  if (!isChild) return span.children.length ? 'request' : row.operation;
  if (row.status_code >= 400 || row.error) return row.retry_count > 0 ? `retry ${row.retry_count}, failed` : 'failed attempt';
  return 'model round';
}

function titleOf(row: LogRow): string {
  if (row.operation === 'mcp.tools.call') return `${(row.provider ?? 'mcp').replace(/^mcp:/, '')} · ${row.model ?? 'tool'}`;
  return `${row.provider ?? 'no provider'} · ${row.model ?? 'no model'}`;
}

/**
 * Every row of a trace as a waterfall: each one's place in the tree, its start after the
 * trace's first row and its latency, drawn as a bar on one time axis, each linked to its
 * own detail. The numbers are text too, so the bars are only a picture.
 */
export function TraceView({ rows, currentId }: { rows: LogRow[]; currentId: string }) {
  const roots = traceTree(rows);
  const all = flatten(roots);
  const t0 = Math.min(...all.map((span) => span.start));
  const total = Math.max(1, Math.max(...all.map((span) => span.end)) - t0);
  const toolCalls = rows.filter((row) => row.operation === 'mcp.tools.call').length;
  const failed = rows.filter((row) => row.status_code >= 400 || (row.operation === 'mcp.tools.call' && row.error)).length;
  return (
    <div class="trace" data-testid="trace">
      <p class="muted small-text">
        {rows.length} {rows.length === 1 ? 'row' : 'rows'} over {formatMs(total)}
        {failed > 0 && ` · ${failed} failed`}
        {toolCalls > 0 && ` · ${toolCalls} tool ${toolCalls === 1 ? 'call' : 'calls'}`}. Bars: start and length on one time axis.
      </p>
      <SpanList spans={roots} t0={t0} total={total} currentId={currentId} depth={0} label="Rows of this trace, by start" />
    </div>
  );
}

/** A bar's place on the axis in percent; a very short one stays visible, and none runs past the end. */
function barStyle(offset: number, latency: number, total: number) {
  const left = Math.min(99.4, (offset / total) * 100);
  return { left: `${left}%`, width: `${Math.min(100 - left, Math.max(0.6, (Math.max(0, latency) / total) * 100))}%` };
}

function flatten(spans: Span[]): Span[] {
  return spans.flatMap((span) => [span, ...flatten(span.children)]);
}

function SpanList({
  spans,
  t0,
  total,
  currentId,
  depth,
  label,
}: {
  spans: Span[];
  t0: number;
  total: number;
  currentId: string;
  depth: number;
  label?: string;
}) {
  return (
    <ul class={depth === 0 ? 'spans' : 'spans nested'} aria-label={label}>
      {spans.map((span) => {
        const { row } = span;
        const current = row.id === currentId;
        const offset = span.start - t0;
        const tool = row.operation === 'mcp.tools.call';
        const to = `/logs/${row.id}`;
        return (
          <li key={row.id} class={current ? 'span current' : 'span'} data-testid="trace-row">
            <div class="span-row">
              <div class="span-label" style={{ paddingLeft: `${depth * 1.1}rem` }}>
                {depth > 0 && (
                  <span class="span-branch" aria-hidden="true">
                    └
                  </span>
                )}
                <span class={`tag span-kind${tool ? ' tool' : ''}`}>{kindOf(span, depth > 0)}</span>{' '}
                {current ? (
                  <strong aria-current="true">{titleOf(row)} (this one)</strong>
                ) : (
                  <a href={href(to)} onClick={(e) => routeClick(e, to)}>
                    {titleOf(row)}
                  </a>
                )}{' '}
                <span class={statusClass(row.status_code)}>{row.status_code}</span>
                {row.target_index !== null && !tool && <span class="muted small-text"> · target {row.target_index}</span>}
              </div>
              <div class="span-time">
                <span class="span-numbers">
                  +{formatMs(offset)} · {formatMs(row.latency_ms)}
                </span>
                <span class="span-track" aria-hidden="true">
                  <span
                    class={`span-bar ${row.status_code >= 400 || (tool && row.error) ? 'bar-failed' : tool ? 'bar-tool' : 'bar-ok'}`}
                    style={barStyle(offset, row.latency_ms, total)}
                  />
                </span>
              </div>
            </div>
            {span.children.length > 0 && <SpanList spans={span.children} t0={t0} total={total} currentId={currentId} depth={depth + 1} />}
          </li>
        );
      })}
    </ul>
  );
}
