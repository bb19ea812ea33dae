import { changedFields, showValue } from './audit-diff';

describe('changedFields', () => {
  it('lists only what changed: names first, times last, the rest by name', () => {
    const before = { id: 'a', name: 'Prod', rate_limits: [{ type: 'requests', value: 5 }], updated_at: '1' };
    const after = { id: 'a', name: 'Prod 2', rate_limits: [{ type: 'requests', value: 5 }], updated_at: '2', disabled: true };
    expect(changedFields(before, after)).toEqual([
      { field: 'name', before: 'Prod', after: 'Prod 2', kind: 'changed' },
      { field: 'disabled', before: undefined, after: true, kind: 'added' },
      { field: 'updated_at', before: '1', after: '2', kind: 'changed' },
    ]);
  });

  it('shows every field of a create as added and of a delete as removed', () => {
    expect(changedFields(null, { id: 'a', name: 'x' }).map((c) => c.kind)).toEqual(['added', 'added']);
    expect(changedFields({ id: 'a' }, null)).toEqual([{ field: 'id', before: 'a', after: undefined, kind: 'removed' }]);
    expect(changedFields(null, null)).toEqual([]);
  });

  it('writes values for a cell', () => {
    expect(showValue('gk-…abcd')).toBe('gk-…abcd');
    expect(showValue(null)).toBe('null');
    expect(showValue({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(showValue(undefined)).toBe('');
  });
});
