import type { LogRow } from './api';
import { traceTree } from './trace-tree';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const row = (id: string, startMs: number, latencyMs: number, operation = 'chat.completions'): LogRow =>
  ({ id, operation, created_at: new Date(T0 + startMs).toISOString(), latency_ms: latencyMs, status_code: 200 }) as LogRow;
const shape = (spans: ReturnType<typeof traceTree>): unknown =>
  spans.map((span) => (span.children.length ? { [span.row.id]: shape(span.children) } : span.row.id));

describe('traceTree', () => {
  it('puts attempts and tool calls inside the request whose time they ran in, in the order they started', () => {
    const rows = [
      row('tool-b', 40, 5, 'mcp.tools.call'),
      row('round-1', 3, 30),
      row('request', 0, 100),
      row('tool-a', 35, 2, 'mcp.tools.call'),
      row('round-2', 50, 20),
    ];
    expect(shape(traceTree(rows))).toEqual([{ request: ['round-1', 'tool-a', 'tool-b', 'round-2'] }]);
  });

  it('lets a row end within the slack of its parent (whole milliseconds, rounded latencies), but not later', () => {
    expect(shape(traceTree([row('request', 0, 10), row('attempt', 5, 7)]))).toEqual([{ request: ['attempt'] }]);
    expect(shape(traceTree([row('request', 0, 10), row('other', 5, 8)]))).toEqual(['request', 'other']);
  });

  it('never makes a tool call a parent, and keeps requests sharing a trace id apart', () => {
    expect(shape(traceTree([row('tool', 0, 50, 'mcp.tools.call'), row('later', 10, 5)]))).toEqual(['tool', 'later']);
    expect(shape(traceTree([row('first', 0, 10), row('second', 20, 10)]))).toEqual(['first', 'second']);
  });

  it('nests in the smallest row that holds it; at the same start the longer row is the parent', () => {
    expect(shape(traceTree([row('inner', 0, 50), row('outer', 0, 100), row('leaf', 10, 5)]))).toEqual([{ outer: [{ inner: ['leaf'] }] }]);
  });
});
