import { useState } from 'preact/hooks';
import { copyText } from '../clipboard';
import { pretty } from '../format';

/** A JSON value pretty-printed, with a heading and a copy button; "Not recorded." for none. */
export function JsonBlock({ title, value, note }: { title: string; value: unknown; note?: string }) {
  const [copied, setCopied] = useState(false);
  const text = value === null || value === undefined ? null : typeof value === 'string' ? value : pretty(value);
  const id = `json-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <section aria-labelledby={id} class="json-block">
      <div class="block-head">
        <h3 id={id}>{title}</h3>
        {text !== null && (
          <button
            type="button"
            class="secondary small"
            onClick={async () => {
              setCopied(await copyText(text));
              setTimeout(() => setCopied(false), 2000);
            }}
          >
            {copied ? 'Copied' : 'Copy'}
          </button>
        )}
      </div>
      {note && <p class="muted small-text">{note}</p>}
      {text === null ? (
        <p class="muted">Not recorded.</p>
      ) : (
        <pre class="code" tabIndex={0} aria-label={title}>
          {text}
        </pre>
      )}
    </section>
  );
}
