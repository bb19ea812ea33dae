import { CheckInput } from '../../../context/guardrail-records';
import { MAX_MATCHED_CHARS } from '../../../common/regex/safe-regex';
import { RegexCheck } from './regex.check';

const input = (...texts: string[]): CheckInput => ({ stage: 'input', texts, model: 'gpt-4o', metadata: {} });
const build = (params: Record<string, unknown>) => {
  const { check, problems } = RegexCheck.parse(params, 'c');
  if (!check) throw new Error(problems.join('; '));
  return check as RegexCheck;
};

describe('RegexCheck', () => {
  it('passes a matching text when it must match (the default)', () => {
    expect(build({ pattern: 'hello' }).run(input('say hello'))).toEqual({ type: 'regex', verdict: true, reason: 'text matches /hello/' });
    expect(build({ pattern: 'hello' }).run(input('bye')).verdict).toBe(false);
  });

  it('fails a matching text when it must not match, without quoting what matched', () => {
    const result = build({ pattern: 'sk-[A-Za-z0-9]+', must: 'not_match' }).run(input('my key is sk-abc123'));
    expect(result.verdict).toBe(false);
    expect(result.reason).not.toContain('abc123');
    expect(build({ pattern: 'sk-[A-Za-z0-9]+', must: 'not_match' }).run(input('no key here')).verdict).toBe(true);
  });

  it('looks at the pieces joined with a newline', () => {
    expect(build({ pattern: '^b$', flags: 'm' }).run(input('a', 'b')).verdict).toBe(true);
    expect(build({ pattern: 'a\\nb' }).run(input('a', 'b')).verdict).toBe(true);
  });

  it('applies the flags and gives the same answer on every call', () => {
    const check = build({ pattern: 'HELLO', flags: 'i' });
    for (let i = 0; i < 3; i++) expect(check.run(input('hello')).verdict).toBe(true);
  });

  it('only looks at the first 100,000 characters', () => {
    const check = build({ pattern: 'needle' });
    expect(check.run(input('x'.repeat(MAX_MATCHED_CHARS - 6) + 'needle')).verdict).toBe(true);
    expect(check.run(input('x'.repeat(MAX_MATCHED_CHARS) + 'needle')).verdict).toBe(false);
  });

  it.each([
    [{}, 'c.pattern must be a non-empty string of at most 500 characters'],
    [{ pattern: '' }, 'c.pattern must be a non-empty string of at most 500 characters'],
    [{ pattern: 'a'.repeat(501) }, 'c.pattern must be a non-empty string of at most 500 characters'],
    [{ pattern: '(a' }, 'c.pattern must be a valid regular expression (missing closing ): `(a`)'],
    [
      { pattern: '(?=a)b' },
      'c.pattern must not use lookahead or lookbehind ((?=, (?!, (?<=, (?<!): user-supplied patterns run in a linear-time engine (RE2), which cannot run them',
    ],
    [{ pattern: 'a', flags: 'g' }, 'c.flags must be a string of the flags i, m, s, u'],
    [{ pattern: 'a', flags: 1 }, 'c.flags must be a string of the flags i, m, s, u'],
    [{ pattern: 'a', must: 'maybe' }, 'c.must must be one of match, not_match'],
    [{ pattern: 'a', other: 1 }, 'c.other is not a known field'],
  ])('refuses %j', (params, problem) => {
    expect(RegexCheck.parse(params, 'c')).toEqual({ problems: [problem] });
  });

  it('runs a catastrophic-backtracking pattern in linear time', () => {
    const check = build({ pattern: '^(a+)+$' });
    const started = performance.now();
    expect(check.run(input(`${'a'.repeat(10_000)}!`)).verdict).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('accepts a pattern of exactly 500 characters', () => {
    expect(RegexCheck.parse({ pattern: 'a'.repeat(500) }, 'c').problems).toEqual([]);
  });
});
