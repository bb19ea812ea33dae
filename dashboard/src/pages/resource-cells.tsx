/** Table cells the resource pages share: budget, last use, version history and the link to an object's requests. */
import type { ComponentChildren } from 'preact';
import { formatDateTime, formatRelative } from '../format';
import { href, routeClick } from '../router';
import { RowBudgetStatus, type SpendFields } from '../components/budget-status';
import type { Config, Prompt } from '../api';
import { versionsPath } from './version-history';

export const budgetCell = (row: SpendFields) => <RowBudgetStatus row={row} />;

/** The version, linked to the history page of the config or prompt (its versions, diffs, restore). */
export const historyLink = (row: Config | Prompt) => {
  const to = versionsPath(row.object === 'prompt' ? 'prompt' : 'config', row.slug);
  return (
    <a href={href(to)} onClick={(e) => routeClick(e, to)} title="Version history: changes and restore">
      {row.version} · history
    </a>
  );
};

export const logsLink = (filter: [string, string], label: string) => {
  const to = `/logs?${new URLSearchParams([filter])}`;
  return (
    <a href={href(to)} onClick={(e) => routeClick(e, to)}>
      {label}
    </a>
  );
};

/** When a key's newest request was stored: relative, the exact time on hover; "never" before its first. */
export function lastUsedCell(row: { last_used_at: string | null }): ComponentChildren {
  if (!row.last_used_at) return <span class="muted">never</span>;
  return (
    <time dateTime={row.last_used_at} title={formatDateTime(row.last_used_at)}>
      {formatRelative(row.last_used_at)}
    </time>
  );
}
