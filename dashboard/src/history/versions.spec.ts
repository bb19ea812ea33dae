import { credentialPaths, lostCredentials, restoreBody, versionBody, withCredentials } from './versions';

const config = (apiKey: string, auth = 'Bearer …2345') => ({
  strategy: { mode: 'fallback' },
  targets: [{ provider: 'openai', api_key: apiKey }, { provider: 'anthropic' }],
  guardrails: [{ webhook: { url: 'https://x', headers: { authorization: auth } } }],
});

describe('config credentials', () => {
  it('finds api_key fields and header values, by path', () => {
    expect([...credentialPaths(config('sk-…abcd'))]).toEqual([
      ['targets[0].api_key', 'sk-…abcd'],
      ['guardrails[0].webhook.headers.authorization', 'Bearer …2345'],
    ]);
  });

  it('names the credentials of an old version that differ from the ones stored now', () => {
    expect(lostCredentials(config('sk-…abcd'), config('sk-…abcd'))).toEqual([]);
    expect(lostCredentials(config('sk-…abcd'), config('sk-…wxyz'))).toEqual(['targets[0].api_key']);
    expect(lostCredentials(config('sk-…abcd'), { targets: [] })).toEqual(['targets[0].api_key', 'guardrails[0].webhook.headers.authorization']);
  });

  it('replaces only the credentials named', () => {
    expect(withCredentials(config('sk-…abcd'), { 'targets[0].api_key': 'sk-new' })).toEqual(config('sk-new'));
  });
});

describe('restoreBody', () => {
  const version = { version: 1, name: 'p', created_at: '', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

  it('sends a config version’s body back whole', () => {
    expect(restoreBody('config', { version: 2, name: 'c', created_at: '', config: { retry: { attempts: 2 } } })).toEqual({
      config: { retry: { attempts: 2 } },
    });
  });

  it('clears the prompt fields the old version did not have', () => {
    expect(restoreBody('prompt', version)).toEqual({
      model: 'gpt-4o-mini',
      virtual_key: null,
      provider: null,
      messages: version.messages,
      variables: {},
      hyperparameters: {},
    });
    expect(versionBody('prompt', version)).toEqual({ model: 'gpt-4o-mini', messages: version.messages });
  });
});
