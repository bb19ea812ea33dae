import { compileSafeRegex, MAX_MATCHED_CHARS } from './safe-regex';

const regex = (pattern: string, flags = '') => {
  const compiled = compileSafeRegex(pattern, flags);
  if (!compiled.regex) throw new Error(compiled.problem);
  return compiled.regex;
};

describe('compileSafeRegex', () => {
  it('matches as JavaScript does for ordinary patterns and the flags i, m, s, u', () => {
    expect(regex('sk-[A-Za-z0-9]+').test('my key is sk-abc123')).toBe(true);
    expect(regex('^gpt-4o').test('o3-mini')).toBe(false);
    expect(regex('HELLO', 'i').test('say hello')).toBe(true);
    expect(regex('^b$', 'm').test('a\nb')).toBe(true);
    expect(regex('^b$').test('a\nb')).toBe(false);
    expect(regex('a.b', 's').test('a\nb')).toBe(true);
    expect(regex('a.b').test('a\nb')).toBe(false);
    expect(regex('caf\\u00e9', 'u').test('café')).toBe(true);
    expect(regex('(?<word>\\w+)@').test('me@example.com')).toBe(true);
    expect(regex('^\\d{3}-\\d{2}$').test('123-45')).toBe(true);
  });

  it('runs a pattern that makes JavaScript backtrack exponentially in linear time', () => {
    const pathological = regex('^(a+)+$');
    const started = performance.now();
    expect(pathological.test(`${'a'.repeat(26)}!`)).toBe(false);
    expect(pathological.test(`${'a'.repeat(50_000)}!`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('matches the first MAX_MATCHED_CHARS characters of a longer text', () => {
    expect(regex('needle').test(`${'x'.repeat(MAX_MATCHED_CHARS - 6)}needle`)).toBe(true);
    expect(regex('needle').test(`${'x'.repeat(MAX_MATCHED_CHARS)}needle`)).toBe(false);
  });

  it.each([
    ['(a)\\1', 'must not use backreferences (\\1, \\k<name>): user-supplied patterns run in a linear-time engine (RE2), which cannot run them'],
    ['(?<n>a)\\k<n>', 'must not use backreferences'],
    ['a(?=b)', 'must not use lookahead or lookbehind'],
    ['a(?!b)', 'must not use lookahead or lookbehind'],
    ['(?<=a)b', 'must not use lookahead or lookbehind'],
    ['(?<!a)b', 'must not use lookahead or lookbehind'],
    ['(', 'must be a valid regular expression (missing closing )'],
    ['a{1001}', 'is too complex (invalid repeat count'],
    ['(\\w+\\s*){1,500}z', 'is too complex (program size'],
  ])('refuses %s with the reason', (pattern, problem) => {
    expect(compileSafeRegex(pattern).problem).toEqual(expect.stringContaining(problem));
  });

  it('reads escapes and classes before deciding: an escaped paren or a class is no lookaround', () => {
    expect(regex('\\(?=').test('(=')).toBe(true);
    expect(regex('[(?=]+').test('?')).toBe(true);
  });

  it('compiles each pattern once', () => {
    expect(compileSafeRegex('cached-[0-9]+')).toBe(compileSafeRegex('cached-[0-9]+'));
    expect(compileSafeRegex('cached-[0-9]+', 'i')).not.toBe(compileSafeRegex('cached-[0-9]+'));
  });

  it('refuses flags no caller should pass', () => {
    expect(() => compileSafeRegex('a', 'g')).toThrow(/flags/);
  });
});
