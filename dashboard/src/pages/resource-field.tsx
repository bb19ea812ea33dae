/** One field of a resource form: its label, the input its kind asks for, its help and its error. */
import type { FieldSpec } from './resource-spec';

/** `id` names the input; its help and error are `<id>-help` and `<id>-error`. */
export function ResourceField({
  id,
  field,
  value,
  error,
  onChange,
}: {
  id: string;
  field: FieldSpec;
  value: string;
  error: string | undefined;
  onChange: (value: string) => void;
}) {
  const described = [field.help ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name: field.name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': described,
    'aria-required': field.required ? true : undefined,
  };
  let input;
  if (field.kind === 'select') {
    input = (
      <select {...common} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {field.options!.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === 'json') {
    input = (
      <textarea
        {...common}
        rows={field.name === 'config' || field.name === 'messages' ? 8 : 3}
        spellcheck={false}
        placeholder={field.placeholder}
        value={value}
        onInput={(e) => onChange((e.target as HTMLTextAreaElement).value)}
      />
    );
  } else if (field.kind === 'checkbox') {
    input = (
      <input {...common} type="checkbox" checked={value === 'true'} onChange={(e) => onChange((e.target as HTMLInputElement).checked ? 'true' : 'false')} />
    );
  } else {
    input = (
      <input
        {...common}
        type={
          // Preact's typings list fewer input types than HTML has; tsc needs the assertion.
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
          (field.kind === 'password' ? 'password' : field.kind === 'number' ? 'number' : field.kind === 'datetime' ? 'datetime-local' : 'text') as 'text'
        }
        step={field.kind === 'number' ? 'any' : undefined}
        min={field.kind === 'number' ? 0 : undefined}
        autoComplete={field.kind === 'password' ? 'new-password' : 'off'}
        spellcheck={false}
        placeholder={field.placeholder}
        value={value}
        onInput={(e) => onChange((e.target as HTMLInputElement).value)}
      />
    );
  }
  return (
    <div class={`field ${field.kind === 'json' ? 'wide' : ''} ${field.kind === 'checkbox' ? 'checkbox' : ''}`}>
      <div class="label-row">
        <label for={id}>{field.label}</label>
        {field.required && <span class="required-mark">required</span>}
      </div>
      {input}
      {field.help && (
        <p id={`${id}-help`} class="help">
          {field.help}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} class="error">
          {error}
        </p>
      )}
    </div>
  );
}
