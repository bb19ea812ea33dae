/**
 * The generic resource page: one kind of admin object listed (with its own page above the
 * list when the address names one), created and edited through its form, deleted after a
 * confirmation. What each kind shows and asks is its spec (api-keys.tsx, configs.tsx …).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, currentSession, ListPage } from '../api';
import { forgetNames, KINDS } from '../names';
import { useLocation } from '../router';
import { ResourceForm } from './resource-form';
import { ResourceItem } from './resource-item';
import { idFieldOf, titleInText, type ResourceSpec } from './resource-spec';
import { SecretOnce } from './secret-once';
import { ErrorRetry } from '../components/error-retry';

// Where end-users.tsx has read the budget periods from.
export { PERIODS } from './resource-limits';

/** List, create, edit and delete one kind of admin object. */
export function ResourcePage<R extends object>({ spec, onChanged }: { spec: ResourceSpec<R>; onChanged?: () => void }) {
  // `/api-keys/<id>`, `/virtual-keys/<slug>`…: one object's page, shown above the list (links from the log name them so).
  const location = useLocation();
  const selectedPart = location.path.slice(KINDS[spec.kind].page.length + 1);
  const selected = selectedPart ? decodeURIComponent(selectedPart) : null;
  const [loads, setLoads] = useState(0);
  const [rows, setRows] = useState<R[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<R | 'new' | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  // Revoking the key this dashboard is signed in with takes a second, explicit confirmation.
  const [confirmingSignOut, setConfirmingSignOut] = useState(false);
  const signedInWith = (row: R) => {
    const key = currentSession()?.api_key;
    return spec.path === '/v1/api-keys' && key != null && idFieldOf(row) === key.id;
  };
  const [notice, setNotice] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);

  const load = async () => {
    setError(null);
    try {
      const page = await api<ListPage<R>>('GET', `${spec.path}?limit=50`);
      setRows(page.data);
      setCursor(page.next_cursor);
      setLoads((n) => n + 1);
    } catch (e) {
      setError((e as ApiError).message);
    }
  };

  useEffect(() => {
    setRows(null);
    setEditing(null);
    setSecret(null);
    setNotice(null);
    void load();
  }, [spec]);

  const more = async () => {
    try {
      const page = await api<ListPage<R>>('GET', `${spec.path}?limit=50&cursor=${encodeURIComponent(cursor!)}`);
      setRows([...(rows ?? []), ...page.data]);
      setCursor(page.next_cursor);
    } catch (e) {
      setError((e as ApiError).message);
    }
  };

  const remove = async (row: R) => {
    try {
      await api('DELETE', `${spec.path}/${encodeURIComponent(spec.idOf(row))}`);
      forgetNames(spec.kind);
      setConfirming(null);
      onChanged?.();
      await load();
      setNotice(`${spec.deleteLabel === 'Revoke' ? 'Revoked' : 'Deleted'} ${spec.singular} “${spec.nameOf(row)}”.`);
    } catch (e) {
      setNotice(null);
      setError((e as ApiError).message);
    }
  };

  return (
    <div class="resources">
      <div class="page-head">
        <h1>{spec.title}</h1>
        {editing === null && !spec.readOnly && (
          <button
            type="button"
            onClick={() => {
              setEditing('new');
              setSecret(null);
              setNotice(null);
            }}
          >
            New {spec.singular}
          </button>
        )}
      </div>
      <p class="intro">{spec.intro}</p>
      {secret && <SecretOnce name={secret.name} secret={secret.key} onDone={() => setSecret(null)} />}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {editing !== null && (
        <ResourceForm
          spec={spec}
          row={editing === 'new' ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={async (saved, created) => {
            setEditing(null);
            forgetNames(spec.kind);
            onChanged?.();
            if (created && spec.secretOnCreate && 'key' in saved && typeof saved.key === 'string') setSecret({ name: spec.nameOf(saved), key: saved.key });
            await load();
            if (!(created && spec.secretOnCreate)) setNotice(`${created ? 'Created' : 'Saved'} ${spec.singular} “${spec.nameOf(saved)}”.`);
          }}
        />
      )}
      {selected && editing === null && (
        <ResourceItem
          key={`${selected}:${loads}`}
          spec={spec}
          id={selected}
          onEdit={(row) => {
            setEditing(row);
            setSecret(null);
            setNotice(null);
          }}
        />
      )}
      {error && <ErrorRetry message={error} onRetry={() => void load()} />}
      {rows === null ? (
        !error && (
          <p class="muted" role="status">
            Loading…
          </p>
        )
      ) : rows.length === 0 ? (
        <div class="empty">
          <h2>No {titleInText(spec)} yet</h2>
          <p>{spec.empty}</p>
        </div>
      ) : (
        <div class="table-wrap">
          <table class="data resource-table">
            <caption class="visually-hidden">{spec.title}, newest first</caption>
            <thead>
              <tr>
                {spec.columns.map((c) => (
                  <th scope="col" key={c.label} class={c.num ? 'num' : undefined}>
                    {c.label}
                  </th>
                ))}
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => {
                const id = spec.idOf(row);
                const isSelected = selected !== null && (selected === id || selected === idFieldOf(row));
                return (
                  <tr key={id} class={isSelected ? 'selected' : undefined} aria-current={isSelected ? 'true' : undefined}>
                    {spec.columns.map((c) => (
                      <td key={c.label} data-label={c.label} class={c.num ? 'num' : undefined}>
                        {c.render(row)}
                      </td>
                    ))}
                    <td class="row-actions" data-label="Actions">
                      {confirming === id && confirmingSignOut ? (
                        <span class="confirm" role="group" aria-label={`Confirm again: revoke ${spec.nameOf(row)} and sign out`}>
                          <strong>
                            “{spec.nameOf(row)}” is the key you are signed in with: revoking it signs you out of the dashboard, and only another admin key can
                            sign in again.
                          </strong>
                          <button type="button" class="danger small" onClick={() => void remove(row)} autoFocus>
                            Revoke and sign out
                          </button>
                          <button
                            type="button"
                            class="secondary small"
                            onClick={() => {
                              setConfirming(null);
                              setConfirmingSignOut(false);
                            }}
                          >
                            Cancel
                          </button>
                        </span>
                      ) : confirming === id ? (
                        <span class="confirm" role="group" aria-label={`Confirm: ${spec.deleteLabel.toLowerCase()} ${spec.nameOf(row)}`}>
                          <span>
                            {spec.deleteLabel} “{spec.nameOf(row)}”?
                          </span>
                          <button
                            type="button"
                            class="danger small"
                            onClick={() => (signedInWith(row) ? setConfirmingSignOut(true) : void remove(row))}
                            autoFocus
                          >
                            Yes, {spec.deleteLabel.toLowerCase()}
                          </button>
                          <button type="button" class="secondary small" onClick={() => setConfirming(null)}>
                            Cancel
                          </button>
                        </span>
                      ) : (
                        !spec.readOnly && (
                          <>
                            <button
                              type="button"
                              class="secondary small"
                              aria-label={`Edit ${spec.nameOf(row)}`}
                              onClick={() => {
                                setEditing(row);
                                setSecret(null);
                                setNotice(null);
                              }}
                            >
                              Edit
                            </button>
                            {(spec.deletable?.(row) ?? true) && (
                              <button
                                type="button"
                                class="secondary small"
                                aria-label={`${spec.deleteLabel} ${spec.nameOf(row)}`}
                                onClick={() => {
                                  setConfirming(id);
                                  setConfirmingSignOut(false);
                                }}
                              >
                                {spec.deleteLabel}
                              </button>
                            )}
                          </>
                        )
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <div class="more">
          <button type="button" class="secondary" onClick={more}>
            Load more
          </button>
        </div>
      )}
    </div>
  );
}
