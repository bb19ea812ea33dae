import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, listAll } from '../api';
import { formatDateTime, pretty } from '../format';
import { DiffView } from '../history/diff-view';
import { lostCredentials, restoreBody, Version, VersionedKind, versionBody, withCredentials } from '../history/versions';
import { forgetNames, KINDS } from '../names';
import { href, routeClick } from '../router';

/** `/configs/<slug>/versions`, `/prompts/<slug>/versions`: the history page's address. */
export function versionsPath(kind: VersionedKind, slug: string): string {
  return `${KINDS[kind].page}/${encodeURIComponent(slug)}/versions`;
}

/** The config or prompt a dashboard path shows the versions of, if it is a history page. */
export function parseVersionsPath(path: string): { kind: VersionedKind; slug: string } | null {
  const match = /^\/(configs|prompts)\/([^/]+)\/versions$/.exec(path);
  return match ? { kind: match[1] === 'configs' ? 'config' : 'prompt', slug: decodeURIComponent(match[2]) } : null;
}

type Against = 'previous' | 'current';

/**
 * The versions of one config or prompt, newest first; the changes of any of them against
 * the version before it or the current one; and restoring one (a PATCH with its body,
 * which makes a new version: nothing is overwritten).
 */
export function VersionHistoryPage({ kind, slug }: { kind: VersionedKind; slug: string }) {
  const { api: apiPath, page, label } = KINDS[kind];
  const [versions, setVersions] = useState<Version[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [against, setAgainst] = useState<Against>('previous');
  const [confirming, setConfirming] = useState(false);
  const [credentials, setCredentials] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [restoreError, setRestoreError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const detailHeading = useRef<HTMLHeadingElement>(null);
  const restoreButton = useRef<HTMLButtonElement>(null);
  const confirmBox = useRef<HTMLDivElement>(null);

  const load = async (select?: number) => {
    setError(null);
    try {
      const rows = await listAll<Version>(`${apiPath}/${encodeURIComponent(slug)}/versions`);
      setVersions(rows);
      setSelected(select ?? rows[0]?.version ?? null);
    } catch (e) {
      const err = e as ApiError;
      setError(err.status === 404 ? `There is no ${label} “${slug}”: it may have been deleted.` : err.message);
    }
  };

  useEffect(() => {
    setVersions(null);
    setNotice(null);
    void load();
  }, [kind, slug]);

  useEffect(() => {
    if (versions) heading.current?.focus();
  }, [versions !== null]);

  useEffect(() => {
    setConfirming(false);
    setCredentials({});
    setRestoreError(null);
  }, [selected]);

  // The confirmation takes the focus: its first credential to type, else its Restore button.
  useEffect(() => {
    if (confirming) confirmBox.current?.querySelector<HTMLElement>('input, button')?.focus();
  }, [confirming]);

  const itemPath = `${page}/${encodeURIComponent(slug)}`;
  const back = (
    <p class="small-text">
      <a href={href(itemPath)} onClick={(e) => routeClick(e, itemPath)}>
        Back to the {label}
      </a>{' '}
      ·{' '}
      <a href={href(page)} onClick={(e) => routeClick(e, page)}>
        All {label}s
      </a>
    </p>
  );

  if (error)
    return (
      <div class="error-box" role="alert">
        <p>{error}</p>
        <button type="button" onClick={() => void load(selected ?? undefined)}>
          Try again
        </button>
        {back}
      </div>
    );
  if (!versions)
    return (
      <p class="muted" role="status">
        Loading the versions…
      </p>
    );

  const latest = versions[0];
  const index = versions.findIndex((v) => v.version === selected);
  const shown = versions[index] ?? latest;
  const previous = versions[index + 1] ?? null;
  const base = against === 'current' ? latest : previous;
  const isLatest = shown.version === latest.version;
  const body = (v: Version) => pretty(versionBody(kind, v));
  const lost = kind === 'config' && !isLatest ? lostCredentials(versionBody(kind, shown), versionBody(kind, latest)) : [];
  const missing = lost.filter((path) => !credentials[path]?.trim());

  const cancel = () => {
    setConfirming(false);
    requestAnimationFrame(() => restoreButton.current?.focus());
  };

  const restore = async () => {
    if (missing.length) return;
    setBusy(true);
    setRestoreError(null);
    try {
      let patch = restoreBody(kind, shown);
      if (lost.length) patch = { config: withCredentials(versionBody(kind, shown), credentials) };
      const saved = await api<{ version: number }>('PATCH', `${apiPath}/${encodeURIComponent(slug)}`, patch);
      forgetNames(kind);
      await load(saved.version);
      setAgainst('previous');
      setNotice(`Restored version ${shown.version} as version ${saved.version}, now the current one. The versions in between are kept.`);
      detailHeading.current?.focus();
    } catch (e) {
      setRestoreError((e as ApiError).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="history" aria-labelledby="history-title">
      <div class="page-head">
        <h1 id="history-title" ref={heading} tabIndex={-1}>
          Versions of {label} “{latest.name}”
        </h1>
      </div>
      <p class="intro">
        Every change of the {kind === 'config' ? 'config body' : 'template (model, route, messages, variables, hyperparameters)'} is kept as a version. Pick one
        to see what it changed. Restoring a version saves it again as a new version: nothing is overwritten, and you can restore back.
        {kind === 'config' && ' Credentials are shown masked (first and last characters); restoring keeps the one stored now at the same place.'}
      </p>
      {back}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <div class="history-layout">
        <nav aria-label={`Versions of ${latest.name}, newest first`} class="version-nav">
          <ol class="version-list">
            {versions.map((v) => (
              <li key={v.version}>
                <button type="button" class="version-button" aria-pressed={v.version === shown.version} onClick={() => setSelected(v.version)}>
                  <strong>Version {v.version}</strong>
                  {v.version === latest.version && <span class="tag">current</span>}
                  <span class="muted small-text">
                    <time dateTime={v.created_at}>{formatDateTime(v.created_at)}</time>
                  </span>
                  {v.name !== latest.name && <span class="small-text">named “{v.name}”</span>}
                </button>
              </li>
            ))}
          </ol>
        </nav>
        <div class="version-detail">
          <h2 ref={detailHeading} tabIndex={-1}>
            Version {shown.version}
            {isLatest ? ' (current)' : ''}
          </h2>
          <p class="muted small-text">
            Saved <time dateTime={shown.created_at}>{formatDateTime(shown.created_at)}</time>
          </p>
          <fieldset class="compare">
            <legend>Compare with</legend>
            <label>
              <input type="radio" name="against" checked={against === 'previous'} onChange={() => setAgainst('previous')} />
              {previous ? `the version before (${previous.version})` : 'the version before (none: this is the first)'}
            </label>
            <label>
              <input type="radio" name="against" checked={against === 'current'} disabled={isLatest} onChange={() => setAgainst('current')} />
              the current version ({latest.version})
            </label>
          </fieldset>
          {base && base.version !== shown.version ? (
            against === 'current' ? (
              <DiffView oldText={body(shown)} newText={body(base)} oldLabel={`version ${shown.version}`} newLabel={`version ${base.version} (current)`} />
            ) : (
              <DiffView oldText={body(base)} newText={body(shown)} oldLabel={`version ${base.version}`} newLabel={`version ${shown.version}`} />
            )
          ) : (
            <>
              <p class="small-text">{isLatest && against === 'current' ? 'This is the current version.' : 'The first version, as it was created:'}</p>
              <pre class="code">{body(shown)}</pre>
            </>
          )}
          {isLatest ? (
            <p class="muted">This is the current version: requests use it.</p>
          ) : !confirming ? (
            <div class="actions">
              <button type="button" ref={restoreButton} onClick={() => setConfirming(true)}>
                Restore version {shown.version}…
              </button>
            </div>
          ) : (
            <div class="confirm-restore" role="group" aria-labelledby="restore-title" ref={confirmBox} onKeyDown={(e) => e.key === 'Escape' && cancel()}>
              <h3 id="restore-title">Restore version {shown.version}?</h3>
              <p>
                This saves version {shown.version} as a new version {latest.version + 1}, which requests then use.{' '}
                {shown.version + 1 === latest.version ? `Version ${latest.version} stays` : `Versions ${shown.version + 1} to ${latest.version} stay`} in the
                history.
              </p>
              {lost.map((path) => (
                <div class="field" key={path}>
                  <label for={`credential-${path}`}>Credential at {path}</label>
                  <input
                    id={`credential-${path}`}
                    type="password"
                    autoComplete="new-password"
                    spellcheck={false}
                    value={credentials[path] ?? ''}
                    aria-describedby="credential-help"
                    onInput={(e) => setCredentials({ ...credentials, [path]: (e.target as HTMLInputElement).value })}
                  />
                </div>
              ))}
              {lost.length > 0 && (
                <p id="credential-help" class="warning small-text">
                  {lost.length === 1 ? 'This credential differs' : 'These credentials differ'} from the one stored now, and the gateway keeps only the
                  credential stored now: type
                  {lost.length === 1 ? ' it' : ' them'} again to restore.
                </p>
              )}
              {restoreError && (
                <p class="error-box" role="alert">
                  {restoreError}
                </p>
              )}
              <div class="actions">
                <button type="button" onClick={() => void restore()} disabled={busy || missing.length > 0}>
                  {busy ? 'Restoring…' : `Restore as version ${latest.version + 1}`}
                </button>
                <button type="button" class="secondary" onClick={cancel}>
                  Cancel
                </button>
              </div>
            </div>
          )}
        </div>
      </div>
    </section>
  );
}
