/** Between a row of the admin API and the strings of its form: a form's values from a row, a request body (and field errors) from the values. */
import { fromLocalInput, pretty, toLocalInput } from '../format';
import type { FieldSpec, Row } from './resource-spec';

/** Form values (strings) from a row, for editing; empty ones for a new row. */
export function valuesOf(fields: FieldSpec[], row: object | null): Record<string, string> {
  const values: Record<string, string> = {};
  for (const field of fields) {
    const value: unknown = row === null ? undefined : (row as Record<string, unknown>)[field.name];
    if (field.kind === 'checkbox') values[field.name] = value ? 'true' : 'false';
    else if (field.kind === 'password') values[field.name] = '';
    else if (value === null || value === undefined) values[field.name] = !row ? (field.initial ?? '') : '';
    else if (field.kind === 'json')
      values[field.name] = (Array.isArray(value) && value.length === 0) || (typeof value === 'object' && Object.keys(value).length === 0) ? '' : pretty(value);
    else if (field.kind === 'datetime') values[field.name] = typeof value === 'string' ? toLocalInput(value) : '';
    else if (field.kind === 'list') values[field.name] = (value as string[]).join(', ');
    // A number or a boolean as its JSON text is its String().
    else values[field.name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return values;
}

/** The request body from form values: on edit only the fields that changed. */
export function bodyOf(
  fields: FieldSpec[],
  values: Record<string, string>,
  initial: Record<string, string>,
  editing: boolean,
): { body: Row; errors: Record<string, string> } {
  const body: Row = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    if ((editing && field.createOnly) || (!editing && field.editOnly)) continue;
    const raw = values[field.name] ?? '';
    if (editing && raw === initial[field.name]) continue;
    const text = raw.trim();
    if (field.required && text === '') {
      errors[field.name] = `${field.label} is required.`;
      continue;
    }
    if (text === '' && field.kind !== 'checkbox') {
      if (editing && field.nullable) body[field.name] = null;
      else if (editing && field.kind === 'json') body[field.name] = field.json === 'array' ? [] : {};
      continue;
    }
    switch (field.kind) {
      case 'number': {
        const n = Number(text);
        if (!Number.isFinite(n)) errors[field.name] = `${field.label} must be a number.`;
        else body[field.name] = n;
        break;
      }
      case 'json': {
        try {
          const parsed = JSON.parse(text);
          if (field.json === 'array' && !Array.isArray(parsed)) errors[field.name] = `${field.label} must be a JSON list ([…]).`;
          else if (field.json === 'object' && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)))
            errors[field.name] = `${field.label} must be a JSON object ({…}).`;
          else body[field.name] = parsed;
        } catch (e) {
          errors[field.name] = `${field.label} is not valid JSON: ${(e as Error).message}`;
        }
        break;
      }
      case 'datetime': {
        const iso = fromLocalInput(text);
        if (!iso) errors[field.name] = `${field.label} is not a date and time.`;
        else body[field.name] = iso;
        break;
      }
      case 'list':
        body[field.name] = text
          .split(/[,\n]/)
          .map((s) => s.trim())
          .filter(Boolean);
        break;
      case 'checkbox':
        body[field.name] = raw === 'true';
        break;
      default:
        body[field.name] = text;
    }
  }
  return { body, errors };
}
