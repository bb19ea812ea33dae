import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type PriceEntry, type Summary } from '../api';
import { formatInt } from '../format';
import { Location, navigate } from '../router';

/** A price as `GET /v1/prices` lists it: USD per million tokens, where it comes from. */
/** The form's fields: the price of a provider's model, USD per million tokens. */
const RATES = [
  { name: 'input', label: 'Input', required: true },
  { name: 'output', label: 'Output', required: true },
  { name: 'cached_input', label: 'Cached input', required: false },
  { name: 'cache_write', label: 'Cache write', required: false },
] as const;

const DAY_MS = 86_400_000;
const rate = (value: number | null | undefined) => (value === null || value === undefined ? '—' : `$${value}`);

/**
 * Prices (CONTRACT section 9): the models that served requests without a known price, the
 * prices of a provider's model (catalog, local table, overrides), and, for owners, a form that
 * sets a price (an override, which wins everywhere at once) or removes one. `?provider=` and
 * `?model=` fill the filter and the form.
 */
export function PricesPage({ location, mayWrite }: { location: Location; mayWrite: boolean }) {
  const provider = location.query.get('provider') ?? '';
  const model = location.query.get('model') ?? '';
  const [entries, setEntries] = useState<PriceEntry[] | null>(null);
  const [unpriced, setUnpriced] = useState<{ model: string; requests: number }[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [reloads, setReloads] = useState(0);

  useEffect(() => {
    setError(null);
    const query = new URLSearchParams([...(provider ? [['provider', provider]] : []), ...(model ? [['model', model]] : []), ['limit', '100']]);
    api<{ data: PriceEntry[] }>('GET', `/v1/prices?${query}`).then(
      (page) => setEntries(page.data),
      (e: ApiError) => setError(e.message),
    );
    const since = new Date(Date.now() - 30 * DAY_MS).toISOString();
    api<Summary>('GET', `/v1/analytics/summary?group_by=model&from=${encodeURIComponent(since)}`).then(
      (summary) =>
        setUnpriced(
          summary.data.filter((row) => row.key !== null && row.unpriced_requests > 0).map((row) => ({ model: row.key!, requests: row.unpriced_requests })),
        ),
      () => setUnpriced([]),
    );
  }, [provider, model, reloads]);

  const show = (next: { provider?: string; model?: string }) => {
    const query = new URLSearchParams(Object.entries({ provider, model, ...next }).filter(([, value]) => value));
    navigate(`/prices${query.size ? `?${query}` : ''}`);
  };

  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const text = (name: string) => {
      const value = form.get(name);
      return typeof value === 'string' ? value.trim() : '';
    };
    const body: Record<string, unknown> = { provider: text('provider'), model: text('model') };
    for (const { name } of RATES) {
      const value = text(name);
      if (value !== '') body[name] = Number(value);
    }
    setSaved(null);
    api('POST', '/v1/prices', body).then(
      () => {
        setSaved(`Price of ${String(body.provider)} ${String(body.model)} set: it applies to every request from now on.`);
        show({ provider: String(body.provider), model: String(body.model) });
        setReloads((n) => n + 1);
      },
      (e: ApiError) => setError(e.message),
    );
  };

  const remove = (entry: PriceEntry) =>
    api('DELETE', `/v1/prices/${encodeURIComponent(entry.provider)}/${entry.model.split('/').map(encodeURIComponent).join('/')}`).then(
      () => setReloads((n) => n + 1),
      (e: ApiError) => setError(e.message),
    );

  return (
    <div class="prices">
      <div class="page-head">
        <h1>Prices</h1>
      </div>
      <p class="muted">
        Prices in USD per million tokens, by provider and model: the price catalog's, the gateway's own table, and overrides set here, which win over both.
      </p>
      {error && (
        <div class="error-box" role="alert">
          <p>{error}</p>
        </div>
      )}
      {saved && (
        <p class="notice" role="status">
          {saved}
        </p>
      )}

      <section aria-labelledby="unpriced-models">
        <h2 id="unpriced-models">Models without a price</h2>
        {!unpriced ? (
          <p class="muted" role="status">
            Loading…
          </p>
        ) : unpriced.length === 0 ? (
          <p class="muted">Every request of the last 30 days has a price.</p>
        ) : (
          <ul data-testid="unpriced-models">
            {unpriced.map((row) => (
              <li key={row.model}>
                <code>{row.model}</code>: {formatInt(row.requests)} {row.requests === 1 ? 'request' : 'requests'} without a price in 30 days{' '}
                {mayWrite && (
                  <button type="button" class="secondary small" onClick={() => show({ model: row.model })}>
                    Set a price for {row.model}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      {mayWrite && (
        <section aria-labelledby="set-price">
          <h2 id="set-price">Set a price</h2>
          <form class="stacked" onSubmit={submit} key={`${provider}/${model}`} aria-label="Set a price">
            <div class="field">
              <label for="price-provider">Provider</label>
              <input id="price-provider" name="provider" required defaultValue={provider} placeholder="openai" />
            </div>
            <div class="field">
              <label for="price-model">Model</label>
              <input id="price-model" name="model" required defaultValue={model} placeholder="my-house-model" />
            </div>
            {RATES.map((field) => (
              <div class="field" key={field.name}>
                <label for={`price-${field.name}`}>{field.label} (USD per million tokens)</label>
                <input id={`price-${field.name}`} name={field.name} type="number" min="0" step="any" required={field.required} />
              </div>
            ))}
            <button type="submit">Save the price</button>
          </form>
        </section>
      )}

      <section aria-labelledby="price-list">
        <h2 id="price-list">{provider || model ? `Prices of ${[provider, model].filter(Boolean).join(' ')}` : 'Known prices'}</h2>
        {!entries ? (
          <p class="muted" role="status">
            Loading…
          </p>
        ) : entries.length === 0 ? (
          <p class="muted">No price known for this provider and model.</p>
        ) : (
          <table class="data compact" data-testid="price-list">
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Model</th>
                <th scope="col">Source</th>
                <th scope="col">Input</th>
                <th scope="col">Output</th>
                <th scope="col">Cached input</th>
                <th scope="col">Cache write</th>
                {mayWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <tr key={`${entry.provider}/${entry.model}/${entry.source}`}>
                  <td data-label="Provider">{entry.provider}</td>
                  <td data-label="Model">
                    <code>{entry.model}</code>
                  </td>
                  <td data-label="Source">{entry.source}</td>
                  <td data-label="Input">{rate(entry.input)}</td>
                  <td data-label="Output">{rate(entry.output)}</td>
                  <td data-label="Cached input">{rate(entry.cached_input)}</td>
                  <td data-label="Cache write">{rate(entry.cache_write)}</td>
                  {mayWrite && (
                    <td data-label="Actions">
                      {entry.source === 'override' && (
                        <button type="button" class="secondary small" onClick={() => void remove(entry)}>
                          Remove the override
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
