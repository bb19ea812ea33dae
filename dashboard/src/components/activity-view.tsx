import { displayZone } from '../time-zone';
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, type EndUserActivity, type EndUserActivityPage, Summary, Timeseries } from '../api';
import { formatCost, formatDateTime, formatInt } from '../format';
import { href, navigate, routeClick } from '../router';
import { SpentText } from './budget-status';
import { ErrorRetry } from './error-retry';
import { ChartSeries, TimeChart } from './time-chart';

/** The periods an activity view offers, as Analytics names them (`range` in its URL). */
export const ACTIVITY_RANGES: Record<string, { label: string; ms: number }> = {
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
};
export const DEFAULT_ACTIVITY_RANGE = '30d';

/** A period ending now, fixed once per `range` (so "the last 30 days" does not move while reading). */
export function usePeriod(range: string): { from: string; to: string } {
  return useMemo(() => {
    const to = new Date();
    const { ms } = ACTIVITY_RANGES[range] ?? ACTIVITY_RANGES[DEFAULT_ACTIVITY_RANGE];
    return { from: new Date(to.getTime() - ms).toISOString(), to: to.toISOString() };
  }, [range]);
}

/** Goes to `path` with the query changed (an empty value, and the default range, dropped), in place of the page shown. */
export function replaceQuery(path: string, query: URLSearchParams, changes: Record<string, string>): void {
  const next = new URLSearchParams(query);
  for (const [name, value] of Object.entries(changes)) {
    if (value && !(name === 'range' && value === DEFAULT_ACTIVITY_RANGE)) next.set(name, value);
    else next.delete(name);
  }
  const text = next.toString();
  navigate(`${path}${text ? `?${text}` : ''}`, { replace: true });
}

/** A link inside the dashboard. */
export function RouteLink({ to, label, children }: { to: string; label?: string; children: ComponentChildren }) {
  return (
    <a href={href(to)} onClick={(e) => routeClick(e, to)} aria-label={label}>
      {children}
    </a>
  );
}

