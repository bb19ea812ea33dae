import type { ProviderTarget } from '../provider-target';
import { anthropicAdapter } from './anthropic.adapter';

const target = (fields: Partial<ProviderTarget> = {}) =>
  ({ provider: 'anthropic', apiKey: 'sk-ant-secret', customHost: null, providerOptions: {}, ...fields }) as ProviderTarget;
const BODY = { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] };
const CHAT = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] };

describe('anthropicAdapter', () => {
  it('needs a credential and no custom host', () => {
    expect(anthropicAdapter).toMatchObject({ id: 'anthropic', credentialOptional: false, requiresCustomHost: false });
  });

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
    const fromClient = anthropicAdapter.messages!.buildRequest(
      BODY,
      target({ providerOptions: { anthropic_version: '2023-01-01', anthropic_beta: 'prompt-caching-2024-07-31' } }),
      {
        'anthropic-version': '2024-10-22',
        'anthropic-beta': 'mcp-client-2025-04-04',
      },
    );
    expect(fromClient.headers).toMatchObject({ 'anthropic-version': '2024-10-22', 'anthropic-beta': 'mcp-client-2025-04-04' });
    const fromKey = anthropicAdapter.messages!.buildRequest(
      BODY,
      target({ providerOptions: { anthropic_version: '2023-01-01', anthropic_beta: 'prompt-caching-2024-07-31' } }),
    );
    expect(fromKey.headers).toMatchObject({ 'anthropic-version': '2023-01-01', 'anthropic-beta': 'prompt-caching-2024-07-31' });
    expect(anthropicAdapter.messages!.buildRequest(BODY, target(), {}).headers).not.toHaveProperty('anthropic-beta');
  });

  it('uses a custom host (trailing slashes trimmed) and sends no key header without a credential', () => {
    const request = anthropicAdapter.messages!.buildRequest(BODY, target({ customHost: 'http://proxy.local/anthropic/v1//', apiKey: null }));
    expect(request.url).toBe('http://proxy.local/anthropic/v1/messages');
    expect(request.headers).toEqual({ 'content-type': 'application/json', 'anthropic-version': '2023-06-01' });
  });

  it('translates chat completions to a Messages request on the same URL and headers', () => {
    const chat = anthropicAdapter.chatCompletions!;
    const request = chat.buildRequest(CHAT, target());
    expect(request).toEqual({
      method: 'POST',
      url: 'https://api.anthropic.com/v1/messages',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-ant-secret' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], max_tokens: 4096 }),
      ignoredParams: [],
    });
    const custom = chat.buildRequest(
      CHAT,
      target({ customHost: 'https://gw.test/v1/', providerOptions: { anthropic_version: '2024-01-01', anthropic_beta: 'b1' } }),
    );
    expect(custom.url).toBe('https://gw.test/v1/messages');
    expect(custom.headers).toMatchObject({ 'anthropic-version': '2024-01-01', 'anthropic-beta': 'b1' });
  });

  it('translates chat answers, streams and errors', () => {
    const translation = anthropicAdapter.chatCompletions!.translation!;
    expect(
      translation.toChatCompletion({ id: 'msg_1', content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn' }, 'claude').choices[0].message.content,
    ).toBe('Hi');
    expect(translation.streamDecoder('claude').isComplete()).toBe(false);
    expect(translation.toOpenAIError(429, { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } }).error.type).toBe('rate_limit_error');
  });

  it('refuses a chat body Anthropic cannot honour before anything is sent', () => {
    expect(() => anthropicAdapter.chatCompletions!.buildRequest({ ...CHAT, seed: 1 }, target())).toThrow(
      expect.objectContaining({ status: 400, param: 'seed' }),
    );
  });
});
