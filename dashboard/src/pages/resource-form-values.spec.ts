import { bodyOf, valuesOf } from './resource-form-values';
import type { FieldSpec } from './resource-spec';

const fields: FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'slug', label: 'Slug', kind: 'text', createOnly: true },
  { name: 'budget_limit_usd', label: 'Budget', kind: 'number', nullable: true },
  { name: 'rate_limits', label: 'Rate limits', kind: 'json', json: 'array' },
  { name: 'allowed_models', label: 'Allowed models', kind: 'list', nullable: true },
  { name: 'key', label: 'Key', kind: 'password' },
  { name: 'disabled', label: 'Disabled', kind: 'checkbox', editOnly: true },
  { name: 'role', label: 'Role', kind: 'select', initial: 'member' },
];

describe('resource form values', () => {
  it('starts a new object from the fields’ initial values', () => {
    expect(valuesOf(fields, null)).toEqual({
      name: '',
      slug: '',
      budget_limit_usd: '',
      rate_limits: '',
      allowed_models: '',
      key: '',
      disabled: 'false',
      role: 'member',
    });
  });

  it('reads a row into strings, never showing a stored secret', () => {
    const row = { name: 'prod', slug: 'prod', budget_limit_usd: 5, rate_limits: [], allowed_models: ['a', 'b'], key: 'sk-…', disabled: true, role: 'admin' };
    expect(valuesOf(fields, row)).toMatchObject({ budget_limit_usd: '5', rate_limits: '', allowed_models: 'a, b', key: '', disabled: 'true', role: 'admin' });
  });

  it('builds a creation body, parsing numbers, JSON and lists, and leaving out empty fields', () => {
    const values = { ...valuesOf(fields, null), name: ' prod ', budget_limit_usd: '2.5', rate_limits: '[{"type":"requests"}]', allowed_models: 'a,\n b' };
    expect(bodyOf(fields, values, valuesOf(fields, null), false)).toEqual({
      body: { name: 'prod', budget_limit_usd: 2.5, rate_limits: [{ type: 'requests' }], allowed_models: ['a', 'b'], role: 'member' },
      errors: {},
    });
  });

  it('sends on edit only what changed, an emptied nullable field as null and an emptied JSON list as []', () => {
    const initial = valuesOf(fields, {
      name: 'prod',
      slug: 'prod',
      budget_limit_usd: 5,
      rate_limits: [{ type: 'tokens' }],
      allowed_models: ['a'],
      disabled: false,
    });
    const values = { ...initial, budget_limit_usd: '', rate_limits: '', disabled: 'true' };
    expect(bodyOf(fields, values, initial, true)).toEqual({ body: { budget_limit_usd: null, rate_limits: [], disabled: true }, errors: {} });
  });

  it('names each field it cannot read', () => {
    const values = { ...valuesOf(fields, null), budget_limit_usd: 'lots', rate_limits: '{"type":"requests"}' };
    expect(bodyOf(fields, values, valuesOf(fields, null), false).errors).toEqual({
      name: 'Name is required.',
      budget_limit_usd: 'Budget must be a number.',
      rate_limits: 'Rate limits must be a JSON list ([…]).',
    });
  });
});
