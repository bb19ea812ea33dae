import { responseCacheKey } from './response-cache';
import { ThrottledWarning } from '../../common/logging/throttled-warning';

describe('responseCacheKey', () => {
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], temperature: 0 };

  it('is a SHA-256 hex digest', () => {
    expect(responseCacheKey('chat.completions', 'openai|key-1', body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on the order of object keys, at any depth', () => {
    const reordered = { temperature: 0, messages: [{ content: 'hi', role: 'user' }], model: 'gpt-4o-mini' };
    expect(responseCacheKey('chat.completions', 'openai|key-1', reordered)).toBe(responseCacheKey('chat.completions', 'openai|key-1', body));
  });

  it('differs by operation, upstream identity and body', () => {
    const key = responseCacheKey('chat.completions', 'openai|key-1', body);
    expect(responseCacheKey('completions', 'openai|key-1', body)).not.toBe(key);
    expect(responseCacheKey('chat.completions', 'openai|key-2', body)).not.toBe(key);
    expect(responseCacheKey('chat.completions', 'openai|key-1', { ...body, temperature: 1 })).not.toBe(key);
  });

  it('keeps array order: a different conversation is a different key', () => {
    const two = {
      model: 'm',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ],
    };
    const swapped = { model: 'm', messages: [two.messages[1], two.messages[0]] };
    expect(responseCacheKey('chat.completions', 'x', swapped)).not.toBe(responseCacheKey('chat.completions', 'x', two));
  });

  it('cannot be forged by moving text between the parts', () => {
    expect(responseCacheKey('a|b', 'c', {})).not.toBe(responseCacheKey('a', 'b|c', {}));
  });
});

describe('ThrottledWarning', () => {
  it('logs at most once per interval, then says how many it left out', () => {
    const logged: string[] = [];
    let now = 0;
    const warning = new ThrottledWarning({ warn: (message: string) => logged.push(message) }, 10_000, () => now);
    warning.warn('down');
    now = 5_000;
    warning.warn('down');
    warning.warn('down');
    now = 10_000;
    warning.warn('still down');
    expect(logged).toEqual(['down', 'still down (2 more since the last warning)']);
  });
});
