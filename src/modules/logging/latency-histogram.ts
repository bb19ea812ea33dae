/**
 * Latency percentiles read from the histograms of the log rollups (migration LogRollups:
 * `request_log_latency_bin`). Bin 0 holds latencies under 1 ms; bin b ≥ 1 holds
 * [2^((b-1)/8), 2^(b/8)) ms, about 9% wide.
 */
const BINS_PER_DOUBLING = 8;

/** The latency range [low, high) of a bin, in ms. */
export function binRange(bin: number): [number, number] {
  if (bin <= 0) return [0, 1];
  return [2 ** ((bin - 1) / BINS_PER_DOUBLING), 2 ** (bin / BINS_PER_DOUBLING)];
}

/** The bin of a latency: the database's `request_log_latency_bin` in TypeScript, for the tests. */
export function binOf(latencyMs: number): number {
  return latencyMs < 1 ? 0 : Math.min(255, Math.floor(BINS_PER_DOUBLING * Math.log2(latencyMs)) + 1);
}

/**
 * The q-quantile (0..1) of a histogram, read as `percentile_cont` reads the rows: the value
 * at rank q·(n-1), interpolated between the rows on either side of it. Each row's latency
 * is estimated from its bin, its bin's rows taken as spread evenly over it, so it is
 * within a bin (9%) of the true latency; and so is the interpolation of two of them, of
 * the exact percentile. Null for an empty histogram.
 *
 * `bins` ascending, `counts[i]` the rows in `bins[i]`.
 */
export function histogramPercentile(bins: readonly number[], counts: readonly number[], q: number): number | null {
  const total = counts.reduce((sum, count) => sum + Math.max(0, count), 0);
  if (total <= 0) return null;
  const rank = q * (total - 1);
  const below = rowAt(bins, counts, Math.floor(rank));
  const above = rowAt(bins, counts, Math.ceil(rank));
  return round(below + (above - below) * (rank - Math.floor(rank)));
}

/** The estimated latency of row `index` (0-based, ascending) of a histogram. */
function rowAt(bins: readonly number[], counts: readonly number[], index: number): number {
  let before = 0;
  for (let i = 0; i < bins.length; i++) {
    const count = counts[i];
    if (count <= 0) continue;
    if (index < before + count) {
      if (bins[i] === 0) return 0; // under 1 ms: whole-ms latencies are 0
      const [low, high] = binRange(bins[i]);
      // Row k of the bin sits in the middle of its 1/count share of the bin.
      return low + ((high - low) * (index - before + 0.5)) / count;
    }
    before += count;
  }
  return binRange(bins[bins.length - 1])[1];
}

/** Latencies are whole ms; an estimate gets one decimal, not a false precision. */
function round(value: number): number {
  return Math.round(value * 10) / 10;
}
