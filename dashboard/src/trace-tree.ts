import type { LogRow } from './api';

/** A log row placed in its trace: when it ran, and the rows that ran within it. */
export interface Span {
  row: LogRow;
  start: number;
  end: number;
  children: Span[];
}

/** Timestamps are whole milliseconds and latencies rounded: a row ending this much past another still counts as within it. */
const SLACK_MS = 2;

/**
 * The rows of one trace as a tree: a request's own row spans all its attempts (it is logged
 * with the request's start and whole latency), so a row inside another's time is its child:
 * failed attempts and earlier tool-loop rounds, and the MCP tool calls run between rounds.
 * Tool calls are never parents. Rows that fit in none (several requests sharing a trace id
 * the client chose) are roots of their own.
 */
export function traceTree(rows: LogRow[]): Span[] {
  const spans = rows
    .map((row) => {
      const start = Date.parse(row.created_at);
      return { row, start, end: start + Math.max(0, row.latency_ms), children: [] as Span[] };
    })
    // Earliest first; at the same start the longer one first, so a parent comes before its children.
    .sort((a, b) => a.start - b.start || b.end - a.end || a.row.id.localeCompare(b.row.id));
  const roots: Span[] = [];
  spans.forEach((span, i) => {
    let parent: Span | null = null;
    for (const candidate of spans.slice(0, i)) {
      if (candidate.row.operation === 'mcp.tools.call') continue;
      if (candidate.start <= span.start && span.end <= candidate.end + SLACK_MS && (!parent || candidate.end - candidate.start < parent.end - parent.start))
        parent = candidate;
    }
    (parent ? parent.children : roots).push(span);
  });
  return roots;
}
