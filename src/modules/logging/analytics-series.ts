/**
 * The breakdown over time as the API answers it (`GET /v1/analytics/timeseries?group_by=`):
 * the rows of `AnalyticsService.seriesQuery`, one per (bucket, top group or other), laid
 * over every bucket of the range.
 */

/** A row of the breakdown query (`seriesQuery`). */
export interface SeriesRow {
  bucket: string;
  key: string | null;
  virtual_key_id?: string | null;
  other: boolean;
  rank: number;
  groups: number;
  [measure: string]: unknown;
}
export const SERIES_MEASURES = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'cost_usd', 'unpriced_requests'] as const;
/** The columns of a breakdown as a table (CSV): one row per group and bucket. */
export const BREAKDOWN_COLUMNS = ['bucket', 'key', 'virtual_key_id', 'other', ...SERIES_MEASURES];

/** The breakdown's rows laid over every bucket: the top groups in rank order, then `other` (when there are more groups than `top`). */
export function seriesOf(buckets: string[], rows: SeriesRow[], top: number): Record<string, unknown>[] {
  const series = new Map<string, { head: Record<string, unknown>; points: Map<string, SeriesRow> }>();
  for (const row of rows) {
    const id = row.other ? 'other' : `group:${row.rank}`;
    if (!series.has(id)) {
      const head = row.other
        ? { key: null, other: true, groups: row.groups - top }
        : { key: row.key, ...(row.virtual_key_id !== undefined && { virtual_key_id: row.virtual_key_id }), other: false };
      series.set(id, { head, points: new Map() });
    }
    series.get(id)!.points.set(row.bucket, row);
  }
  return [...series.values()].map(({ head, points }) => ({
    ...head,
    data: buckets.map((bucket) => {
      const point = points.get(bucket);
      return { bucket, ...Object.fromEntries(SERIES_MEASURES.map((measure) => [measure, point ? point[measure] : 0])) };
    }),
  }));
}

/** The series of `seriesOf` as table rows (the CSV export): each group's buckets, in its rank order, `other` last. */
export function breakdownRows(series: Record<string, unknown>[]): Record<string, unknown>[] {
  return series.flatMap(({ data, ...head }) =>
    (data as Record<string, unknown>[]).map((point) => ({
      bucket: point.bucket,
      key: head.key,
      virtual_key_id: head.virtual_key_id ?? null,
      other: head.other,
      ...point,
    })),
  );
}
