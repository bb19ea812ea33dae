import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, type EndUser, type EndUserActivity, type EndUserActivityPage, listAll } from '../api';
import { RowBudgetStatus } from '../components/budget-status';
import { ACTIVITY_RANGES, ActivityView, DEFAULT_ACTIVITY_RANGE, PeriodSelect, replaceQuery, RouteLink, Spend, usePeriod } from '../components/activity-view';
import { ErrorRetry } from '../components/error-retry';
import { formatCost, formatDateTime, formatInt } from '../format';
import { Location, navigate } from '../router';
import { END_USERS } from './end-users';
import { ResourceForm } from './resource-form';
import type { FormSpec } from './resource-spec';

const PAGE = 50;

/** The END_USERS form with the user already filled in (a budget for someone seen in the log). */
const specFor = (user: string): FormSpec<EndUser> => ({
  ...END_USERS,
  fields: END_USERS.fields.map((field) => (field.name === 'user' ? { ...field, initial: user } : field)),
});

const userPath = (user: string, range: string) => `/end-users/${encodeURIComponent(user)}${range === DEFAULT_ACTIVITY_RANGE ? '' : `?range=${range}`}`;
const logsPath = (user: string) => `/logs?${new URLSearchParams({ user })}`;
const analyticsPath = (user: string, range: string) => `/analytics?${new URLSearchParams({ range, user })}`;

/**
 * End users: everyone who made requests in the period (`GET /v1/analytics/users`), with
 * those who have a budget record; `/end-users/<user>` is one user's activity. Budgets are
 * the END_USERS records (`/v1/end-users`), created, edited and deleted with the resource
 * page's form; `mayManageBudgets`: the role may (owners and admins).
 */
export function EndUsersPage({ location, mayManageBudgets }: { location: Location; mayManageBudgets: boolean }) {
  const selected = location.path.startsWith('/end-users/') ? decodeURIComponent(location.path.slice('/end-users/'.length)) : null;
  const range = ACTIVITY_RANGES[location.query.get('range') ?? ''] ? location.query.get('range')! : DEFAULT_ACTIVITY_RANGE;
  if (selected) return <EndUserView user={selected} range={range} mayManageBudgets={mayManageBudgets} />;
  return <EndUserList query={location.query} range={range} mayManageBudgets={mayManageBudgets} />;
}

