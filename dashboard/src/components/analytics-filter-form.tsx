import { useState } from 'preact/hooks';
import type { Kind } from '../names';
import { NamePicker } from './name-picker';

/** Filters that name an admin object: picked by name, the URL keeping its id (API keys) or slug. */
const PICKED: Record<string, Kind> = { api_key_id: 'api-key', virtual_key: 'virtual-key' };

/**
 * The filters Analytics takes (those of the log that make sense on aggregates), under the
 * names `GET /v1/logs` and the Logs page use, so a drill-down carries them over. The Logs
 * page's own form also offers body search, status and trace id, which aggregates cannot
 * answer, and owns the whole query string; this one changes only the filter names.
 */
export const ANALYTICS_FILTERS = [
  { name: 'model', label: 'Model', placeholder: 'one, or several with commas' },
  { name: 'provider', label: 'Provider', placeholder: 'one, or several with commas' },
  { name: 'user', label: 'User', placeholder: 'one, or several with commas' },
  { name: 'operation', label: 'Operation', placeholder: 'e.g. chat.completions' },
  { name: 'api_key_id', label: 'API key', placeholder: '' },
  { name: 'virtual_key', label: 'Virtual key', placeholder: '' },
] as const;

/** The analytics filters held in the URL: the names above and metadata.<key>. */
export function analyticsFiltersOf(query: URLSearchParams): [string, string][] {
  const known = new Set<string>(ANALYTICS_FILTERS.map((f) => f.name));
  return [...query.entries()].filter(([name, value]) => value !== '' && (known.has(name) || (name.startsWith('metadata.') && name.length > 9)));
}

/** The form; `onApply` gets every filter name with its new value ('' to drop it). */
export function AnalyticsFilterForm({ filters, onApply }: { filters: [string, string][]; onApply: (changes: Record<string, string | null>) => void }) {
  const initial = Object.fromEntries(filters);
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(ANALYTICS_FILTERS.map((f) => [f.name, initial[f.name] ?? ''])));
  const [metadata, setMetadata] = useState<{ key: string; value: string }[]>(() => {
    const pairs = filters.filter(([name]) => name.startsWith('metadata.')).map(([name, value]) => ({ key: name.slice(9), value }));
    return pairs.length ? pairs : [{ key: '', value: '' }];
  });
  const [problem, setProblem] = useState<string | null>(null);

  const submit = (event: Event) => {
    event.preventDefault();
    if (values.api_key_id.trim() && !/^[0-9a-f-]{36}$/i.test(values.api_key_id.trim())) {
      setProblem('The API key id is the id shown on the API keys page (a UUID), not the key itself.');
      return;
    }
    setProblem(null);
    const changes: Record<string, string | null> = Object.fromEntries(ANALYTICS_FILTERS.map((f) => [f.name, values[f.name].trim() || null]));
    for (const [name] of filters) if (name.startsWith('metadata.')) changes[name] = null;
    for (const pair of metadata) if (pair.key.trim() && pair.value !== '') changes[`metadata.${pair.key.trim()}`] = pair.value;
    onApply(changes);
  };
  const clear = () => {
    setValues(Object.fromEntries(ANALYTICS_FILTERS.map((f) => [f.name, ''])));
    setMetadata([{ key: '', value: '' }]);
    onApply({
      ...Object.fromEntries(ANALYTICS_FILTERS.map((f) => [f.name, null])),
      ...Object.fromEntries(filters.filter(([n]) => n.startsWith('metadata.')).map(([n]) => [n, null])),
    });
  };

  return (
    <details class="filters" open={filters.length > 0}>
      <summary>Filters{filters.length ? ` (${filters.length} active)` : ''}</summary>
      <form onSubmit={submit} aria-label="Filter analytics">
        <div class="filter-grid">
          {ANALYTICS_FILTERS.map((f) =>
            PICKED[f.name] ? (
              <NamePicker
                key={f.name}
                kind={PICKED[f.name]}
                id={`af-${f.name}`}
                label={f.label}
                value={values[f.name]}
                onChange={(value) => setValues({ ...values, [f.name]: value })}
              />
            ) : (
              <div class="field" key={f.name}>
                <label for={`af-${f.name}`}>{f.label}</label>
                <input
                  id={`af-${f.name}`}
                  name={f.name}
                  placeholder={f.placeholder}
                  value={values[f.name]}
                  onInput={(e) => setValues({ ...values, [f.name]: (e.target as HTMLInputElement).value })}
                  autoComplete="off"
                  spellcheck={false}
                />
              </div>
            ),
          )}
        </div>
        <fieldset class="metadata-filters">
          <legend>Metadata</legend>
          {metadata.map((pair, i) => (
            <div class="pair" key={i}>
              <div class="field">
                <label for={`af-meta-key-${i}`}>Key</label>
                <input
                  id={`af-meta-key-${i}`}
                  value={pair.key}
                  placeholder="e.g. team"
                  autoComplete="off"
                  onInput={(e) => setMetadata(metadata.map((p, j) => (j === i ? { ...p, key: (e.target as HTMLInputElement).value } : p)))}
                />
              </div>
              <div class="field">
                <label for={`af-meta-value-${i}`}>Value</label>
                <input
                  id={`af-meta-value-${i}`}
                  value={pair.value}
                  placeholder="e.g. search"
                  autoComplete="off"
                  onInput={(e) => setMetadata(metadata.map((p, j) => (j === i ? { ...p, value: (e.target as HTMLInputElement).value } : p)))}
                />
              </div>
              {metadata.length > 1 && (
                <button
                  type="button"
                  class="secondary small"
                  aria-label={`Remove metadata filter ${i + 1}`}
                  onClick={() => setMetadata(metadata.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              )}
            </div>
          ))}
          <button type="button" class="link-button" onClick={() => setMetadata([...metadata, { key: '', value: '' }])}>
            Add a metadata filter
          </button>
        </fieldset>
        {problem && (
          <p class="error" role="alert">
            {problem}
          </p>
        )}
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button type="button" class="secondary" onClick={clear}>
            Clear
          </button>
        </div>
      </form>
    </details>
  );
}
