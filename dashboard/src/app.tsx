import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, loadSession, onUnauthorized, Session, signOut as endSession } from './api';
import { href, navigate, routeClick, useLocation } from './router';
import { AnalyticsPage } from './pages/analytics';
import { AuditLogPage } from './pages/audit-log';
import { BatchesPage } from './pages/batches';
import { LogsPage } from './pages/logs';
import { apiKeysSpec } from './pages/api-keys';
import { CONFIGS } from './pages/configs';
import { PROMPTS } from './pages/prompts';
import { ResourcePage } from './pages/resources';
import { VIRTUAL_KEYS } from './pages/virtual-keys';
import { workspacesSpec } from './pages/workspaces';
import { SignIn } from './pages/sign-in';
import { forgetNames, KINDS, Kind } from './names';
import { actingWorkspace, setActingWorkspace } from './acting-workspace';
import { Caller, loadCaller } from './workspace';
import { EndUsersPage } from './pages/end-users-page';
import { apiKeyActivityId, ApiKeyActivityPage, withActivityLink } from './pages/api-key-activity';
import { MCP_SERVERS } from './pages/mcp-servers';
import { PricesPage } from './pages/prices';
import { parseVersionsPath, VersionHistoryPage } from './pages/version-history';
import { browserZone, displayZone, onZoneChange, setZoneChoice, zoneChoice, zoneName, type ZoneChoice } from './time-zone';

/** The pages, and the roles that may use them (the API's own rules, roles.ts: `resources.read`, `audit.read`); no `roles`: every role. */
const ADMINS = ['owner', 'admin'];
const NAV: { path: string; label: string; roles?: string[] }[] = [
  { path: '/logs', label: 'Logs' },
  { path: '/analytics', label: 'Analytics' },
  { path: '/batches', label: 'Batches' },
  { path: '/api-keys', label: 'API keys', roles: ADMINS },
  { path: '/virtual-keys', label: 'Virtual keys', roles: ADMINS },
  { path: '/configs', label: 'Configs', roles: ADMINS },
  { path: '/prompts', label: 'Prompts', roles: ADMINS },
  { path: '/workspaces', label: 'Workspaces' },
  { path: '/audit-log', label: 'Audit log', roles: ['owner'] },
  { path: '/end-users', label: 'End users', roles: ADMINS },
  { path: '/mcp-servers', label: 'MCP servers', roles: ADMINS },
  { path: '/prices', label: 'Prices', roles: ADMINS },
];

