import type { AnalyticsFilterDto } from './dto/analytics-filter.dto';

/** A metadata value is grouped by its first 512 characters, as the rollups store it. */
export const METADATA_VALUE_CHARS = 512;

/**
 * The filters of an analytics request (issue 25), parsed: each list of values of a column,
 * the API key, the virtual key (its id, a slug already looked up) and `metadata.<key>=<value>`.
 */
export interface AnalyticsFilters {
  columns: { name: FilterColumn; values: string[] }[];
  apiKeyId: string | null;
  virtualKeyId: string | null;
  metadata: Record<string, string>;
}
type FilterColumn = 'model' | 'provider' | 'user' | 'operation';
/** The log column of each list filter, and the rollup dimension that holds the same values. */
const COLUMNS: Record<FilterColumn, { row: string; dimension: string }> = {
  model: { row: 'log.model', dimension: 'model' },
  provider: { row: 'log.provider', dimension: 'provider' },
  user: { row: 'log.end_user', dimension: 'user' },
  operation: { row: 'log.operation', dimension: 'operation' },
};

/** `metadata.<key>=<value>` query parameters, which a DTO cannot name in advance. */
export function metadataQuery(query: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(query)
      .filter(([key, value]) => key.startsWith('metadata.') && key.length > 9 && typeof value === 'string')
      .map(([key, value]) => [key.slice(9), value as string]),
  );
}

export function parseFilters(query: AnalyticsFilterDto, metadata: Record<string, string>, virtualKeyId: string | null): AnalyticsFilters {
  const columns = (Object.keys(COLUMNS) as FilterColumn[])
    .filter((name) => query[name] !== undefined)
    .map((name) => {
      const values = query[name]!.split(',')
        .map((value) => value.trim())
        .filter(Boolean);
      return { name, values: values.length ? values : [query[name]!] };
    });
  return { columns, apiKeyId: query.api_key_id ?? null, virtualKeyId, metadata };
}

export const hasFilters = (filters: AnalyticsFilters): boolean =>
  filters.columns.length > 0 || filters.apiKeyId !== null || filters.virtualKeyId !== null || Object.keys(filters.metadata).length > 0;

/**
 * The filters as conditions on a log row (alias `log`), with the rows analytics read at all:
 * they hold for `request_logs` and for `request_log_rollup_queue`, which keeps the same
 * column names.
 */
export function rowConditions(filters: AnalyticsFilters, add: (value: unknown) => string): string[] {
  // A tool call the gateway ran for a request is no model and costs nothing: the rollups leave it out too (migration LogRequestKinds).
  const conditions = [`log.kind <> 'tool_call'`];
  conditions.push(...filters.columns.map(({ name, values }) => `${COLUMNS[name].row} = any(${add(values)}::text[])`));
  if (filters.apiKeyId) conditions.push(`log.api_key_id = ${add(filters.apiKeyId)}::uuid`);
  if (filters.virtualKeyId) conditions.push(`log.virtual_key_id = ${add(filters.virtualKeyId)}::uuid`);
  if (Object.keys(filters.metadata).length) conditions.push(`log.metadata @> ${add(JSON.stringify(filters.metadata))}::jsonb`);
  return conditions;
}

/** One rollup dimension narrowed to some of its values: what a filter of one column is in the rollups. */
export interface DimensionFilter {
  dimension: string;
  name: string;
  values: string[];
}

/**
 * What the rollups can answer of the filters: they keep each row once per dimension (and per
 * API key), so at most one filtered column (one metadata key counts as one) besides the API
 * key. `null`: they cannot, and the log rows are read. `dimension` is null when only the API
 * key is filtered.
 */
export function rollupFilter(filters: AnalyticsFilters): { dimension: DimensionFilter | null } | null {
  const dimensions: DimensionFilter[] = filters.columns.map(({ name, values }) => ({ dimension: COLUMNS[name].dimension, name: '', values }));
  if (filters.virtualKeyId) dimensions.push({ dimension: 'virtual_key', name: '', values: [filters.virtualKeyId] });
  for (const [key, value] of Object.entries(filters.metadata)) {
    // The rollups hold the first 512 characters only: a longer key or value is not in them whole.
    if (key.length > METADATA_VALUE_CHARS || value.length > METADATA_VALUE_CHARS) return null;
    dimensions.push({ dimension: 'metadata', name: key, values: [value] });
  }
  if (dimensions.length > 1) return null;
  return { dimension: dimensions[0] ?? null };
}
