import { useEffect, useState } from 'preact/hooks';
import { loadSession, onUnauthorized, Session, signOut as endSession } from './api';
import { href, navigate, routeClick, useLocation } from './router';
import { AnalyticsPage } from './pages/analytics';
import { LogsPage } from './pages/logs';
import { API_KEYS, CONFIGS, PROMPTS, ResourcePage, VIRTUAL_KEYS } from './pages/resources';
import { SignIn } from './pages/sign-in';

const NAV = [
  { path: '/logs', label: 'Logs' },
  { path: '/analytics', label: 'Analytics' },
  { path: '/api-keys', label: 'API keys' },
  { path: '/virtual-keys', label: 'Virtual keys' },
  { path: '/configs', label: 'Configs' },
  { path: '/prompts', label: 'Prompts' },
];

export function App() {
  // undefined while the session cookie is being checked.
  const [key, setKey] = useState<Session | null | undefined>(undefined);
  const [signedOutReason, setSignedOutReason] = useState<string | null>(null);
  const location = useLocation();

  useEffect(() => {
    loadSession().then(setKey, (e: Error) => {
      setKey(null);
      setSignedOutReason(e.message);
    });
  }, []);

  useEffect(
    () =>
      onUnauthorized(() => {
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
        setKey(null);
        setSignedOutReason(null);
      });
  };

  let page;
  switch (section?.path) {
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
        <span class="signed-in-as" title={key.role ? `Role: ${key.role}` : undefined}>
          {key.user ? (key.user.email ?? key.user.name) : key.api_key?.name}
        </span>
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
