/** The create and edit form of a resource page: its fields, their checks and the save. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ResourceField } from './resource-field';
import { bodyOf, valuesOf } from './resource-form-values';
import type { FormSpec } from './resource-spec';

export function ResourceForm<R extends object>({
  spec,
  row,
  onCancel,
  onSaved,
}: {
  spec: FormSpec<R>;
  row: R | null;
  onCancel: () => void;
  onSaved: (saved: R, created: boolean) => void;
}) {
  const editing = row !== null;
  const [initial] = useState(() => valuesOf(spec.fields, row));
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const fields = spec.fields.filter((f) => !(editing && f.createOnly) && !(!editing && f.editOnly));
  const prefix = `${spec.singular.replace(/\W+/g, '-')}-field`;

  const submit = async (event: Event) => {
    event.preventDefault();
    const { body, errors: problems } = bodyOf(spec.fields, values, initial, editing);
    setErrors(problems);
    if (Object.keys(problems).length) {
      setFormError('Some fields need attention: see the messages below them.');
      document.getElementById(`${prefix}-${Object.keys(problems)[0]}`)?.focus();
      return;
    }
    if (editing && Object.keys(body).length === 0) {
      setFormError('Nothing changed, so there is nothing to save.');
      return;
    }
    setBusy(true);
    setFormError(null);
    try {
      const saved = await api<R>(editing ? 'PATCH' : 'POST', editing ? `${spec.path}/${encodeURIComponent(spec.idOf(row))}` : spec.path, body);
      onSaved(saved, !editing);
    } catch (e) {
      const err = e as ApiError;
      setFormError(err.message);
      const field = err.param?.split(/[.[]/)[0];
      if (field && fields.some((f) => f.name === field)) {
        setErrors({ [field]: err.message });
        document.getElementById(`${prefix}-${field}`)?.focus();
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="resource-form" onSubmit={submit} noValidate aria-labelledby={`${prefix}-title`} onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
      <h2 id={`${prefix}-title`} ref={heading} tabIndex={-1}>
        {editing ? `Edit ${spec.singular} “${spec.nameOf(row)}”` : `New ${spec.singular}`}
      </h2>
      {formError && (
        <p class="error-box" role="alert">
          {formError}
        </p>
      )}
      <div class="form-grid">
        {fields.map((field) => (
          <ResourceField
            key={field.name}
            id={`${prefix}-${field.name}`}
            field={field}
            value={values[field.name]}
            error={errors[field.name]}
            onChange={(value) => setValues({ ...values, [field.name]: value })}
          />
        ))}
      </div>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : editing ? 'Save changes' : `Create ${spec.singular}`}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