function EndUserList({ query, range, mayManageBudgets }: { query: URLSearchParams; range: string; mayManageBudgets: boolean }) {
  const q = query.get('q') ?? '';
  const period = usePeriod(range);
  const [search, setSearch] = useState(q);
  const [page, setPage] = useState<EndUserActivityPage | null>(null);
  // The budget records by user: their spend in the budget's own period, as /v1/end-users reads it.
  const [records, setRecords] = useState<Map<string, EndUser>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<{ spec: FormSpec<EndUser>; row: EndUser | null } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [loads, setLoads] = useState(0);

  const params = (cursor: string | null) =>
    new URLSearchParams([['from', period.from], ['to', period.to], ['limit', String(PAGE)], ...(q ? [['q', q]] : []), ...(cursor ? [['cursor', cursor]] : [])]);

  useEffect(() => {
    let live = true;
    setError(null);
    setPage(null);
    Promise.all([
      api<EndUserActivityPage>('GET', `/v1/analytics/users?${params(null)}`),
      mayManageBudgets ? listAll<EndUser>('/v1/end-users', 5000) : Promise.resolve([]),
    ]).then(
      ([found, budgets]) => {
        if (!live) return;
        setPage(found);
        setRecords(new Map(budgets.map((row) => [row.user, row])));
      },
      (e: ApiError) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [period, q, loads]);

  const more = async () => {
    try {
      const next = await api<EndUserActivityPage>('GET', `/v1/analytics/users?${params(page!.next_cursor)}`);
      setPage({ ...next, data: [...page!.data, ...next.data] });
    } catch (e) {
      setError((e as ApiError).message);
    }
  };

  const setQuery = (changes: Record<string, string>) => replaceQuery('/end-users', query, changes);

  const remove = async (record: EndUser) => {
    try {
      await api('DELETE', `/v1/end-users/${encodeURIComponent(record.id)}`);
      setConfirming(null);
      setNotice(`Deleted end user “${record.user}”.`);
      setLoads((n) => n + 1);
    } catch (e) {
      setError((e as ApiError).message);
    }
  };

  const rangeLabel = ACTIVITY_RANGES[range].label;
  return (
    <div class="resources end-users">
      <div class="page-head">
        <h1>End users</h1>
        {mayManageBudgets && editing === null && (
          <button type="button" onClick={() => (setEditing({ spec: END_USERS, row: null }), setNotice(null))}>
            New end user
          </button>
        )}
      </div>
      <p class="intro">
        Everyone who made requests, as requests name them in <code>user</code>, with what they spent. Give one a budget and the gateway refuses its requests
        (402) once the period's spend reaches it; people with a budget are listed even before their first request.
      </p>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {editing && (
        <ResourceForm
          spec={editing.spec}
          row={editing.row}
          onCancel={() => setEditing(null)}
          onSaved={(saved, created) => {
            setEditing(null);
            setNotice(`${created ? 'Created' : 'Saved'} end user “${saved.user}”.`);
            setLoads((n) => n + 1);
          }}
        />
      )}
      <form
        class="period"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ q: search.trim() });
        }}
      >
        <div class="field">
          <label for="eu-search">User begins with</label>
          <input id="eu-search" type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} placeholder="alice" />
        </div>
        <PeriodSelect id="eu-period" range={range} onChange={(value) => setQuery({ range: value })} />
        <button type="submit" class="secondary">
          Search
        </button>
      </form>
      {error && <ErrorRetry message={error} onRetry={() => setLoads((n) => n + 1)} />}
      {page === null ? (
        !error && (
          <p class="muted" role="status">
            Loading…
          </p>
        )
      ) : page.data.length === 0 ? (
        <div class="empty">
          <h2>{q ? `No end users beginning with “${q}”` : 'No end users yet'}</h2>
          <p>No request named a user in {rangeLabel.toLowerCase()}, and no end user has a budget.</p>
        </div>
      ) : (
        <>
          <p class="muted small-text" data-testid="end-user-count">
            {formatInt(page.data.length)} of {formatInt(page.total)} end users · {rangeLabel}
          </p>
          <div class="table-wrap">
            <table class="data resource-table end-user-table">
              <caption class="visually-hidden">End users by spend in {rangeLabel.toLowerCase()}, then requests</caption>
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">First seen</th>
                  <th scope="col">Last seen</th>
                  <th scope="col" class="num">
                    Requests
                  </th>
                  <th scope="col" class="num">
                    Spend
                  </th>
                  {mayManageBudgets && <th scope="col">Budget</th>}
                  {mayManageBudgets && (
                    <th scope="col" class="num">
                      Remaining
                    </th>
                  )}
                  <th scope="col">Links</th>
                  {mayManageBudgets && (
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {page.data.map((row) => {
                  const record = row.budget ? records.get(row.user) : undefined;
                  return (
                    <tr key={row.user}>
                      <td data-label="User">
                        <RouteLink to={userPath(row.user, range)}>{row.user}</RouteLink>
                      </td>
                      <td data-label="First seen">{formatDateTime(row.first_seen)}</td>
                      <td data-label="Last seen">{formatDateTime(row.last_seen)}</td>
                      <td data-label="Requests" class="num">
                        {formatInt(row.requests)}
                        {row.errors > 0 && <span class="muted"> ({formatInt(row.errors)} failed)</span>}
                      </td>
                      <td data-label="Spend" class="num">
                        <Spend row={row} />
                      </td>
                      {mayManageBudgets && <td data-label="Budget">{record ? <RowBudgetStatus row={record} /> : <span class="muted">—</span>}</td>}
                      {mayManageBudgets && (
                        <td data-label="Remaining" class="num">
                          {record?.budget_remaining_usd === null || record?.budget_remaining_usd === undefined ? (
                            <span class="muted">—</span>
                          ) : (
                            formatCost(record.budget_remaining_usd)
                          )}
                        </td>
                      )}
                      <td data-label="Links">
                        <RouteLink to={logsPath(row.user)} label={`See requests of ${row.user}`}>
                          See requests
                        </RouteLink>{' '}
                        ·{' '}
                        <RouteLink to={analyticsPath(row.user, range)} label={`Analytics of ${row.user}`}>
                          Analytics
                        </RouteLink>
                      </td>
                      {mayManageBudgets && (
                        <td class="row-actions" data-label="Actions">
                          {record && confirming === row.user ? (
                            <span class="confirm" role="group" aria-label={`Confirm: delete ${row.user}`}>
                              <span>Delete the budget of “{row.user}”?</span>
                              <button type="button" class="danger small" onClick={() => void remove(record)} autoFocus>
                                Yes, delete
                              </button>
                              <button type="button" class="secondary small" onClick={() => setConfirming(null)}>
                                Cancel
                              </button>
                            </span>
                          ) : record ? (
                            <>
                              <button
                                type="button"
                                class="secondary small"
                                aria-label={`Edit ${row.user}`}
                                onClick={() => (setEditing({ spec: END_USERS, row: record }), setNotice(null))}
                              >
                                Edit budget
                              </button>
                              <button type="button" class="secondary small" aria-label={`Delete ${row.user}`} onClick={() => setConfirming(row.user)}>
                                Delete
                              </button>
                            </>
                          ) : (
                            <button
                              type="button"
                              class="secondary small"
                              aria-label={`Set a budget for ${row.user}`}
                              onClick={() => (setEditing({ spec: specFor(row.user), row: null }), setNotice(null))}
                            >
                              Set a budget
                            </button>
                          )}
                        </td>
                      )}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
      {page?.next_cursor && (
        <div class="more">
          <button type="button" class="secondary" onClick={() => void more()}>
            Load more
          </button>
        </div>
      )}
    </div>
  );
}

/** One end user: their figures in the period, first and last request, budget, activity over time and top models. */
function EndUserView({ user, range, mayManageBudgets }: { user: string; range: string; mayManageBudgets: boolean }) {
  const period = usePeriod(range);
  const [row, setRow] = useState<EndUserActivity | null>(null);
  const [error, setError] = useState<string | null>(null);
  const path = useMemo(() => `/v1/analytics/users/${encodeURIComponent(user)}?${new URLSearchParams(period)}`, [user, period]);

  useEffect(() => {
    let live = true;
    setRow(null);
    setError(null);
    api<EndUserActivity>('GET', path).then(
      (found) => live && setRow(found),
      (e: ApiError) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [path]);

  const setRange = (value: string) => navigate(userPath(user, value), { replace: true });
  return (
    <section class="end-user" aria-labelledby="end-user-title">
      <p class="small-text">
        <RouteLink to={range === DEFAULT_ACTIVITY_RANGE ? '/end-users' : `/end-users?range=${range}`}>All end users</RouteLink>
      </p>
      <div class="page-head">
        <h1 id="end-user-title">End user “{user}”</h1>
      </div>
      <div class="period">
        <PeriodSelect id="eu-view-period" range={range} onChange={setRange} />
      </div>
      {error && (
        <div class="error-box" role="alert">
          <p>{error}</p>
        </div>
      )}
      {row && (
        <dl class="facts" data-testid="end-user-facts">
          <dt>First seen</dt>
          <dd>{formatDateTime(row.first_seen)}</dd>
          <dt>Last seen</dt>
          <dd>{formatDateTime(row.last_seen)}</dd>
          {mayManageBudgets && (
            <>
              <dt>Budget</dt>
              <dd>
                {row.budget ? (
                  `${row.budget.budget_limit_usd === null ? 'no limit' : formatCost(row.budget.budget_limit_usd)} ${row.budget.budget_period ?? 'in total'}`
                ) : (
                  <span class="muted">none</span>
                )}{' '}
                · <RouteLink to={`/end-users?${new URLSearchParams({ q: user })}`}>Manage on the list</RouteLink>
              </dd>
            </>
          )}
        </dl>
      )}
      <ActivityView filter={['user', user]} range={range} rangeLabel={ACTIVITY_RANGES[range].label} />
    </section>
  );
}
