import { href, routeClick } from '../router';
import { KINDS, Kind, useName } from '../names';

/**
 * An admin object named by its name and linked to its page, in place of the UUID a log
 * row holds. While the name is read, and when it cannot be (a deleted key: 404), the id.
 */
export function NamedLink({ kind, id }: { kind: Kind; id: string }) {
  const named = useName(kind, id);
  if (named === undefined)
    return (
      <code class="muted" aria-busy="true">
        {id}
      </code>
    );
  if ('missing' in named)
    return (
      <span>
        <code>{id}</code>{' '}
        <span class="muted small-text">{named.missing ? `(no such ${KINDS[kind].label} now)` : `(its name could not be read: ${named.reason})`}</span>
      </span>
    );
  return (
    <a href={href(named.page)} onClick={(e) => routeClick(e, named.page)} title={`${KINDS[kind].label} ${id}`} data-testid={`name-${kind}`}>
      {named.name}
    </a>
  );
}
