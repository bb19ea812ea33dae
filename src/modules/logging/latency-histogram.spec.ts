import { splitRange } from './analytics.service';
import { binOf, binRange, histogramPercentile } from './latency-histogram';
import { mulberry32 } from '../../../test/support/fuzz-inputs';

/** percentile_cont over sorted values, as PostgreSQL computes it. */
function exactPercentile(sorted: number[], q: number): number {
  const rank = q * (sorted.length - 1);
  const low = Math.floor(rank);
  return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (rank - low);
}

function histogramOf(latencies: number[]): { bins: number[]; counts: number[] } {
  const counts = new Map<number, number>();
  for (const latency of latencies) counts.set(binOf(latency), (counts.get(binOf(latency)) ?? 0) + 1);
  const bins = [...counts.keys()].sort((a, b) => a - b);
  return { bins, counts: bins.map((bin) => counts.get(bin)!) };
}

describe('latency histogram', () => {
  it('puts every whole-ms latency in the bin whose range holds it, each bin at most 9.1% wide', () => {
    for (let latency = 0; latency <= 200_000; latency += latency < 2000 ? 1 : 97) {
      const [low, high] = binRange(binOf(latency));
      expect(latency).toBeGreaterThanOrEqual(low);
      expect(latency).toBeLessThan(high);
      if (latency >= 1) expect(high / low).toBeLessThan(1.091);
    }
  });

  it('has no percentile without rows, and reads a single row from its bin', () => {
    expect(histogramPercentile([], [], 0.5)).toBeNull();
    expect(histogramPercentile([10], [0], 0.5)).toBeNull();
    const p50 = histogramPercentile([binOf(250)], [1], 0.5)!;
    expect(Math.abs(p50 - 250) / 250).toBeLessThan(0.046);
  });

  it.each([
    ['uniform 80..2080 ms', (next: () => number) => 80 + Math.floor(next() * 2000)],
    [
      'long-tailed (log-normal around 400 ms)',
      (next: () => number) => Math.round(400 * Math.exp(Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()))),
    ],
    [
      'two clusters (cache hits at 3 ms, calls at 900 ms)',
      (next: () => number) => (next() < 0.3 ? 2 + Math.floor(next() * 3) : 800 + Math.floor(next() * 200)),
    ],
  ])('reads p50 and p95 within 4.6%% of the exact value: %s', (_name, draw) => {
    const next = mulberry32(42);
    const latencies = Array.from({ length: 20_000 }, () => draw(next)).sort((a, b) => a - b);
    const { bins, counts } = histogramOf(latencies);
    for (const q of [0.5, 0.95]) {
      const exact = exactPercentile(latencies, q);
      const estimate = histogramPercentile(bins, counts, q)!;
      expect(Math.abs(estimate - exact)).toBeLessThanOrEqual(Math.max(0.046 * exact, 0.5));
    }
  });

  it('interpolates between the rows on either side of the rank, as percentile_cont does, also across a gap', () => {
    for (const latencies of [
      [4, 4, 54, 54],
      [12, 13, 49],
      [1, 300],
      [0, 0, 7],
      [3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 9000],
    ]) {
      const { bins, counts } = histogramOf(latencies);
      for (const q of [0.5, 0.95]) {
        const exact = exactPercentile(latencies, q);
        const estimate = histogramPercentile(bins, counts, q)!;
        expect(estimate).toBeGreaterThanOrEqual(exact / 2 ** (1 / 8) - 0.05);
        expect(estimate).toBeLessThanOrEqual(exact * 2 ** (1 / 8) + 0.05);
      }
    }
  });

  it('orders estimates like the values: p95 at or above p50', () => {
    const next = mulberry32(7);
    const { bins, counts } = histogramOf(Array.from({ length: 500 }, () => Math.floor(next() * 5000)));
    expect(histogramPercentile(bins, counts, 0.95)!).toBeGreaterThanOrEqual(histogramPercentile(bins, counts, 0.5)!);
  });
});

describe('splitRange', () => {
  const at = (iso: string) => new Date(iso);

  it('answers whole days from daily rollups, whole hours of the edges from hourly ones, the rest from rows', () => {
    const parts = splitRange(at('2025-01-01T10:30:00Z'), at('2025-01-04T05:15:00Z'), ['day', 'hour']);
    expect(parts.rollups).toEqual([
      { period: 'day', from: at('2025-01-02T00:00:00Z'), to: at('2025-01-04T00:00:00Z') },
      { period: 'hour', from: at('2025-01-01T11:00:00Z'), to: at('2025-01-02T00:00:00Z') },
      { period: 'hour', from: at('2025-01-04T00:00:00Z'), to: at('2025-01-04T05:00:00Z') },
    ]);
    expect(parts.rows).toEqual([
      { from: at('2025-01-01T10:30:00Z'), to: at('2025-01-01T11:00:00Z') },
      { from: at('2025-01-04T05:00:00Z'), to: at('2025-01-04T05:15:00Z') },
    ]);
  });

  it('takes whole weeks from Monday first', () => {
    // 2025-01-01 is a Wednesday: the weeks of 6 and 13 January are whole.
    const parts = splitRange(at('2025-01-01T12:00:00Z'), at('2025-01-22T06:00:00Z'), ['week', 'day']);
    expect(parts.rollups).toEqual([
      { period: 'week', from: at('2025-01-06T00:00:00Z'), to: at('2025-01-20T00:00:00Z') },
      { period: 'day', from: at('2025-01-02T00:00:00Z'), to: at('2025-01-06T00:00:00Z') },
      { period: 'day', from: at('2025-01-20T00:00:00Z'), to: at('2025-01-22T00:00:00Z') },
    ]);
    expect(parts.rows).toEqual([
      { from: at('2025-01-01T12:00:00Z'), to: at('2025-01-02T00:00:00Z') },
      { from: at('2025-01-22T00:00:00Z'), to: at('2025-01-22T06:00:00Z') },
    ]);
  });

  it('needs no rows for a range on period boundaries, and no rollups for a range inside one period', () => {
    expect(splitRange(at('2025-01-01T00:00:00Z'), at('2025-01-31T00:00:00Z'), ['day'])).toEqual({
      rollups: [{ period: 'day', from: at('2025-01-01T00:00:00Z'), to: at('2025-01-31T00:00:00Z') }],
      rows: [],
    });
    expect(splitRange(at('2025-01-01T10:05:00Z'), at('2025-01-01T10:55:00Z'), ['day', 'hour'])).toEqual({
      rollups: [],
      rows: [{ from: at('2025-01-01T10:05:00Z'), to: at('2025-01-01T10:55:00Z') }],
    });
  });
});
