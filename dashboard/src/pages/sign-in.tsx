import { useState } from 'preact/hooks';
import { ApiError, checkAdminKey } from '../api';

/** The admin key, checked against the gateway, then kept in sessionStorage (this tab only). */
export function SignIn({ onSignedIn, reason }: { onSignedIn: (key: string) => void; reason: string | null }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) {
      setError('Enter an admin API key (it starts with gk-).');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await checkAdminKey(trimmed);
      onSignedIn(trimmed);
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
        <p id="sign-in-help">
          Sign in with an API key whose role is <strong>admin</strong>. It is kept in this browser tab only (sessionStorage) and sent to this gateway as
          the <code>x-gateway-api-key</code> header.
        </p>
        <label for="admin-key">Admin API key</label>
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
