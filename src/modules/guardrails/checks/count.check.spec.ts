import { CheckInput } from '../../../context/guardrail-records';
import { CountCheck } from './count.check';

const input = (...texts: string[]): CheckInput => ({ stage: 'output', texts, model: null, metadata: {} });
const build = (parse: typeof CountCheck.parseWordCount, params: Record<string, unknown>) => {
  const { check, problems } = parse(params, 'c');
  if (!check) throw new Error(problems.join('; '));
  return check as CountCheck;
};

describe('CountCheck', () => {
  describe('word_count', () => {
    const check = build(CountCheck.parseWordCount, { min: 2, max: 3 });

    it('counts runs of non-whitespace across the pieces', () => {
      expect(check.run(input('one  two\tthree'))).toEqual({ type: 'word_count', verdict: true, reason: '3 words' });
      expect(check.run(input('one', 'two'))).toEqual({ type: 'word_count', verdict: true, reason: '2 words' });
    });

    it('fails below min and above max (both inclusive)', () => {
      expect(check.run(input('one'))).toEqual({ type: 'word_count', verdict: false, reason: '1 words, fewer than 2' });
      expect(check.run(input('a b c d'))).toEqual({ type: 'word_count', verdict: false, reason: '4 words, more than 3' });
      expect(check.run(input('   ')).reason).toBe('0 words, fewer than 2');
    });
  });

  describe('char_count', () => {
    it('counts code points, the joining newlines included', () => {
      const check = build(CountCheck.parseCharCount, { max: 3 });
      expect(check.run(input('a😀b'))).toEqual({ type: 'char_count', verdict: true, reason: '3 characters' });
      expect(check.run(input('ab', 'c'))).toEqual({ type: 'char_count', verdict: false, reason: '4 characters, more than 3' });
    });

    it('needs only one bound', () => {
      expect(build(CountCheck.parseCharCount, { min: 1 }).run(input('')).verdict).toBe(false);
      expect(build(CountCheck.parseCharCount, { min: 0, max: 0 }).run(input('')).verdict).toBe(true);
    });
  });

  it.each([
    [{}, 'c needs min or max'],
    [{ min: -1 }, 'c.min must be an integer from 0 to 100000000'],
    [{ max: 1.5 }, 'c.max must be an integer from 0 to 100000000'],
    [{ min: '1' }, 'c.min must be an integer from 0 to 100000000'],
    [{ min: 5, max: 4 }, 'c.min must not be greater than max'],
    [{ max: 4, words: 1 }, 'c.words is not a known field'],
  ])('refuses %j', (params, problem) => {
    expect(CountCheck.parseWordCount(params, 'c')).toEqual({ problems: [problem] });
    expect(CountCheck.parseCharCount(params, 'c')).toEqual({ problems: [problem] });
  });
});
