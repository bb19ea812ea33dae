import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, ApiKey, BreakdownSeries, listAll, Summary, SummaryRow, Timeseries, VirtualKey } from '../api';
import { ChartSeries, TimeChart } from '../components/time-chart';
import { SpentText } from '../components/budget-status';
import { formatCost, formatDateTime, formatInt, formatMs, fromLocalInput, toLocalInput } from '../format';
import { displayZone, zoneName } from '../time-zone';
import { href, Location, navigate, routeClick } from '../router';
import { ExportButtons } from '../components/export-buttons';
import { AnalyticsFilterForm, analyticsFiltersOf } from '../components/analytics-filter-form';

const RANGES: Record<string, { label: string; ms: number }> = {
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
};
/** As the API: UTC buckets, at most MAX_BUCKETS of them in one chart. */
const INTERVALS = [
  { value: 'minute', label: 'Per minute', ms: 60_000 },
  { value: 'hour', label: 'Per hour', ms: 3_600_000 },
  { value: 'day', label: 'Per day', ms: 86_400_000 },
];
const MAX_BUCKETS = 1500;

/** The buckets of `interval` over a period: the first starts at the boundary before `from`. */
function bucketCount(period: { from: string; to: string }, ms: number): number {
  const [from, to] = [Date.parse(period.from), Date.parse(period.to)];
  return Math.ceil((to - Math.floor(from / ms) * ms) / ms);
}

/**
 * The interval to ask for: the one chosen, or when that makes more buckets than a chart can
 * show (30 days per minute), the first larger one that fits, with a note saying so.
 */
function fittingInterval(period: { from: string; to: string }, wanted: string): { interval: string; note: string | null } {
  const index = INTERVALS.findIndex((i) => i.value === wanted);
  if (index < 0) return { interval: '', note: null };
  const fits = INTERVALS.slice(index).find((i) => bucketCount(period, i.ms) <= MAX_BUCKETS);
  if (!fits || fits.value === wanted) return { interval: wanted, note: null };
  const buckets = bucketCount(period, INTERVALS[index].ms);
  return {
    interval: fits.value,
    note: `${INTERVALS[index].label} would be ${formatInt(buckets)} buckets, more than a chart can show (${formatInt(MAX_BUCKETS)}): showing ${fits.label.toLowerCase()}.`,
  };
}

const GROUPS = [
  { value: 'model', label: 'Model' },
  { value: 'user', label: 'User' },
  { value: 'provider', label: 'Provider' },
  { value: 'operation', label: 'Operation' },
  { value: 'api_key', label: 'API key' },
  { value: 'virtual_key', label: 'Virtual key' },
  { value: 'metadata', label: 'Metadata key…' },
];

/** What the charts can be broken down by (the timeseries' group_by). */
const BREAKDOWNS = [
  { value: '', label: 'Nothing (totals)' },
  { value: 'model', label: 'Model' },
  { value: 'user', label: 'User' },
  { value: 'provider', label: 'Provider' },
  { value: 'metadata', label: 'Metadata key…' },
];
/** One colour per group of a breakdown, in rank order (at most 20), and grey for the rest. */
const PALETTE = [
  '#1d4ed8',
  '#047857',
  '#c2410c',
  '#7c3aed',
  '#b91c1c',
  '#0e7490',
  '#a16207',
  '#be185d',
  '#4d7c0f',
  '#6d28d9',
  '#0369a1',
  '#9a3412',
  '#15803d',
  '#86198f',
  '#b45309',
  '#1e40af',
  '#065f46',
  '#9f1239',
  '#3f6212',
  '#5b21b6',
];
const OTHER_COLOR = '#9ca3af';

/** What the budget table reads of an API key or a virtual key (only the latter has a slug). */
type KeyRow = Pick<ApiKey, 'id' | 'name' | 'budget_limit_usd' | 'budget_period' | 'spent_usd' | 'unpriced_requests'> & { slug?: string };

/**
 * `mayReadKeys`: the sign-in's role may read the keys (owners and admins: `resources.read`);
 * for the others the budgets section is left out and key names are not looked up.
 */
