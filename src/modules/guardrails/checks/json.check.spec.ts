import { CheckInput } from '../../../context/guardrail-records';
import { JsonCheck } from './json.check';

const input = (...texts: string[]): CheckInput => ({ stage: 'output', texts, model: null, metadata: {} });

describe('JsonCheck', () => {
  const check = JsonCheck.parse({}, 'c').check as JsonCheck;

  it.each(['{"a": [1, 2]}', ' [] ', '"text"', '42', 'null'])('passes %s', (text) => {
    expect(check.run(input(text))).toEqual({ type: 'json', verdict: true, reason: 'valid JSON' });
  });

  it('fails text that is not JSON, naming the position but never quoting the text', () => {
    expect(check.run(input('{"a": 1'))).toEqual({ type: 'json', verdict: false, reason: 'not valid JSON (at position 7)' });
    const result = check.run(input('my secret sk-abc'));
    expect(result.verdict).toBe(false);
    expect(result.reason).not.toContain('secret');
    expect(check.run(input('')).reason).toBe('not valid JSON');
  });

  it('parses the pieces joined with a newline', () => {
    expect(check.run(input('{"a":', '1}')).verdict).toBe(true);
  });

  it('takes no parameters', () => {
    expect(JsonCheck.parse({ strict: true }, 'c')).toEqual({ problems: ['c.strict is not a known field'] });
  });
});
