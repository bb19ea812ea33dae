import { useEffect, useState } from 'preact/hooks';
import { ApiError, listAll } from '../api';
import { Kind, KINDS } from '../names';

/** An admin object as a pick-list shows it. */
interface Choice {
  value: string;
  name: string;
  detail?: string;
}

/** Past this many, a text box narrows the list. */
const FILTER_FROM = 8;

/** How long a list read is reused (the filter form is made anew at each change of the filters). */
const FRESH_MS = 30_000;

/**
 * One list per kind for FRESH_MS: the pickers of every filter form share it, and a key made
 * meanwhile shows up soon after. A failure (a viewer may not read API keys) is forgotten, to
 * be tried again next time.
 */
const lists = new Map<Kind, { at: number; rows: Promise<Choice[]> }>();

function choicesOf(kind: Kind): Promise<Choice[]> {
  const cached = lists.get(kind);
  let found = cached && Date.now() - cached.at < FRESH_MS ? cached.rows : undefined;
  if (!found) {
    found = listAll<{ id: string; name?: string; slug?: string; key_hint?: string; provider?: string }>(KINDS[kind].api).then((rows) =>
      rows
        // API keys are filtered by id, the others by slug (the URL carries what the log API takes).
        .map((row) => ({
          value: kind === 'api-key' ? row.id : (row.slug ?? row.id),
          name: row.name || row.slug || row.id,
          detail: kind === 'api-key' ? row.key_hint : row.slug,
        }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
    found.catch(() => lists.delete(kind));
    lists.set(kind, { at: Date.now(), rows: found });
  }
  return found;
}

/**
 * A filter that names an API key, virtual key, config or prompt: chosen by name from the
 * admin list (a text box narrows a long one), while the form keeps its id or slug. When the
 * list cannot be read, a plain text box for the id or slug.
 */
export function NamePicker({ kind, id, label, value, onChange }: { kind: Kind; id: string; label: string; value: string; onChange: (value: string) => void }) {
  const [choices, setChoices] = useState<Choice[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [narrow, setNarrow] = useState('');

  useEffect(() => {
    let live = true;
    choicesOf(kind).then(
      (rows) => live && setChoices(rows),
      (e: ApiError) => live && setProblem(e.message),
    );
    return () => {
      live = false;
    };
  }, [kind]);

  if (problem) {
    return (
      <div class="field">
        <label for={id}>{label} (id or slug)</label>
        <input id={id} value={value} autoComplete="off" spellcheck={false} onInput={(e) => onChange((e.target as HTMLInputElement).value)} />
        <p class="help">The list of names could not be read: {problem}</p>
      </div>
    );
  }

  const words = narrow.trim().toLowerCase();
  const shown = (choices ?? []).filter((c) => c.value === value || !words || `${c.name} ${c.detail ?? ''}`.toLowerCase().includes(words));
  // A value from the URL that the list does not hold (deleted, or another spelling): kept as it is.
  const unlisted = value && choices && !choices.some((c) => c.value === value);
  return (
    <div class="field name-picker">
      <label for={id}>{label}</label>
      {choices && choices.length > FILTER_FROM && (
        <input
          type="search"
          class="picker-filter"
          aria-label={`Filter the ${label.toLowerCase()} names`}
          placeholder="Type to narrow…"
          value={narrow}
          autoComplete="off"
          onInput={(e) => setNarrow((e.target as HTMLInputElement).value)}
        />
      )}
      <select id={id} value={value} disabled={!choices} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">{choices ? `Any ${KINDS[kind].label}` : 'Loading names…'}</option>
        {unlisted && <option value={value}>{value}</option>}
        {shown.map((c) => (
          <option key={c.value} value={c.value}>
            {c.detail && c.detail !== c.name ? `${c.name} (${c.detail})` : c.name}
          </option>
        ))}
      </select>
      {words && shown.length === 0 && (
        <p class="help">
          No {KINDS[kind].label} matches “{narrow}”.
        </p>
      )}
    </div>
  );
}
