import type { ShapedError } from '../../common/errors/error-shape';
import { DIALECTS, errorShapeOf } from './dialects';

const ERROR: ShapedError = { status: 402, type: 'budget_exceeded', message: 'Over budget', code: 'budget_exceeded', param: null, details: { limit_usd: 5 } };

describe('dialects', () => {
  it('registers the four dialects clients speak today', () => {
    expect(DIALECTS).toHaveLength(4);
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
    ['/v1beta/models/gemini-2.5-flash:generateContent', {}, 'google'],
    ['/v1beta/models', { 'anthropic-version': '2023-06-01' }, 'google'],
  ])('an error on %s %j takes the %s shape, the gateway details kept', (path, headers, shape) => {
    const body = errorShapeOf(path, headers).body(ERROR);
    if (shape === 'google')
      expect(body).toEqual({
        error: {
          code: 402,
          message: 'Over budget',
          status: 'FAILED_PRECONDITION',
          details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'budget_exceeded', domain: 'ai-gateway' }],
          limit_usd: 5,
        },
      });
    else if (shape === 'anthropic') expect(body).toEqual({ type: 'error', error: { type: 'billing_error', message: 'Over budget', limit_usd: 5 } });
    else expect(body).toEqual({ error: { message: 'Over budget', type: 'budget_exceeded', param: null, code: 'budget_exceeded', limit_usd: 5 } });
  });
});
