import { groupsOf, membershipsOf, parseRoleMapping } from './role-mapping';

describe('role mapping', () => {
  it('parses group → {workspace, role}, an owner without a workspace acting in default, user read as member', () => {
    const mapping = parseRoleMapping(
      '{"search-admins": {"workspace": "search", "role": "admin"}, "platform": {"role": "owner"}, "old": {"workspace": "ads", "role": "user"}}',
    );
    expect(mapping.get('search-admins')).toEqual({ workspace: 'search', role: 'admin' });
    expect(mapping.get('platform')).toEqual({ workspace: 'default', role: 'owner' });
    expect(mapping.get('old')).toEqual({ workspace: 'ads', role: 'member' });
    expect(parseRoleMapping(undefined).size).toBe(0);
  });

  it('refuses what it cannot map, naming the group', () => {
    expect(() => parseRoleMapping('[1]')).toThrow(/JSON object/);
    expect(() => parseRoleMapping('{nope')).toThrow(/JSON object/);
    expect(() => parseRoleMapping('{"g": {"workspace": "search", "role": "god"}}')).toThrow(/group 'g': role must be one of/);
    expect(() => parseRoleMapping('{"g": {"role": "admin"}}')).toThrow(/group 'g': workspace .* is required/);
    expect(() => parseRoleMapping('{"g": {"workspace": "Not A Slug", "role": "admin"}}')).toThrow(/slug/);
  });

  it('gives one membership per workspace, the highest role, owners first; unknown groups give nothing', () => {
    const mapping = parseRoleMapping(
      '{"a": {"workspace": "search", "role": "viewer"}, "b": {"workspace": "search", "role": "admin"}, "c": {"workspace": "ads", "role": "member"}, "o": {"role": "owner"}}',
    );
    expect(membershipsOf(['a', 'c', 'b', 'zzz'], mapping)).toEqual([
      { workspace: 'search', role: 'admin' },
      { workspace: 'ads', role: 'member' },
    ]);
    expect(membershipsOf(['c', 'o'], mapping)[0]).toEqual({ workspace: 'default', role: 'owner' });
    expect(membershipsOf(['zzz'], mapping)).toEqual([]);
  });

  it('reads the groups claim as an array or one string', () => {
    expect(groupsOf(['a', 1, 'b'])).toEqual(['a', 'b']);
    expect(groupsOf('a')).toEqual(['a']);
    expect(groupsOf(undefined)).toEqual([]);
    expect(groupsOf({ a: 1 })).toEqual([]);
  });
});
