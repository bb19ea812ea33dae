import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { KINDS } from '../names';
import { href, routeClick } from '../router';
import { idFieldOf, titleInText, type ResourceSpec } from './resource-spec';

/**
 * One admin object's page (`/api-keys/<id>`, `/virtual-keys/<slug>` …), where the log's
 * names link to: its facts as the list shows them, and its edit button, above the list.
 */
export function ResourceItem<R extends object>({ spec, id, onEdit }: { spec: ResourceSpec<R>; id: string; onEdit: (row: R) => void }) {
  const [row, setRow] = useState<R | null>(null);
  const [error, setError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const listPath = KINDS[spec.kind].page;

  useEffect(() => {
    let live = true;
    api<R>('GET', `${spec.path}/${encodeURIComponent(id)}`).then(
      (found) => live && setRow(found),
      (e: ApiError) => live && setError(e.status === 404 ? `There is no ${spec.singular} “${id}”: it may have been deleted.` : e.message),
    );
    return () => {
      live = false;
    };
  }, [spec, id]);

  useEffect(() => {
    if (row) heading.current?.focus();
  }, [row !== null]);

  const back = (
    <a href={href(listPath)} onClick={(e) => routeClick(e, listPath)}>
      All {titleInText(spec)}
    </a>
  );
  if (error)
    return (
      <div class="error-box" role="alert">
        <p>{error}</p>
        <p>{back}</p>
      </div>
    );
  if (!row)
    return (
      <p class="muted" role="status">
        Loading the {spec.singular}…
      </p>
    );
  return (
    <section class="resource-item" aria-labelledby="resource-item-title">
      <div class="block-head">
        <h2 id="resource-item-title" ref={heading} tabIndex={-1}>
          {spec.singular[0].toUpperCase() + spec.singular.slice(1)} “{spec.nameOf(row)}”
        </h2>
        {!spec.readOnly && (
          <button type="button" class="secondary small" onClick={() => onEdit(row)}>
            Edit
          </button>
        )}
      </div>
      <dl class="facts">
        {spec.columns.map((column) => (
          <Fragment key={column.label}>
            <dt>{column.label}</dt>
            <dd>{column.render(row)}</dd>
          </Fragment>
        ))}
        <dt>Id</dt>
        <dd>
          <code>{idFieldOf(row) ?? spec.idOf(row)}</code>
        </dd>
      </dl>
      {spec.details?.(row)}
      <p class="small-text">{back}</p>
    </section>
  );
}
