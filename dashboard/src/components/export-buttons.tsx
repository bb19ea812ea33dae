import { useState } from 'preact/hooks';
import { download } from '../api';

/**
 * CSV and JSON downloads of what a page shows, with its filters (`path` has the query
 * but the format). The gateway streams the file; the browser saves it when it is whole.
 */
export function ExportButtons({ path, what, formats = ['csv', 'json'] }: { path: string; what: string; formats?: ('csv' | 'json')[] }) {
  const [busy, setBusy] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const save = async (format: string) => {
    setBusy(format);
    setProblem(null);
    try {
      await download(`${path}${path.includes('?') ? '&' : '?'}format=${format}`);
    } catch (e) {
      setProblem((e as Error).message);
    } finally {
      setBusy(null);
    }
  };
  return (
    <span class="export-buttons">
      {formats.map((format) => (
        <button
          key={format}
          type="button"
          class="secondary"
          disabled={busy !== null}
          aria-label={`Export ${what} as ${format.toUpperCase()}`}
          onClick={() => void save(format)}
        >
          {busy === format ? 'Exporting…' : `Export ${format.toUpperCase()}`}
        </button>
      ))}
      {problem && (
        <span class="error-text" role="alert">
          {problem}
        </span>
      )}
    </span>
  );
}
