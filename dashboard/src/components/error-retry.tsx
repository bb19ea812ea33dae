import type { ComponentChildren } from 'preact';

/** What failed to load, in words, and a button to load it again (the gateway or its database may be back). */
export function ErrorRetry({ message, onRetry, children }: { message: string; onRetry: () => void; children?: ComponentChildren }) {
  return (
    <div class="error-box" role="alert">
      <p>{message}</p>
      <button type="button" onClick={onRetry}>
        Try again
      </button>
      {children}
    </div>
  );
}