export function AnalyticsPage({ location, mayReadKeys = true }: { location: Location; mayReadKeys?: boolean }) {
  const q = location.query;
  const range = q.get('range') ?? (q.get('from') ? 'custom' : '24h');
  const interval = q.get('interval') ?? '';
  const groupBy = q.get('group_by') ?? 'model';
  const metaKey = q.get('meta') ?? '';
  const customFrom = q.get('from') ?? '';
  const customTo = q.get('to') ?? '';
  const filters = analyticsFiltersOf(q);
  const filterKey = new URLSearchParams(filters).toString();
  const breakdown = q.get('breakdown') ?? '';
  const breakdownMeta = q.get('breakdown_meta') ?? '';
  const breakdownParam = breakdown === 'metadata' ? (breakdownMeta.trim() ? `metadata.${breakdownMeta.trim()}` : null) : breakdown || null;

  // The period, fixed for one render of the URL (so "last 24 hours" does not move while reading).
  // A custom range without its start yet shows the last 24 hours.
  const period = useMemo(() => {
    if (range === 'custom' && customFrom) return { from: customFrom, to: customTo || new Date().toISOString() };
    const to = new Date();
    return { from: new Date(to.getTime() - (RANGES[range] ?? RANGES['24h']).ms).toISOString(), to: to.toISOString() };
  }, [location.search]);
  const buckets = useMemo(() => fittingInterval(period, interval), [period, interval]);
  // Every load again (the retry after an error): the same period, asked anew.
  const [attempt, setAttempt] = useState(0);

  const update = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(q);
    for (const [name, value] of Object.entries(changes)) {
      if (value === null || value === '') next.delete(name);
      else next.set(name, value);
    }
    navigate(`/analytics?${next.toString()}`, { replace: true });
  };

  const [series, setSeries] = useState<Timeseries | null>(null);
  const [seriesError, setSeriesError] = useState<string | null>(null);
  useEffect(() => {
    setSeries(null);
    setSeriesError(null);
    // Buckets are the days and hours of the zone times are shown in.
    const params = new URLSearchParams([['from', period.from], ['to', period.to], ['tz', displayZone()], ...filters]);
    if (buckets.interval) params.set('interval', buckets.interval);
    if (breakdownParam) params.set('group_by', breakdownParam);
    api<Timeseries>('GET', `/v1/analytics/timeseries?${params}`).then(setSeries, (e: ApiError) => setSeriesError(e.message));
  }, [period, buckets.interval, filterKey, breakdownParam, attempt]);
  // A drag across a chart: that period, as a custom range in the URL.
  const zoomTo = (fromMs: number, toMs: number) => {
    if (toMs - fromMs < 60_000) return;
    update({ range: 'custom', from: new Date(Math.round(fromMs)).toISOString(), to: new Date(Math.round(toMs)).toISOString(), interval: null });
  };

  const groupParam = groupBy === 'metadata' ? (metaKey.trim() ? `metadata.${metaKey.trim()}` : null) : groupBy;
  const [summary, setSummary] = useState<Summary | null>(null);
  const [summaryError, setSummaryError] = useState<string | null>(null);
  useEffect(() => {
    setSummary(null);
    setSummaryError(null);
    if (!groupParam) return;
    const params = new URLSearchParams([['group_by', groupParam], ['from', period.from], ['to', period.to], ...filters]);
    api<Summary>('GET', `/v1/analytics/summary?${params}`).then(setSummary, (e: ApiError) => setSummaryError(e.message));
  }, [period, groupParam, filterKey, attempt]);

  const [keys, setKeys] = useState<{ api: ApiKey[]; virtual: VirtualKey[] } | null>(null);
  const [keysError, setKeysError] = useState<string | null>(null);
  useEffect(() => {
    setKeysError(null);
    if (!mayReadKeys) return;
    Promise.all([listAll<ApiKey>('/v1/api-keys'), listAll<VirtualKey>('/v1/virtual-keys')]).then(
      ([apiKeys, virtualKeys]) => setKeys({ api: apiKeys, virtual: virtualKeys }),
      (e: ApiError) => setKeysError(e.message),
    );
  }, [attempt, mayReadKeys]);
  const keyNames = useMemo(() => new Map((keys?.api ?? []).map((k) => [k.id, k.name])), [keys]);
  // One box for what failed (the gateway down fails all three loads the same way), with a retry.
  const errors = [...new Set([seriesError, summaryError, keysError].filter((e): e is string => e !== null))];
  const notLoaded = (
    <p class="muted" role="status">
      Not loaded: see the error above.
    </p>
  );

  return (
    <div class="analytics">
      <div class="page-head">
        <h1>Analytics</h1>
      </div>
      <form class="period" onSubmit={(e) => e.preventDefault()} aria-label="Period">
        <div class="field">
          <label for="a-range">Period</label>
          <select
            id="a-range"
            value={range}
            onChange={(e) => {
              const value = (e.target as HTMLSelectElement).value;
              // A custom range starts as the period shown, ready to be adjusted.
              update(value === 'custom' ? { range: value, from: period.from, to: period.to } : { range: value, from: null, to: null });
            }}
          >
            {Object.entries(RANGES).map(([value, r]) => (
              <option key={value} value={value}>
                {r.label}
              </option>
            ))}
            <option value="custom">Custom range</option>
          </select>
        </div>
        {range === 'custom' && (
          <>
            <div class="field">
              <label for="a-from">From</label>
              <input
                id="a-from"
                type="datetime-local"
                value={toLocalInput(customFrom)}
                onChange={(e) => update({ from: fromLocalInput((e.target as HTMLInputElement).value) ?? null })}
              />
            </div>
            <div class="field">
              <label for="a-to">Until</label>
              <input
                id="a-to"
                type="datetime-local"
                value={toLocalInput(customTo)}
                onChange={(e) => update({ to: fromLocalInput((e.target as HTMLInputElement).value) ?? null })}
              />
            </div>
            <p class="muted small-text zone-note">Times in {zoneName(displayZone())}</p>
          </>
        )}
        <div class="field">
          <label for="a-interval">Buckets</label>
          <select id="a-interval" value={interval} onChange={(e) => update({ interval: (e.target as HTMLSelectElement).value })}>
            <option value="">Automatic</option>
            {INTERVALS.map((i) => (
              <option key={i.value} value={i.value}>
                {i.label}
              </option>
            ))}
          </select>
        </div>
      </form>
      <AnalyticsFilterForm key={filterKey} filters={filters} onApply={update} />
      {buckets.note && (
        <p class="notice" role="status" data-testid="interval-note">
          {buckets.note}
        </p>
      )}
      {errors.length > 0 && (
        <div class="error-box" role="alert">
          {errors.map((e) => (
            <p key={e}>{e}</p>
          ))}
          <p>
            <button type="button" class="secondary" onClick={() => setAttempt(attempt + 1)}>
              Retry
            </button>
          </p>
        </div>
      )}

      <section aria-labelledby="over-time">
        <h2 id="over-time">Over time</h2>
        <form class="period" onSubmit={(e) => e.preventDefault()} aria-label="Breakdown">
          <div class="field">
            <label for="a-breakdown">Break down by</label>
            <select id="a-breakdown" value={breakdown} onChange={(e) => update({ breakdown: (e.target as HTMLSelectElement).value })}>
              {BREAKDOWNS.map((b) => (
                <option key={b.value} value={b.value}>
                  {b.label}
                </option>
              ))}
            </select>
          </div>
          {breakdown === 'metadata' && <MetaKeyInput id="a-breakdown-meta" initial={breakdownMeta} onApply={(value) => update({ breakdown_meta: value })} />}
        </form>
        {breakdown === 'metadata' && !breakdownParam && <p class="muted">Enter the metadata key to break down by (for example team), then press Enter.</p>}
        <p class="muted chart-hint">Drag across a chart to show that period.</p>
        {seriesError ? (
          notLoaded
        ) : !series ? (
          <p class="muted" role="status">
            Loading…
          </p>
        ) : (
          <>
            {/* Over two days the rollups normally answer; say so when these filters made it read every row. */}
            {series.filtered_from === 'rows' && Date.parse(series.to) - Date.parse(series.from) > 2 * 86_400_000 && (
              <p class="muted" data-testid="filtered-from">
                Read from the log rows (slower): the rollups cannot answer these filters with this breakdown.
              </p>
            )}
            <Charts series={series} names={keyNames} onZoom={zoomTo} pricesLink={mayReadKeys} batchLines={summary} />
            <ExportButtons
              path={`/v1/analytics/timeseries?${new URLSearchParams([['from', period.from], ['to', period.to], ['tz', displayZone()], ...filters, ...(buckets.interval ? [['interval', buckets.interval]] : []), ...(breakdownParam ? [['group_by', breakdownParam]] : [])])}`}
              what={breakdownParam ? 'this breakdown' : 'these buckets'}
              formats={['csv']}
            />
          </>
        )}
      </section>

      <section aria-labelledby="grouped">
        <h2 id="grouped">Cost and requests by</h2>
        <form class="period" onSubmit={(e) => e.preventDefault()} aria-label="Grouping">
          <div class="field">
            <label for="a-group">Group by</label>
            <select id="a-group" value={groupBy} onChange={(e) => update({ group_by: (e.target as HTMLSelectElement).value })}>
              {GROUPS.map((g) => (
                <option key={g.value} value={g.value}>
                  {g.label}
                </option>
              ))}
            </select>
          </div>
          {groupBy === 'metadata' && <MetaKeyInput id="a-meta" initial={metaKey} onApply={(value) => update({ meta: value })} />}
        </form>
        {!groupParam ? (
          <p class="muted">Enter the metadata key to group by (for example team), then press Enter.</p>
        ) : summaryError ? (
          notLoaded
        ) : !summary ? (
          <p class="muted" role="status">
            Loading…
          </p>
        ) : summary.data.length === 0 ? (
          <p class="empty">No requests in this period.</p>
        ) : (
          <>
            <SummaryTable
              rows={summary.data}
              estimated={summary.latency_percentiles === 'approximate'}
              groupBy={groupParam}
              names={keyNames}
              period={period}
              filters={filters}
            />
            <ExportButtons
              path={`/v1/analytics/summary?${new URLSearchParams([['group_by', groupParam], ['from', period.from], ['to', period.to], ...filters])}`}
              what="this table"
              formats={['csv']}
            />
          </>
        )}
      </section>

      {mayReadKeys && (
        <section aria-labelledby="budgets">
          <h2 id="budgets">Budget used per key</h2>
          <p class="muted">Spend in each key's current budget period (all time for keys without a budget), from the request log.</p>
          {keysError ? (
            notLoaded
          ) : !keys ? (
            <p class="muted" role="status">
              Loading…
            </p>
          ) : (
            <BudgetTable keys={keys} />
          )}
        </section>
      )}
    </div>
  );
}

