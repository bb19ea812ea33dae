/** The new API key's secret, shown once after creation, with a copy button. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { copyText } from '../clipboard';

/** The new API key's secret, shown once with a copy button. */
export function SecretOnce({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.focus(), []);
  return (
    <div class="secret" role="region" aria-labelledby="secret-title" tabIndex={-1} ref={box}>
      <h2 id="secret-title">API key “{name}” created</h2>
      <p>
        <strong>Copy the key now: it is shown only this once.</strong> The gateway keeps only its hash.
      </p>
      <div class="secret-row">
        <label for="new-secret" class="visually-hidden">
          The new API key
        </label>
        <input id="new-secret" readOnly value={secret} onFocus={(e) => (e.target as HTMLInputElement).select()} spellcheck={false} />
        <button type="button" onClick={async () => setCopied(await copyText(secret))}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <p class="muted small-text" role="status">
        {copied === false ? 'Copying did not work here: select the key and copy it yourself.' : copied ? 'The key is on your clipboard.' : ''}
      </p>
      <button type="button" class="secondary" onClick={onDone}>
        I have saved it
      </button>
    </div>
  );
}
