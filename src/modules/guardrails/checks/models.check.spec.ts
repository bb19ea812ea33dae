import { CheckInput } from '../../../context/guardrail-records';
import { ModelsCheck } from './models.check';

const input = (model: string | null): CheckInput => ({ stage: 'input', texts: ['hi'], model, metadata: {} });
const build = (params: Record<string, unknown>) => {
  const { check, problems } = ModelsCheck.parse(params, 'c');
  if (!check) throw new Error(problems.join('; '));
  return check as ModelsCheck;
};

describe('ModelsCheck', () => {
  it('allow: only the listed models pass, names compared exactly', () => {
    const check = build({ allow: ['gpt-4o', 'claude-sonnet-4'] });
    expect(check.run(input('gpt-4o'))).toEqual({ type: 'models', verdict: true, reason: "model 'gpt-4o' is allowed" });
    expect(check.run(input('gpt-4o-mini'))).toEqual({ type: 'models', verdict: false, reason: "model 'gpt-4o-mini' is not allowed" });
    expect(check.run(input('GPT-4o')).verdict).toBe(false);
  });

  it('deny: the listed models fail, the others pass', () => {
    const check = build({ deny: ['gpt-3.5-turbo'] });
    expect(check.run(input('gpt-3.5-turbo'))).toEqual({ type: 'models', verdict: false, reason: "model 'gpt-3.5-turbo' is denied" });
    expect(check.run(input('gpt-4o')).verdict).toBe(true);
  });

  it('deny wins over allow', () => {
    expect(build({ allow: ['a', 'b'], deny: ['b'] }).run(input('b')).verdict).toBe(false);
  });

  it('a request without a model fails an allow list and passes a deny list', () => {
    expect(build({ allow: ['a'] }).run(input(null))).toEqual({ type: 'models', verdict: false, reason: 'the request names no model' });
    expect(build({ deny: ['a'] }).run(input(null))).toEqual({ type: 'models', verdict: true, reason: 'the request names no model' });
  });

  it.each([
    [{}, ['c needs allow or deny']],
    [{ allow: [] }, ['c.allow must be a non-empty array of at most 1000 strings']],
    [{ allow: 'gpt-4o' }, ['c.allow must be a non-empty array of at most 1000 strings']],
    [{ deny: ['a', ''] }, ['c.deny[1] must be a non-empty string']],
    [{ deny: ['a'], only: ['b'] }, ['c.only is not a known field']],
  ])('refuses %j', (params, problems) => {
    expect(ModelsCheck.parse(params, 'c')).toEqual({ problems });
  });
});
