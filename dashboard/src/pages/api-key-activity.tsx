import { ACTIVITY_RANGES, ActivityView, DEFAULT_ACTIVITY_RANGE, PeriodSelect, RouteLink } from '../components/activity-view';
import { useName } from '../names';
import { Location, navigate } from '../router';
import type { ResourceSpec } from './resource-spec';

/** `/api-keys/<id>/activity`: the key's id, or null for another address. */
export function apiKeyActivityId(path: string): string | null {
  const match = /^\/api-keys\/([^/]+)\/activity$/.exec(path);
  return match ? decodeURIComponent(match[1]) : null;
}

const activityPath = (id: string, range = DEFAULT_ACTIVITY_RANGE) =>
  `/api-keys/${encodeURIComponent(id)}/activity${range === DEFAULT_ACTIVITY_RANGE ? '' : `?range=${range}`}`;

/** The API keys' spec with a link to each key's activity (in the list and on the key's own page). */
export function withActivityLink<R extends { id: string }>(spec: ResourceSpec<R>): ResourceSpec<R> {
  return {
    ...spec,
    columns: [
      ...spec.columns,
      {
        label: 'Activity',
        render: (row) => (
          <RouteLink to={activityPath(row.id)} label={`Activity of ${spec.nameOf(row)}`}>
            Activity
          </RouteLink>
        ),
      },
    ],
  };
}

/** One API key's requests and spend over time, top models and top end users (the analytics filter `api_key_id`). */
export function ApiKeyActivityPage({ id, location }: { id: string; location: Location }) {
  const named = useName('api-key', id);
  const range = ACTIVITY_RANGES[location.query.get('range') ?? ''] ? location.query.get('range')! : DEFAULT_ACTIVITY_RANGE;
  const name = named && 'name' in named ? named.name : id;
  return (
    <section class="api-key-activity" aria-labelledby="api-key-activity-title">
      <p class="small-text">
        <RouteLink to="/api-keys">All API keys</RouteLink> · <RouteLink to={`/api-keys/${encodeURIComponent(id)}`}>This key’s settings</RouteLink>
      </p>
      <div class="page-head">
        <h1 id="api-key-activity-title">Activity of API key “{name}”</h1>
      </div>
      <div class="period">
        <PeriodSelect id="key-activity-period" range={range} onChange={(value) => navigate(activityPath(id, value), { replace: true })} />
      </div>
      <ActivityView filter={['api_key_id', id]} range={range} rangeLabel={ACTIVITY_RANGES[range].label} />
    </section>
  );
}