function MetaKeyInput({ id, initial, onApply }: { id: string; initial: string; onApply: (value: string) => void }) {
  const [value, setValue] = useState(initial);
  return (
    <>
      <div class="field">
        <label for={id}>Metadata key</label>
        <input
          id={id}
          value={value}
          placeholder="e.g. team"
          autoComplete="off"
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              onApply(value.trim());
            }
          }}
        />
      </div>
      <button type="button" class="secondary" onClick={() => onApply(value.trim())}>
        Show
      </button>
    </>
  );
}

const count = (v: number) => (Math.abs(v) >= 10_000 ? `${(v / 1000).toFixed(0)}k` : formatInt(Math.round(v)));

/** A breakdown's series as chart series: its label, colour and values of one measure. */
function breakdownSeries(series: BreakdownSeries[], measure: 'requests' | 'cost_usd', names: Map<string, string>, groupBy: string): ChartSeries[] {
  return series.map((s, i) => ({
    label: s.other
      ? `Other (${s.groups} ${s.groups === 1 ? 'group' : 'groups'})`
      : s.key === null
        ? '(none)'
        : groupBy === 'api_key'
          ? (names.get(s.key) ?? s.key)
          : s.key,
    color: s.other ? OTHER_COLOR : PALETTE[i % PALETTE.length],
    values: s.data.map((point) => point[measure]),
  }));
}

