import { CheckInput } from '../../../context/guardrail-records';
import { ContainsCheck } from './contains.check';

const input = (...texts: string[]): CheckInput => ({ stage: 'output', texts, model: null, metadata: {} });
const run = (params: Record<string, unknown>, ...texts: string[]) => {
  const { check, problems } = ContainsCheck.parse(params, 'c');
  if (!check) throw new Error(problems.join('; '));
  return (check as ContainsCheck).run(input(...texts));
};

describe('ContainsCheck', () => {
  it('any (the default): passes when one word occurs', () => {
    expect(run({ words: ['alpha', 'beta'] }, 'this is Beta.')).toEqual({ type: 'contains', verdict: true, reason: 'found: beta' });
    expect(run({ words: ['alpha', 'beta'] }, 'gamma')).toEqual({ type: 'contains', verdict: false, reason: 'none of the words found' });
  });

  it('all: passes only when every word occurs, naming the missing ones', () => {
    expect(run({ words: ['alpha', 'beta'], operator: 'all' }, 'alpha', 'beta').verdict).toBe(true);
    expect(run({ words: ['alpha', 'beta', 'gamma'], operator: 'all' }, 'alpha')).toEqual({ type: 'contains', verdict: false, reason: 'missing: beta, gamma' });
  });

  it('none: fails when a word occurs, naming it', () => {
    expect(run({ words: ['forbidden'], operator: 'none' }, 'This is FORBIDDEN!')).toEqual({ type: 'contains', verdict: false, reason: 'found: forbidden' });
    expect(run({ words: ['forbidden'], operator: 'none' }, 'all fine').verdict).toBe(true);
  });

  it('matches whole words only, case-insensitively, in any script', () => {
    expect(run({ words: ['cat'] }, 'concatenate').verdict).toBe(false);
    expect(run({ words: ['cat'] }, 'the_cat').verdict).toBe(false);
    expect(run({ words: ['cat'] }, '(Cat)').verdict).toBe(true);
    expect(run({ words: ['Straße'] }, 'die straße.').verdict).toBe(true);
    expect(run({ words: ['über'] }, 'drüber').verdict).toBe(false);
  });

  it('takes regex characters literally and matches phrases across any whitespace', () => {
    expect(run({ words: ['c++'] }, 'I write C++ daily').verdict).toBe(true);
    expect(run({ words: ['a.b'] }, 'axb').verdict).toBe(false);
    expect(run({ words: ['credit card'] }, 'my credit\n  card').verdict).toBe(true);
  });

  it.each([
    [{}, 'c.words must be a non-empty array of at most 1000 strings'],
    [{ words: [] }, 'c.words must be a non-empty array of at most 1000 strings'],
    [{ words: ['a', 2] }, 'c.words[1] must be a non-empty string'],
    [{ words: ['a', '  '] }, 'c.words must not hold blank words'],
    [{ words: ['a'], operator: 'some' }, 'c.operator must be one of any, all, none'],
    [{ words: ['a'], mode: 'x' }, 'c.mode is not a known field'],
  ])('refuses %j', (params, problem) => {
    expect(ContainsCheck.parse(params, 'c')).toEqual({ problems: [problem] });
  });
});
