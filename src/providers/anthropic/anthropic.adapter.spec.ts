import type { RouteTarget } from '../../modules/routing/route-plan';
import { anthropicAdapter } from './anthropic.adapter';

const target = (fields: Partial<RouteTarget> = {}) => ({ provider: 'anthropic', apiKey: 'sk-ant-secret', customHost: null, providerOptions: {}, ...fields }) as RouteTarget;
const BODY = { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] };

describe('anthropicAdapter', () => {
  it('sends messages as they came to /v1/messages with x-api-key and the default version, never an Authorization header', () => {
    const request = anthropicAdapter.messages!.buildRequest(BODY, target());
    expect(request).toEqual({
      method: 'POST',
      url: 'https://api.anthropic.com/v1/messages',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-ant-secret' },
      body: JSON.stringify(BODY),
    });
  });

  it("passes the client's version and betas, else the virtual key's provider options", () => {
    const fromClient = anthropicAdapter.messages!.buildRequest(BODY, target({ providerOptions: { anthropic_version: '2023-01-01' } }), {
      'anthropic-version': '2024-10-22',
      'anthropic-beta': 'mcp-client-2025-04-04',
    });
    expect(fromClient.headers).toMatchObject({ 'anthropic-version': '2024-10-22', 'anthropic-beta': 'mcp-client-2025-04-04' });
    const fromKey = anthropicAdapter.messages!.buildRequest(BODY, target({ providerOptions: { anthropic_version: '2023-01-01', anthropic_beta: 'prompt-caching-2024-07-31' } }));
    expect(fromKey.headers).toMatchObject({ 'anthropic-version': '2023-01-01', 'anthropic-beta': 'prompt-caching-2024-07-31' });
  });

  it('uses a custom host (trailing slash trimmed) and sends no key header without a credential', () => {
    const request = anthropicAdapter.messages!.buildRequest(BODY, target({ customHost: 'http://proxy.local/anthropic/v1/', apiKey: null }));
    expect(request.url).toBe('http://proxy.local/anthropic/v1/messages');
    expect(request.headers['x-api-key']).toBeUndefined();
  });

  it('translates chat completions to a Messages request on the same URL and headers', () => {
    const chat = anthropicAdapter.chatCompletions!;
    const request = chat.buildRequest({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] }, target());
    expect(request.url).toBe('https://api.anthropic.com/v1/messages');
    expect(request.headers).toMatchObject({ 'x-api-key': 'sk-ant-secret', 'anthropic-version': '2023-06-01' });
    expect(JSON.parse(request.body!)).toEqual({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], max_tokens: 4096 });
    expect(chat.translation).toBeDefined();
  });
});
