import { RowBudgetStatus } from '../components/budget-status';
import { formatCost } from '../format';
import { href, routeClick } from '../router';
import { PERIODS } from './resources';
import type { EndUser } from '../api';
import type { ResourceSpec } from './resource-spec';

const logsOf = (user: string) => {
  const to = `/logs?${new URLSearchParams({ user })}`;
  return (
    <a href={href(to)} onClick={(e) => routeClick(e, to)} aria-label={`See requests of ${user}`}>
      See requests
    </a>
  );
};

const metadataCell = (row: EndUser) => {
  const entries = Object.entries(row.metadata);
  if (!entries.length) return <span class="muted">—</span>;
  return (
    <ul class="inline-list">
      {entries.map(([key, value]) => (
        <li key={key}>
          <code>
            {key}={value}
          </code>
        </li>
      ))}
    </ul>
  );
};

/**
 * End users: the `user` values requests carry (the OpenAI `user` field), each with a
 * budget of its own. Listed, created, edited and deleted by the generic resource page.
 */
export const END_USERS: ResourceSpec<EndUser> = {
  kind: 'end-user',
  title: 'End users',
  singular: 'end user',
  path: '/v1/end-users',
  intro: (
    <>
      The people or customers your application serves, as requests name them in <code>user</code>. Give one a budget and the gateway refuses its requests (402)
      once the period's spend reaches it. Spend counts every request with that <code>user</code>, whether or not it is listed here.
    </>
  ),
  idOf: (row) => row.user,
  nameOf: (row) => row.user,
  columns: [
    { label: 'User', render: (row) => <strong>{row.user}</strong> },
    {
      label: 'Budget',
      render: (row) => <RowBudgetStatus row={row} />,
    },
    {
      label: 'Remaining',
      render: (row) => (row.budget_remaining_usd === null ? <span class="muted">—</span> : formatCost(row.budget_remaining_usd)),
      num: true,
    },
    { label: 'Metadata', render: metadataCell },
    { label: 'Logs', render: (row) => logsOf(row.user) },
  ],
  fields: [
    {
      name: 'user',
      label: 'User',
      kind: 'text',
      required: true,
      createOnly: true,
      placeholder: 'alice@example.com',
      help: 'Exactly as requests send it in user.',
    },
    {
      name: 'budget_limit_usd',
      label: 'Budget (USD)',
      kind: 'number',
      nullable: true,
      help: 'Requests are refused (402) once the period’s spend reaches it. Empty: no budget.',
    },
    {
      name: 'budget_period',
      label: 'Budget period',
      kind: 'select',
      options: PERIODS,
      nullable: true,
      help: 'No period: the budget counts all spend, for good.',
    },
    {
      name: 'metadata',
      label: 'Metadata (JSON)',
      kind: 'json',
      json: 'object',
      placeholder: '{"plan": "free"}',
      help: 'Notes of your own, such as a plan or a customer id.',
    },
  ],
  deleteLabel: 'Delete',
  empty: 'No end users with a budget yet. Create one to cap what one user of your application may spend.',
};