/** `pricesLink`: the role may open the prices page (owners and admins), linked beside the requests without a price. */
function Charts({
  series,
  names,
  onZoom,
  pricesLink,
  batchLines,
}: {
  series: Timeseries;
  names: Map<string, string>;
  onZoom: (fromMs: number, toMs: number) => void;
  pricesLink: boolean;
  /** The summary of the same period and filters, once read: how many of the requests were batch lines, and their cost. */
  batchLines: Pick<Summary, 'batch_requests' | 'batch_cost_usd' | 'batch_unpriced_requests'> | null;
}) {
  const data = series.data;
  const times = useMemo(() => data.map((row) => Date.parse(row.bucket) / 1000), [data]);
  const totals = data.reduce(
    (t, row) => ({
      requests: t.requests + row.requests,
      errors: t.errors + row.errors,
      recovered: t.recovered + row.recovered,
      cost: t.cost + (row.cost_usd ?? 0),
      priced: t.priced || (row.cost_usd ?? 0) > 0,
      unpriced: t.unpriced + row.unpriced_requests,
      tokens: t.tokens + row.prompt_tokens + row.completion_tokens,
    }),
    { requests: 0, errors: 0, recovered: 0, cost: 0, priced: false, unpriced: 0, tokens: 0 },
  );
  // Requests without a price are left out of the cost, and said so: an unknown cost is never $0.
  const costText = totals.unpriced > 0 && !totals.priced ? 'unknown' : formatCost(totals.cost);
  const charts = useMemo(() => {
    const requests: ChartSeries[] = [
      { label: 'Requests', color: '#1d4ed8', values: data.map((r) => r.requests), fill: 'rgba(29,78,216,0.08)' },
      { label: 'Errors', color: '#b91c1c', values: data.map((r) => r.errors) },
      { label: 'Recovered', color: '#b45309', values: data.map((r) => r.recovered) },
    ];
    const cost: ChartSeries[] = [{ label: 'Cost (USD)', color: '#047857', values: data.map((r) => r.cost_usd), fill: 'rgba(4,120,87,0.08)' }];
    const tokens: ChartSeries[] = [
      { label: 'Prompt tokens', color: '#7c3aed', values: data.map((r) => r.prompt_tokens) },
      { label: 'Completion tokens', color: '#c2410c', values: data.map((r) => r.completion_tokens) },
    ];
    const latency: ChartSeries[] = [
      { label: 'p50', color: '#0369a1', values: data.map((r) => r.latency_p50_ms) },
      { label: 'p95', color: '#9d174d', values: data.map((r) => r.latency_p95_ms) },
    ];
    const breakdown =
      series.series && series.group_by
        ? {
            requests: breakdownSeries(series.series, 'requests', names, series.group_by),
            cost: breakdownSeries(series.series, 'cost_usd', names, series.group_by),
          }
        : null;
    return { requests, cost, tokens, latency, breakdown };
  }, [data, series.series, names]);
  const per = series.interval;
  return (
    <>
      <dl class="totals">
        <div>
          <dt>Requests</dt>
          <dd data-testid="total-requests">{formatInt(totals.requests)}</dd>
          {batchLines && batchLines.batch_requests > 0 && (
            <dd class="small-text muted" data-testid="batch-lines">
              of which{' '}
              <a href={href('/batches')} onClick={(e) => routeClick(e, '/batches')}>
                {formatInt(batchLines.batch_requests)} batch {batchLines.batch_requests === 1 ? 'line' : 'lines'}
              </a>
              , <SpentText spent={batchLines.batch_cost_usd ?? 0} unpriced={batchLines.batch_unpriced_requests} />
            </dd>
          )}
        </div>
        <div>
          <dt>Errors</dt>
          <dd data-testid="total-errors">
            {formatInt(totals.errors)}
            {totals.requests > 0 && <span class="muted"> ({percentOf(totals.errors, totals.requests)})</span>}
          </dd>
        </div>
        <div>
          <dt title="Answered after a failed try: a retry or a fallback recovered them">Recovered</dt>
          <dd data-testid="total-recovered">
            {formatInt(totals.recovered)}
            {totals.requests > 0 && <span class="muted"> ({percentOf(totals.recovered, totals.requests)})</span>}
            <span class="small-text muted"> by a retry or fallback</span>
          </dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>
            {costText}
            {totals.unpriced > 0 && (
              <span class="unpriced" data-testid="unpriced-total">
                {formatInt(totals.unpriced)} {totals.unpriced === 1 ? 'request' : 'requests'} without a price
              </span>
            )}
            {totals.unpriced > 0 && pricesLink && (
              <a class="small-text" href={href('/prices')} onClick={(e) => routeClick(e, '/prices')}>
                Set prices
              </a>
            )}
          </dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{formatInt(totals.tokens)}</dd>
        </div>
      </dl>
      {totals.requests === 0 && <p class="empty">No requests in this period: the charts are flat.</p>}
      <div class="charts">
        {charts.breakdown ? (
          <>
            <TimeChart
              title={`Cost per ${per} by ${series.group_by}`}
              times={times}
              series={charts.breakdown.cost}
              stacked
              format={formatCost}
              onZoom={onZoom}
              summary={`Cost per ${per} by ${series.group_by}, stacked: ${charts.breakdown.cost.map((s) => s.label).join(', ')}; ${costText} in total`}
            />
            <TimeChart
              title={`Requests per ${per} by ${series.group_by}`}
              times={times}
              series={charts.breakdown.requests}
              stacked
              format={count}
              integer
              onZoom={onZoom}
              summary={`Requests per ${per} by ${series.group_by}, stacked: ${charts.breakdown.requests.map((s) => s.label).join(', ')}; ${totals.requests} in total`}
            />
          </>
        ) : (
          <>
            <TimeChart
              title={`Requests, errors and recoveries per ${per}`}
              times={times}
              series={charts.requests}
              format={count}
              integer
              onZoom={onZoom}
              summary={`${totals.requests} requests, ${totals.errors} errors and ${totals.recovered} recovered by a retry or fallback per ${per}`}
            />
            <TimeChart
              title={`Cost per ${per}`}
              times={times}
              series={charts.cost}
              format={formatCost}
              onZoom={onZoom}
              summary={`Cost per ${per}, ${costText} in total${totals.unpriced ? `, ${totals.unpriced} requests without a price` : ''}`}
            />
          </>
        )}
        <TimeChart
          title={`Tokens per ${per}`}
          times={times}
          series={charts.tokens}
          format={count}
          integer
          onZoom={onZoom}
          summary={`Prompt and completion tokens per ${per}`}
        />
        <TimeChart
          title={`Latency per ${per} (p50, p95${series.latency_percentiles === 'approximate' ? ', estimated' : ''})`}
          times={times}
          series={charts.latency}
          format={(v) => formatMs(v)}
          integer
          onZoom={onZoom}
          summary={`Median and 95th percentile latency per ${per}`}
        />
      </div>
      <details class="data-details">
        <summary>The numbers behind the charts</summary>
        <div class="table-wrap">
          <table class="data compact">
            <thead>
              <tr>
                <th scope="col">Bucket ({per}, starts)</th>
                <th scope="col" class="num">
                  Requests
                </th>
                <th scope="col" class="num">
                  Errors
                </th>
                <th scope="col" class="num">
                  Prompt tokens
                </th>
                <th scope="col" class="num">
                  Completion tokens
                </th>
                <th scope="col" class="num">
                  Cost
                </th>
                <th scope="col" class="num">
                  p50
                </th>
                <th scope="col" class="num">
                  p95
                </th>
              </tr>
            </thead>
            <tbody>
              {data
                .filter((row) => row.requests > 0)
                .map((row) => (
                  <tr key={row.bucket}>
                    <td>{formatDateTime(row.bucket)}</td>
                    <td class="num">{formatInt(row.requests)}</td>
                    <td class="num">{formatInt(row.errors)}</td>
                    <td class="num">{formatInt(row.prompt_tokens)}</td>
                    <td class="num">{formatInt(row.completion_tokens)}</td>
                    <td class="num">
                      <CostWithUnpriced row={row} />
                    </td>
                    <td class="num">{formatMs(row.latency_p50_ms)}</td>
                    <td class="num">{formatMs(row.latency_p95_ms)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      </details>
    </>
  );
}

/** A row's cost, and how many of its requests have no price (left out of it). */
function CostWithUnpriced({ row }: { row: Pick<SummaryRow, 'cost_usd' | 'unpriced_requests'> }) {
  if (row.unpriced_requests === 0) return <>{formatCost(row.cost_usd)}</>;
  const without = `${formatInt(row.unpriced_requests)} without a price`;
  return row.cost_usd === null ? <span class="unpriced-cost">{`no price (${without})`}</span> : <>{`${formatCost(row.cost_usd)} + ${without}`}</>;
}

function SummaryTable({
  rows,
  estimated,
  groupBy,
  names,
  period,
  filters,
}: {
  rows: SummaryRow[];
  estimated: boolean;
  groupBy: string;
  names: Map<string, string>;
  period: { from: string; to: string };
  filters: [string, string][];
}) {
  const maxCost = Math.max(...rows.map((r) => r.cost_usd ?? 0), 0);
  const maxRequests = Math.max(...rows.map((r) => r.requests), 0);
  const filterOf = ({ key, virtual_key_id }: SummaryRow): [string, string] | null => {
    if (key === null) return null;
    if (groupBy === 'user') return ['user', key];
    if (groupBy === 'model') return ['model', key];
    if (groupBy === 'provider') return ['provider', key];
    if (groupBy === 'operation') return ['operation', key];
    if (groupBy === 'api_key') return ['api_key_id', key];
    if (groupBy === 'virtual_key') return ['virtual_key', virtual_key_id ?? key];
    if (groupBy.startsWith('metadata.')) return [groupBy, key];
    return null;
  };
  return (
    <div class="table-wrap">
      <table class="data summary-table">
        <caption class="visually-hidden">Requests, errors, tokens, cost and latency by {groupBy}, most expensive first</caption>
        <thead>
          <tr>
            <th scope="col">{groupBy}</th>
            <th scope="col">Cost</th>
            <th scope="col">Requests</th>
            <th scope="col" class="num">
              Errors
            </th>
            <th scope="col" class="num">
              Tokens (in / out)
            </th>
            <th scope="col" class="num">
              <Percentile label="p50" estimated={estimated} />
            </th>
            <th scope="col" class="num">
              <Percentile label="p95" estimated={estimated} />
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const filter = filterOf(row);
            const name = row.key === null ? '(none)' : groupBy === 'api_key' ? (names.get(row.key) ?? row.key) : row.key;
            // A deleted virtual key and the new key given its slug: told apart by id.
            const shared = row.virtual_key_id && rows.some((other) => other !== row && other.key === row.key);
            const label = shared ? `${name} (${row.virtual_key_id!.slice(0, 8)}…)` : name;
            // The log over the same period, so that its list matches the numbers clicked.
            // The filters shown here go along, the clicked group replacing a filter of its own column.
            const to = filter
              ? `/logs?${new URLSearchParams([...filters.filter(([name]) => name !== filter[0]), filter, ['from', period.from], ['to', period.to]])}`
              : null;
            return (
              <tr key={row.virtual_key_id ?? row.key ?? '(none)'}>
                <th scope="row" data-label={groupBy}>
                  {to ? (
                    <a href={href(to)} onClick={(e) => routeClick(e, to)} title="Show these requests in the log">
                      {label}
                    </a>
                  ) : (
                    <span class="muted">{label}</span>
                  )}
                </th>
                <td data-label="Cost">
                  <Bar value={row.cost_usd ?? 0} max={maxCost} text={<CostWithUnpriced row={row} />} color="cost" />
                </td>
                <td data-label="Requests">
                  <Bar value={row.requests} max={maxRequests} text={formatInt(row.requests)} color="requests" />
                </td>
                <td data-label="Errors" class="num">
                  {formatInt(row.errors)}
                  {row.recovered > 0 && (
                    <span class="small-text muted" title="Answered after a failed try: a retry or a fallback recovered them">
                      {' '}
                      · {formatInt(row.recovered)} recovered
                    </span>
                  )}
                </td>
                <td data-label="Tokens" class="num">
                  {formatInt(row.prompt_tokens)} / {formatInt(row.completion_tokens)}
                </td>
                <td data-label="p50" class="num">
                  {formatMs(row.latency_p50_ms)}
                </td>
                <td data-label="p95" class="num">
                  {formatMs(row.latency_p95_ms)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A bar in proportion to the value (the largest of the column fills its track), the value beside it. */
function Bar({ value, max, text, color }: { value: number; max: number; text: ComponentChildren; color: string }) {
  const width = max > 0 ? (value / max) * 100 : 0;
  return (
    <div class="bar-cell">
      <span class="bar-track" aria-hidden="true">
        <span class={`bar bar-${color}`} style={{ width: `${width}%` }} />
      </span>
      <span class="bar-text">{text}</span>
    </div>
  );
}

function BudgetTable({ keys }: { keys: { api: KeyRow[]; virtual: KeyRow[] } }) {
  const rows = [
    ...keys.api.map((k) => ({ ...k, kind: 'API key', filter: ['api_key_id', k.id] as [string, string] })),
    ...keys.virtual.map((k) => ({ ...k, kind: 'Virtual key', filter: ['virtual_key', k.slug ?? k.id] as [string, string] })),
  ].sort((a, b) => share(b) - share(a) || b.spent_usd - a.spent_usd);
  if (rows.length === 0) return <p class="empty">No keys yet.</p>;
  return (
    <div class="table-wrap">
      <table class="data budget-table">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Kind</th>
            <th scope="col">Budget</th>
            <th scope="col">Used</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((k) => {
            const to = `/logs?${new URLSearchParams([k.filter])}`;
            return (
              <tr key={k.kind + k.id}>
                <th scope="row" data-label="Key">
                  <a href={href(to)} onClick={(e) => routeClick(e, to)}>
                    {k.name}
                  </a>
                  {k.slug && <span class="muted"> ({k.slug})</span>}
                </th>
                <td data-label="Kind">{k.kind}</td>
                <td data-label="Budget">
                  {k.budget_limit_usd === null ? <span class="muted">no budget</span> : `${formatCost(k.budget_limit_usd)} ${k.budget_period ?? 'in total'}`}
                </td>
                <td data-label="Used">
                  {k.budget_limit_usd === null ? (
                    <span>
                      <SpentText spent={k.spent_usd} unpriced={k.unpriced_requests} /> spent
                    </span>
                  ) : (
                    <div class="budget-used">
                      <meter
                        min={0}
                        max={k.budget_limit_usd || 1}
                        low={k.budget_limit_usd * 0.75}
                        high={k.budget_limit_usd * 0.9}
                        optimum={0}
                        value={Math.min(k.spent_usd, k.budget_limit_usd)}
                        aria-label={`${k.name}: budget used`}
                      />
                      <span>
                        <SpentText spent={k.spent_usd} unpriced={k.unpriced_requests} /> of {formatCost(k.budget_limit_usd)} ({Math.round(share(k) * 100)}%)
                      </span>
                      {k.spent_usd > k.budget_limit_usd && (
                        <strong class="over-budget" data-testid="over-budget">
                          Over budget by {formatCost(k.spent_usd - k.budget_limit_usd)}: its requests are refused (402)
                          {k.budget_period ? ' until the period ends' : ''}
                        </strong>
                      )}
                    </div>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function share(k: KeyRow): number {
  if (k.budget_limit_usd === null) return -1;
  if (k.budget_limit_usd === 0) return k.spent_usd > 0 ? 1 : 0;
  return k.spent_usd / k.budget_limit_usd;
}

/** A percentile column's name; over long ranges the value is estimated from latency histograms. */
function Percentile({ label, estimated }: { label: string; estimated: boolean }) {
  return estimated ? <abbr title="Estimated from latency histograms (bins 9% wide)">≈ {label}</abbr> : <>{label}</>;
}

/** `part` as a percentage of `whole`, one decimal. */
function percentOf(part: number, whole: number): string {
  return `${((part / whole) * 100).toFixed(1)}%`;
}