export function App() {
  // undefined while the session cookie is being checked.
  const [key, setKey] = useState<Session | null | undefined>(undefined);
  const [signedOutReason, setSignedOutReason] = useState<string | null>(null);
  const location = useLocation();
  // Who is signed in (an owner or a workspace's key) and the workspaces: read once per sign-in, again after a workspace changes.
  const [caller, setCaller] = useState<Caller | null>(null);
  const [callerError, setCallerError] = useState<string | null>(null);
  const [callerLoads, setCallerLoads] = useState(0);
  // The workspace an owner acts in; changing it reloads the page shown.
  const [workspace, setWorkspace] = useState(actingWorkspace);
  const [zone, setZone] = useState(displayZone);
  useEffect(() => onZoneChange(() => setZone(displayZone())), []);

  useEffect(() => {
    if (!key) return setCaller(null);
    let live = true;
    setCallerError(null);
    loadCaller(key).then(
      (found) => {
        if (!live) return;
        setCaller(found);
        setWorkspace(actingWorkspace());
      },
      (e: ApiError) => live && setCallerError(e.message),
    );
    return () => {
      live = false;
    };
  }, [key, callerLoads]);
  // The key form's workspaces follow the one picked (apiKeysSpec reads it).
  const apiKeys = useMemo(() => caller && withActivityLink(apiKeysSpec(caller)), [caller, workspace]);
  // Not remade when a workspace changes: the page keeps its notice ("Saved workspace …").
  const isOwner = caller?.isOwner;
  const workspaces = useMemo(() => (isOwner === undefined ? null : workspacesSpec(isOwner)), [isOwner]);
  const reloadCaller = () => setCallerLoads((n) => n + 1);
  const switchWorkspace = (slug: string | null) => {
    setActingWorkspace(slug);
    for (const kind of Object.keys(KINDS) as Kind[]) forgetNames(kind);
    setWorkspace(slug);
  };

  useEffect(() => {
    loadSession().then(setKey, (e: Error) => {
      setKey(null);
      setSignedOutReason(e.message);
    });
  }, []);

  useEffect(
    () =>
      onUnauthorized(() => {
        setActingWorkspace(null);
        setKey(null);
        setSignedOutReason('Your session ended (signed out, expired, or its key was revoked). Sign in again.');
      }),
    [],
  );

  useEffect(() => {
    if (key && location.path === '/') navigate('/logs', { replace: true });
  }, [key, location.path]);

  const section = NAV.find((item) => location.path === item.path || location.path.startsWith(`${item.path}/`));
  useEffect(() => {
    document.title = key ? `${section?.label ?? 'Dashboard'} · AI Gateway` : 'Sign in · AI Gateway';
  }, [key, section]);

  if (key === undefined) return null;
  if (!key) {
    return (
      <SignIn
        reason={signedOutReason}
        onSignedIn={(session) => {
          setSignedOutReason(null);
          setKey(session);
        }}
      />
    );
  }

  const signOut = () => {
    void endSession()
      .catch(() => undefined)
      .then(() => {
        setActingWorkspace(null);
        setWorkspace(null);
        setKey(null);
        setSignedOutReason(null);
      });
  };

  let page;
  if (!caller || !apiKeys || !workspaces) {
    page = callerError ? (
      <div class="error-box" role="alert">
        <p>{callerError}</p>
        <button type="button" onClick={reloadCaller}>
          Retry
        </button>
      </div>
    ) : (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  } else {
    // `/configs/<slug>/versions`, `/prompts/<slug>/versions`: one config's or prompt's history.
    const history = parseVersionsPath(location.path);
    // `/api-keys/<id>/activity`: one key's requests, spend, models and end users.
    const keyActivity = apiKeyActivityId(location.path);
    const role = key.role ?? '';
    // A page the role may not use says so (the API would refuse every call on it).
    const refusedTo = section?.roles && !section.roles.includes(role) ? section : null;
    switch (refusedTo ? 'refused' : history ? 'history' : keyActivity ? 'key-activity' : section?.path) {
      case 'refused':
        page = (
          <section class="empty" data-testid="page-refused">
            <h1>{refusedTo!.label}</h1>
            <p>
              This page needs role {refusedTo!.roles!.join(' or ')}; the role of this sign-in is {role || 'unknown'}.{' '}
              <a href={href('/logs')} onClick={(e) => routeClick(e, '/logs')}>
                Go to the request log
              </a>
              .
            </p>
          </section>
        );
        break;
      case 'history':
        page = <VersionHistoryPage kind={history!.kind} slug={history!.slug} />;
        break;
      case 'key-activity':
        page = <ApiKeyActivityPage id={keyActivity!} location={location} />;
        break;
      case '/logs':
        page = <LogsPage location={location} />;
        break;
      case '/analytics':
        page = <AnalyticsPage location={location} mayReadKeys={ADMINS.includes(role)} />;
        break;
      case '/batches':
        page = <BatchesPage location={location} />;
        break;
      case '/api-keys':
        page = <ResourcePage spec={apiKeys} />;
        break;
      case '/virtual-keys':
        page = <ResourcePage spec={VIRTUAL_KEYS} />;
        break;
      case '/configs':
        page = <ResourcePage spec={CONFIGS} />;
        break;
      case '/prompts':
        page = <ResourcePage spec={PROMPTS} />;
        break;
      case '/end-users':
        page = <EndUsersPage location={location} mayManageBudgets={ADMINS.includes(role)} />;
        break;
      case '/mcp-servers':
        page = <ResourcePage spec={MCP_SERVERS} />;
        break;
      case '/prices':
        // Prices are organisation-wide: an owner sets them, an admin reads them.
        page = <PricesPage location={location} mayWrite={role === 'owner'} />;
        break;
      case '/workspaces':
        page = <ResourcePage spec={workspaces} onChanged={reloadCaller} />;
        break;
      case '/audit-log':
        page = <AuditLogPage location={location} />;
        break;
      default:
        page =
          location.path === '/' ? null : (
            <section class="empty">
              <h1>Page not found</h1>
              <p>
                There is no dashboard page at <code>/dashboard{location.path}</code>.{' '}
                <a href={href('/logs')} onClick={(e) => routeClick(e, '/logs')}>
                  Go to the request log
                </a>
                .
              </p>
            </section>
          );
    }
  }

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={href('/logs')} onClick={(e) => routeClick(e, '/logs')}>
          AI Gateway
        </a>
        <nav aria-label="Dashboard">
          <ul>
            {NAV.filter((item) => !item.roles || item.roles.includes(key.role ?? '')).map((item) => (
              <li key={item.path}>
                <a href={href(item.path)} aria-current={section?.path === item.path ? 'page' : undefined} onClick={(e) => routeClick(e, item.path)}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {caller?.isOwner && (
          <div class="workspace-switch">
            <label for="workspace-switch">Workspace</label>
            <select id="workspace-switch" value={workspace ?? ''} onChange={(e) => switchWorkspace((e.target as HTMLSelectElement).value || null)}>
              <option value="">All workspaces</option>
              {caller.workspaces.map((w) => (
                <option key={w.slug} value={w.slug}>
                  {w.name}
                </option>
              ))}
            </select>
          </div>
        )}
        {caller && !caller.isOwner && caller.workspaces.length === 1 && (
          <span class="workspace-name" title="The workspace this key acts in">
            {caller.workspaces[0].name}
          </span>
        )}
        <ZoneSwitch zone={zone} />
        <span class="signed-in-as" title={key.role ? `Role: ${key.role}` : undefined}>
          {key.user ? (key.user.email ?? key.user.name) : key.api_key?.name}
        </span>
        <button type="button" class="secondary sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      {/* A new zone draws every page again: its times, axes and buckets follow it. */}
      <main id="main" tabIndex={-1} key={`${workspace ?? ''} ${zone}`}>
        {page}
      </main>
    </>
  );
}

/** Times in the browser's zone or in UTC, remembered in this browser (time-zone.ts). */
function ZoneSwitch({ zone }: { zone: string }) {
  const local = browserZone();
  return (
    <div class="zone-switch">
      <label for="zone-switch" class="visually-hidden">
        Show times in (local time or UTC)
      </label>
      <select
        id="zone-switch"
        value={zoneChoice()}
        title={`Times are shown in ${zone}`}
        onChange={(e) => setZoneChoice((e.target as HTMLSelectElement).value as ZoneChoice)}
      >
        <option value="local" title={`Local time (${local})`}>
          {local === 'UTC' ? 'UTC (local)' : zoneName(local)}
        </option>
        <option value="utc" title="Coordinated Universal Time">
          UTC
        </option>
      </select>
    </div>
  );
}
