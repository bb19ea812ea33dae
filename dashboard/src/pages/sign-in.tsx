import { useEffect, useState } from 'preact/hooks';
import { ApiError, authConfig, AuthConfig, keySignIn, Session } from '../api';

/**
 * Single sign-on when the gateway has it (a link to `/auth/login`), and a gateway API key,
 * exchanged for the gateway's session cookie: the page never keeps the key.
 */
export function SignIn({ onSignedIn, reason }: { onSignedIn: (session: Session) => void; reason: string | null }) {
  const [config, setConfig] = useState<AuthConfig | null>(null);
  useEffect(() => {
    authConfig().then(setConfig, () => setConfig(null));
  }, []);
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) {
      setError('Enter a gateway API key (it starts with gk-).');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await keySignIn(trimmed));
    } catch (e) {
      const err = e as ApiError;
      if (err.status === 401) setError('This key is not known to the gateway: it may be mistyped, revoked or expired.');
      else setError(err.message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <form onSubmit={submit} aria-describedby="sign-in-help" noValidate>
        <h1>AI Gateway dashboard</h1>
        {reason && (
          <p class="notice" role="status">
            {reason}
          </p>
        )}
        {config?.sso && config.login_url && (
          <p class="sso">
            <a class="button" href={config.login_url}>
              Sign in with SSO
            </a>
          </p>
        )}
        <p id="sign-in-help">
          {config?.sso ? 'Or sign in' : 'Sign in'} with a gateway API key: <strong>owner</strong> and <strong>admin</strong> keys manage the gateway,{' '}
          <strong>member</strong> and <strong>viewer</strong> keys read the log and analytics. The gateway exchanges it for a session cookie (this page does not
          keep the key); signing out ends the session.
        </p>
        <label for="admin-key">Gateway API key</label>
        <input
          id="admin-key"
          name="admin-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'sign-in-error' : undefined}
          autoFocus
        />
        {error && (
          <p id="sign-in-error" class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
