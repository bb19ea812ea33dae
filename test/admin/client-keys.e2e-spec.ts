/**
 * Clients that take only a base URL and an API key (Codex, Cursor, Claude Code): the
 * gateway key sent as that API key (`Authorization: Bearer gk-…`, `x-api-key: gk-…`),
 * and the API key's default virtual key or config as the route (CONTRACT section 12).
 * Driven with the official SDKs set up with nothing but `baseURL` and `apiKey`.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { call, createApiKey, createConfig, createVirtualKey, expectError, logOf } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const OPENAI_SECRET = 'sk-openai-provider-secret-777777';
const ANTHROPIC_SECRET = 'sk-ant-provider-secret-888888';
const HELLO = [{ role: 'user' as const, content: 'Say hello' }];

describe('the gateway key as the client API key, and default routes', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-default', provider: 'openai', key: OPENAI_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'anthropic-default', provider: 'anthropic', key: ANTHROPIC_SECRET, custom_host: `${mock.url}/v1` });
    await createConfig(gateway, 'pinned-model', { virtual_key: 'openai-default', override_params: { model: 'gpt-4.1-mini' } });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it('serves the OpenAI SDK with only baseURL and the gk- key, routed by default_virtual_key; the gk- key never reaches the provider', async () => {
    const key = await createApiKey(gateway, { name: 'codex', default_virtual_key: 'openai-default' });
    expect(key).toMatchObject({ default_virtual_key: 'openai-default', default_config: null });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key.key, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: HELLO }).withResponse();
    expect(data.choices[0].message.content).toBe('Hello from mock');
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0].headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
    expect(JSON.stringify(mock.requests[0].headers)).not.toContain(key.key);

    await gateway.flushLogs();
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 200, api_key_id: key.id, provider: 'openai' });
    expect(JSON.stringify(log)).not.toContain(key.key);
  });

  it('serves the Anthropic SDK with only baseURL and the gk- key as x-api-key, natively to Anthropic', async () => {
    const key = await createApiKey(gateway, { name: 'claude-code', default_virtual_key: 'anthropic-default' });
    const client = new Anthropic({ baseURL: gateway.url, apiKey: key.key, maxRetries: 0 });
    const message = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: HELLO });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from mock' }]);
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0].headers['x-api-key']).toBe(ANTHROPIC_SECRET);
    expect(mock.requests[0].headers.authorization).toBeUndefined();
  });

  it("takes the Anthropic SDK's authToken (Authorization: Bearer gk-…) too", async () => {
    const key = await createApiKey(gateway, { name: 'bearer', default_virtual_key: 'anthropic-default' });
    const client = new Anthropic({ baseURL: gateway.url, apiKey: null, authToken: key.key, maxRetries: 0 });
    const message = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: HELLO });
    expect(message.type).toBe('message');
    expect(mock.requests[0].headers['x-api-key']).toBe(ANTHROPIC_SECRET);
  });

  it('routes by default_config, which wins over default_virtual_key; a routing header of the request wins over both', async () => {
    const key = await createApiKey(gateway, { name: 'both', default_config: 'pinned-model', default_virtual_key: 'anthropic-default' });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key.key, maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: HELLO });
    expect(mock.requests[0]).toMatchObject({ path: '/v1/chat/completions', body: { model: 'gpt-4.1-mini' } });

    mock.reset();
    const explicit = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: key.key,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-virtual-key': 'openai-default' },
    });
    await explicit.chat.completions.create({ model: 'gpt-4o-mini', messages: HELLO });
    expect(mock.requests[0].body.model).toBe('gpt-4o-mini');
  });

  it('reads back, changes and clears the defaults; refuses one that names nothing', async () => {
    const key = await createApiKey(gateway, { name: 'editable' });
    expect(key).toMatchObject({ default_virtual_key: null, default_config: null });
    const changed = await admin(gateway, 'PATCH', `/v1/api-keys/${key.id}`, { default_virtual_key: 'openai-default' });
    expect(changed).toMatchObject({ status: 200, body: { default_virtual_key: 'openai-default' } });
    expect((await admin(gateway, 'GET', `/v1/api-keys/${key.id}`)).body.default_virtual_key).toBe('openai-default');
    const cleared = await admin(gateway, 'PATCH', `/v1/api-keys/${key.id}`, { default_virtual_key: null });
    expect(cleared.body.default_virtual_key).toBeNull();

    const unknown = await call(gateway, '/v1/api-keys', { body: { name: 'x', default_virtual_key: 'no-such-key' } });
    expectError(unknown, 400, { type: 'invalid_request_error', param: 'default_virtual_key', message: "default_virtual_key: no virtual key 'no-such-key'" });
    const badConfig = await call(gateway, `/v1/api-keys/${key.id}`, { method: 'PATCH', body: { default_config: 'no-such-config' } });
    expectError(badConfig, 400, { type: 'invalid_request_error', param: 'default_config' });
    const notSlug = await call(gateway, '/v1/api-keys', { body: { name: 'x', default_config: 'Not A Slug' } });
    expect(notSlug.status).toBe(400);
  });

  it('without a default, a key-only request names the ways to route, including the key defaults', async () => {
    const key = await createApiKey(gateway, { name: 'no-route' });
    const response = await call(gateway, '/v1/chat/completions', {
      apiKey: null,
      headers: { authorization: `Bearer ${key.key}` },
      body: { model: 'gpt-4o-mini', messages: HELLO },
    });
    expectError(response, 400, { type: 'invalid_request_error', message: /default_virtual_key or default_config/ });
  });

  it('treats a Bearer that is not a gk- key as a provider key, never as the gateway key', async () => {
    const missing = await call(gateway, '/v1/chat/completions', {
      apiKey: null,
      headers: { authorization: 'Bearer sk-some-provider-key' },
      body: { model: 'gpt-4o-mini', messages: HELLO },
    });
    expectError(missing, 401, { type: 'authentication_error', code: 'invalid_api_key', message: /^Missing gateway API key/ });
    const wrong = await call(gateway, '/v1/chat/completions', {
      apiKey: null,
      headers: { 'x-api-key': 'gk-not-a-real-key-000000000' },
      body: { model: 'gpt-4o-mini', messages: HELLO },
    });
    expectError(wrong, 401, { type: 'authentication_error', code: 'invalid_api_key', message: 'Invalid or revoked gateway API key' });

    // A gk- key in Authorization next to x-gateway-provider is not a provider credential.
    const key = await createApiKey(gateway, { name: 'provider-header' });
    const noProviderKey = await call(gateway, '/v1/chat/completions', {
      apiKey: null,
      headers: { authorization: `Bearer ${key.key}`, 'x-gateway-provider': 'openai' },
      body: { model: 'gpt-4o-mini', messages: HELLO },
    });
    expectError(noProviderKey, 400, { type: 'invalid_request_error', param: 'authorization', message: /needs the provider key/ });
    expect(mock.requests).toHaveLength(0);
  });
});