/** The period picker of an activity page: a select that calls `onChange` with the range's name. */
export function PeriodSelect({ id, range, onChange }: { id: string; range: string; onChange: (range: string) => void }) {
  return (
    <div class="field">
      <label for={id}>Period</label>
      <select id={id} value={range} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {Object.entries(ACTIVITY_RANGES).map(([value, { label }]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Spend as known ("$X + N unpriced"; never a made-up $0 for requests without a price). */
export const Spend = ({ row }: { row: Pick<EndUserActivity, 'cost_usd' | 'unpriced_requests'> }) => (
  <SpentText spent={row.cost_usd ?? 0} unpriced={row.unpriced_requests} />
);

/**
 * What one end user or one API key did in a period (the analytics filter `user` or
 * `api_key_id`): totals, requests and spend over time, the top models and, for a key, its
 * top end users, with links to the log and to Analytics filtered the same way.
 */
export function ActivityView({ filter, range, rangeLabel }: { filter: ['user' | 'api_key_id', string]; range: string; rangeLabel: string }) {
  const period = usePeriod(range);
  const [series, setSeries] = useState<Timeseries | null>(null);
  const [models, setModels] = useState<Summary | null>(null);
  const [users, setUsers] = useState<EndUserActivity[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [name] = filter;
  const query = new URLSearchParams([['from', period.from], ['to', period.to], filter]).toString();

  useEffect(() => {
    let live = true;
    setError(null);
    setSeries(null);
    Promise.all([
      api<Timeseries>('GET', `/v1/analytics/timeseries?${query}&tz=${encodeURIComponent(displayZone())}`),
      api<Summary>('GET', `/v1/analytics/summary?group_by=model&${query}`),
      name === 'api_key_id' ? api<EndUserActivityPage>('GET', `/v1/analytics/users?limit=10&${query}`).then((page) => page.data) : Promise.resolve(null),
    ]).then(
      ([s, m, u]) => {
        if (!live) return;
        setSeries(s);
        setModels(m);
        setUsers(u);
      },
      (e: ApiError) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [query, attempt]);

  const times = useMemo(() => (series ? series.data.map((row) => Date.parse(row.bucket) / 1000) : []), [series]);
  if (error) return <ErrorRetry message={error} onRetry={() => setAttempt((n) => n + 1)} />;
  if (!series || !models)
    return (
      <p class="muted" role="status">
        Loading the activity…
      </p>
    );
  const totals = series.data.reduce(
    (t, row) => ({
      requests: t.requests + row.requests,
      errors: t.errors + row.errors,
      cost: t.cost + (row.cost_usd ?? 0),
      unpriced: t.unpriced + row.unpriced_requests,
    }),
    { requests: 0, errors: 0, cost: 0, unpriced: 0 },
  );
  const per = series.interval;
  const requests: ChartSeries[] = [
    { label: 'Requests', color: '#1d4ed8', values: series.data.map((r) => r.requests), fill: 'rgba(29,78,216,0.08)' },
    { label: 'Errors', color: '#b91c1c', values: series.data.map((r) => r.errors) },
  ];
  const cost: ChartSeries[] = [{ label: 'Cost (USD)', color: '#047857', values: series.data.map((r) => r.cost_usd), fill: 'rgba(4,120,87,0.08)' }];
  const logs = `/logs?${new URLSearchParams([filter])}`;
  const analytics = `/analytics?${new URLSearchParams([['range', range], filter])}`;
  return (
    <div class="activity" data-testid="activity">
      <dl class="totals">
        <div>
          <dt>Requests</dt>
          <dd data-testid="activity-requests">{formatInt(totals.requests)}</dd>
        </div>
        <div>
          <dt>Errors</dt>
          <dd data-testid="activity-errors">{formatInt(totals.errors)}</dd>
        </div>
        <div>
          <dt>Spend</dt>
          <dd data-testid="activity-spend">
            <SpentText spent={totals.cost} unpriced={totals.unpriced} />
          </dd>
        </div>
      </dl>
      <p class="links">
        <RouteLink to={logs}>See requests</RouteLink> · <RouteLink to={analytics}>Open in Analytics</RouteLink>
      </p>
      {totals.requests === 0 && <p class="empty">No requests in {rangeLabel.toLowerCase()}.</p>}
      <div class="charts">
        <TimeChart
          title={`Requests and errors per ${per}`}
          times={times}
          series={requests}
          format={(v) => formatInt(v)}
          integer
          summary={`${totals.requests} requests and ${totals.errors} errors per ${per}`}
        />
        <TimeChart
          title={`Spend per ${per}`}
          times={times}
          series={cost}
          format={formatCost}
          summary={`Spend per ${per}, ${formatCost(totals.cost)} in total${totals.unpriced ? `, ${totals.unpriced} requests without a price` : ''}`}
        />
      </div>
      <h2>Top models</h2>
      {models.data.length === 0 ? (
        <p class="muted">None in this period.</p>
      ) : (
        <div class="table-wrap">
          <table class="data" data-testid="top-models">
            <caption class="visually-hidden">Models by spend, then requests</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" class="num">
                  Requests
                </th>
                <th scope="col" class="num">
                  Errors
                </th>
                <th scope="col" class="num">
                  Spend
                </th>
              </tr>
            </thead>
            <tbody>
              {models.data.slice(0, 10).map((row) => (
                <tr key={row.key ?? ''}>
                  <td data-label="Model">{row.key ?? <span class="muted">(none)</span>}</td>
                  <td data-label="Requests" class="num">
                    {formatInt(row.requests)}
                  </td>
                  <td data-label="Errors" class="num">
                    {formatInt(row.errors)}
                  </td>
                  <td data-label="Spend" class="num">
                    <Spend row={row} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {users && (
        <>
          <h2>Top end users</h2>
          {users.length === 0 ? (
            <p class="muted">No requests with a user in this period.</p>
          ) : (
            <div class="table-wrap">
              <table class="data" data-testid="top-users">
                <caption class="visually-hidden">End users by spend, then requests</caption>
                <thead>
                  <tr>
                    <th scope="col">User</th>
                    <th scope="col" class="num">
                      Requests
                    </th>
                    <th scope="col" class="num">
                      Spend
                    </th>
                    <th scope="col">Last seen</th>
                  </tr>
                </thead>
                <tbody>
                  {users.map((row) => (
                    <tr key={row.user}>
                      <td data-label="User">
                        <RouteLink to={`/end-users/${encodeURIComponent(row.user)}?range=${range}`}>{row.user}</RouteLink>
                      </td>
                      <td data-label="Requests" class="num">
                        {formatInt(row.requests)}
                      </td>
                      <td data-label="Spend" class="num">
                        <Spend row={row} />
                      </td>
                      <td data-label="Last seen">{formatDateTime(row.last_seen)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </div>
  );
}
