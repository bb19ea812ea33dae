import { useEffect, useState } from 'preact/hooks';
import { onUnauthorized, storedKey, storeKey } from './api';
import { href, navigate, routeClick, useLocation } from './router';
import { AnalyticsPage } from './pages/analytics';
import { LogsPage } from './pages/logs';
import { API_KEYS, CONFIGS, PROMPTS, ResourcePage, VIRTUAL_KEYS } from './pages/resources';
import { SignIn } from './pages/sign-in';
import { END_USERS } from './pages/end-users';
import { parseVersionsPath, VersionHistoryPage } from './pages/version-history';

const NAV = [
  { path: '/logs', label: 'Logs' },
  { path: '/analytics', label: 'Analytics' },
  { path: '/api-keys', label: 'API keys' },
  { path: '/virtual-keys', label: 'Virtual keys' },
  { path: '/configs', label: 'Configs' },
  { path: '/prompts', label: 'Prompts' },
  { path: '/end-users', label: 'End users' },
];

export function App() {
  const [key, setKey] = useState(storedKey);
  const [signedOutReason, setSignedOutReason] = useState<string | null>(null);
  const location = useLocation();

  useEffect(
    () =>
      onUnauthorized(() => {
        storeKey(null);
        setKey(null);
        setSignedOutReason('Your key stopped working (revoked, expired or unknown to this gateway). Sign in again.');
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

  if (!key) {
    return (
      <SignIn
        reason={signedOutReason}
        onSignedIn={(k) => {
          storeKey(k);
          setSignedOutReason(null);
          setKey(k);
        }}
      />
    );
  }

  const signOut = () => {
    storeKey(null);
    setKey(null);
    setSignedOutReason(null);
  };

  let page;
  // `/configs/<slug>/versions`, `/prompts/<slug>/versions`: one config's or prompt's history.
  const history = parseVersionsPath(location.path);
  switch (history ? 'history' : section?.path) {
    case 'history':
      page = <VersionHistoryPage kind={history!.kind} slug={history!.slug} />;
      break;
    case '/logs':
      page = <LogsPage location={location} />;
      break;
    case '/analytics':
      page = <AnalyticsPage location={location} />;
      break;
    case '/api-keys':
      page = <ResourcePage spec={API_KEYS} />;
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
      page = <ResourcePage spec={END_USERS} />;
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
            {NAV.map((item) => (
              <li key={item.path}>
                <a href={href(item.path)} aria-current={section?.path === item.path ? 'page' : undefined} onClick={(e) => routeClick(e, item.path)}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="secondary sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}
