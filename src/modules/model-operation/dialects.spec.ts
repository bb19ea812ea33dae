import type { ShapedError } from '../../common/errors/error-shape';
import { DIALECTS, errorShapeOf } from './dialects';

const ERROR: ShapedError = { status: 402, type: 'budget_exceeded', message: 'Over budget', code: 'budget_exceeded', param: null, details: { limit_usd: 5 } };

describe('dialects', () => {
  it('registers the three dialects clients speak today', () => {
    expect(DIALECTS).toHaveLength(3);
    for (const dialect of DIALECTS) expect(dialect.texts.streamError).toEqual(expect.any(Function));
  });

  it.each([
    ['/v1/messages', {}, 'anthropic'],
    ['/v1/messages/count_tokens', {}, 'anthropic'],
    ['/v1/models', { 'anthropic-version': '2023-06-01' }, 'anthropic'],
    ['/v1/models', {}, 'openai'],
    ['/v1/chat/completions', { 'anthropic-version': '2023-06-01' }, 'openai'],
    ['/v1/responses', {}, 'openai'],
    ['/v1/api-keys', {}, 'openai'],
  ])('an error on %s %j takes the %s shape, the gateway details kept', (path, headers, shape) => {
    const body = errorShapeOf(path, headers).body(ERROR);
    if (shape === 'anthropic') expect(body).toEqual({ type: 'error', error: { type: 'billing_error', message: 'Over budget', limit_usd: 5 } });
    else expect(body).toEqual({ error: { message: 'Over budget', type: 'budget_exceeded', param: null, code: 'budget_exceeded', limit_usd: 5 } });
  });
});
