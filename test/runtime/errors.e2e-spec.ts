import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';
import { call, chat, createApiKey, createVirtualKey, expectError, HELLO } from '../support/e2e-helpers';

/** Errors the gateway makes itself (CONTRACT section 3): OpenAI shape, a message naming the problem, never a 500. */
describe('gateway-made errors', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  const VK = { 'x-gateway-virtual-key': 'errors-vk' };
  const TRANSLATED = { 'x-gateway-virtual-key': 'errors-anthropic' };

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'errors-vk', key: 'sk-errors-secret-000000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'errors-anthropic', provider: 'anthropic', key: 'sk-ant-errors-000000', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());
  afterEach(() => expect(mock.requests).toHaveLength(0)); // no bad request reaches the provider

  describe('401 / 403: the gateway key', () => {
    it('401 without x-gateway-api-key', async () => {
      for (const path of ['/v1/chat/completions', '/v1/logs', '/v1/api-keys']) {
        const response = await call(gateway, path, {
          apiKey: null,
          headers: VK,
          body: path.includes('chat') ? { model: 'gpt-4o-mini', messages: HELLO } : undefined,
        });
        expectError(response, 401, {
          type: 'authentication_error',
          code: 'invalid_api_key',
          param: null,
          message: /^Missing gateway API key: send x-gateway-api-key, or the gk-… key as Authorization: Bearer, x-api-key or x-goog-api-key$/,
        });
      }
    });

    it('401 with an unknown x-gateway-api-key', async () => {
      const response = await chat(gateway, VK, {}, 'gk-not-a-real-key-000000000');
      expectError(response, 401, { type: 'authentication_error', code: 'invalid_api_key', message: 'Invalid or revoked gateway API key' });
    });

    it('403 for a user-role key on the admin API', async () => {
      const user = await createApiKey(gateway, { name: 'plain user', role: 'user' });
      for (const [method, path] of [
        ['GET', '/v1/api-keys'],
        ['POST', '/v1/api-keys'],
        ['GET', '/v1/virtual-keys'],
        ['GET', '/v1/configs'],
      ]) {
        const response = await call(gateway, path, { method, apiKey: user.key, body: method === 'POST' ? { name: 'x' } : undefined });
        expectError(response, 403, { type: 'permission_error', code: 'admin_required', message: /role owner or admin/ });
      }
    });
  });

  describe('404: unknown things', () => {
    it('unknown virtual key', async () => {
      const response = await chat(gateway, { 'x-gateway-virtual-key': 'no-such-vk' });
      expectError(response, 404, { type: 'not_found_error', code: 'virtual_key_not_found', message: /'no-such-vk'/ });
    });

    it('unknown virtual key in a @slug/model prefix', async () => {
      const response = await chat(gateway, {}, { model: '@ghost-vk/gpt-4o-mini' });
      expectError(response, 404, { type: 'not_found_error', code: 'virtual_key_not_found', message: /'ghost-vk'/ });
    });

    it('unknown stored config', async () => {
      const response = await chat(gateway, { 'x-gateway-config': 'no-such-config' });
      expectError(response, 404, { type: 'not_found_error', code: 'config_not_found', message: /'no-such-config'/ });
    });

    it('unknown log id (a uuid and something else)', async () => {
      for (const id of ['0190a0b0-0000-7000-8000-000000000000', 'not-a-uuid']) {
        expectError(await call(gateway, `/v1/logs/${id}`), 404, { type: 'not_found_error', code: 'log_not_found', message: new RegExp(id) });
      }
    });

    it('unknown admin resources', async () => {
      expectError(await call(gateway, '/v1/virtual-keys/nope'), 404, { type: 'not_found_error', code: 'virtual_key_not_found' });
      expectError(await call(gateway, '/v1/configs/nope'), 404, { type: 'not_found_error', code: 'config_not_found' });
      expectError(await call(gateway, '/v1/api-keys/nope'), 404, { type: 'not_found_error', code: 'api_key_not_found' });
    });
  });

  describe('400: bad body, headers or config', () => {
    it('no routing at all names the four ways', async () => {
      const response = await chat(gateway, {});
      expectError(response, 400, { type: 'invalid_request_error', param: null });
      for (const way of ['x-gateway-config', 'x-gateway-virtual-key', 'x-gateway-provider', '@<virtual-key-slug>/<model>']) {
        expect(response.body.error.message).toContain(way);
      }
    });

    it('invalid JSON body', async () => {
      const response = await call(gateway, '/v1/chat/completions', { headers: VK, body: '{"model": "gpt-4o-mini", "messages": [' });
      expectError(response, 400, { type: 'invalid_request_error', code: 'invalid_json', message: 'Request body is not valid JSON' });
    });

    it('a JSON array body', async () => {
      const response = await call(gateway, '/v1/chat/completions', { headers: VK, body: [{ model: 'gpt-4o-mini', messages: HELLO }] });
      expectError(response, 400, { type: 'invalid_request_error', message: 'The request body must be a JSON object' });
    });

    // What the gateway acts on is checked for every target (the pass-through rule).
    it.each([
      ['messages is a string', { messages: 'hi' }, 'messages', /messages must be an array/],
      ['messages is empty', { messages: [] }, 'messages', /messages should not be empty/],
      ['stream is a string', { stream: 'yes' }, 'stream', /stream must be a boolean/],
      ['model missing', { model: undefined }, 'model', /model must be a string/],
      ['user is a number', { user: 42 }, 'user', /user must be a string/],
    ])('wrong type: %s', async (_, fields, param, message) => {
      const response = await chat(gateway, VK, fields);
      expectError(response, 400, { type: 'invalid_request_error', param, message });
    });

    // The rest is the translation's to check, for a provider with a format of its own; an
    // OpenAI-compatible provider gets it as sent (its own 400 comes back).
    it.each([
      ['temperature above 2', { temperature: 5 }, 'temperature'],
      ['unknown role', { messages: [{ role: 'robot', content: 'hi' }] }, 'messages[0].role'],
      ['n is not an integer', { n: 1.5 }, 'n'],
      [
        'content is a number',
        {
          messages: [
            { role: 'user', content: 'a' },
            { role: 'user', content: 5 },
          ],
        },
        'messages[1].content',
      ],
      ['a message is not an object', { messages: ['hi'] }, 'messages[0]'],
    ])('wrong type for a translation: %s', async (_, fields, param) => {
      const response = await chat(gateway, TRANSLATED, { model: 'claude-sonnet-4-5', ...fields });
      expectError(response, 400, { type: 'invalid_request_error', param, message: new RegExp(param.replace(/[[\].]/g, '\\$&')) });
    });

    it('logs a request refused by validation or routing with the model it named', async () => {
      const invalid = await chat(gateway, VK, { model: 'gpt-4o-mini', stream: 'yes' });
      const unrouted = await call(gateway, '/v1/chat/completions', { body: { model: '@no-such-key/gpt-4.1', messages: HELLO } });
      expect([invalid.status, unrouted.status]).toEqual([400, 404]);
      await gateway.flushLogs();
      const model = async (id: string | null) => (await admin(gateway, 'GET', `/v1/logs/${id}`)).body.model;
      expect(await model(invalid.headers.get('x-gateway-request-id'))).toBe('gpt-4o-mini');
      expect(await model(unrouted.headers.get('x-gateway-request-id'))).toBe('@no-such-key/gpt-4.1');
    });

    it('unknown provider in x-gateway-provider lists the known ones', async () => {
      const response = await chat(gateway, { 'x-gateway-provider': 'openia', authorization: 'Bearer sk-x' });
      expectError(response, 400, { type: 'invalid_request_error', message: /Unknown provider 'openia'/ });
      for (const known of ['openai', 'azure-openai', 'groq', 'openai-compatible']) expect(response.body.error.message).toContain(known);
    });

    it('x-gateway-provider without a provider key, or with a custom host that is not a URL', async () => {
      expectError(await chat(gateway, { 'x-gateway-provider': 'openai' }), 400, {
        type: 'invalid_request_error',
        param: 'authorization',
        message: /Authorization: Bearer/,
      });
      const badHost = { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-x', 'x-gateway-custom-host': 'ftp://example.com' };
      expectError(await chat(gateway, badHost), 400, { type: 'invalid_request_error', param: 'x-gateway-custom-host' });
    });

    it('invalid inline config names the bad field', async () => {
      const config = { provider: 'openai', api_key: 'sk-x', retry: { attempts: 'many' } };
      const response = await chat(gateway, { 'x-gateway-config': JSON.stringify(config) });
      expectError(response, 400, { type: 'invalid_request_error', code: 'invalid_config', param: 'x-gateway-config', message: /config\.retry\.attempts/ });
      expect(response.text).not.toContain('sk-x');
    });

    it('inline config that is not JSON, or has an unknown field', async () => {
      expectError(await chat(gateway, { 'x-gateway-config': '{"provider": "openai",' }), 400, {
        type: 'invalid_request_error',
        param: 'x-gateway-config',
        message: /not valid JSON/,
      });
      const unknown = await chat(gateway, { 'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'k', targetz: [] }) });
      expectError(unknown, 400, { type: 'invalid_request_error', code: 'invalid_config', message: /config\.targetz/ });
    });

    it('x-gateway-metadata that is not JSON, or has a non-string value', async () => {
      expectError(await chat(gateway, { ...VK, 'x-gateway-metadata': 'team=search' }), 400, {
        type: 'invalid_request_error',
        param: 'x-gateway-metadata',
        message: 'x-gateway-metadata is not valid JSON',
      });
      expectError(await chat(gateway, { ...VK, 'x-gateway-metadata': '{"team": 7}' }), 400, {
        type: 'invalid_request_error',
        param: 'x-gateway-metadata',
        message: /'team' must be a string/,
      });
      expectError(await chat(gateway, { ...VK, 'x-gateway-metadata': '["a"]' }), 400, { type: 'invalid_request_error', param: 'x-gateway-metadata' });
      const tooMany = JSON.stringify(Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])));
      expectError(await chat(gateway, { ...VK, 'x-gateway-metadata': tooMany }), 400, {
        type: 'invalid_request_error',
        param: 'x-gateway-metadata',
        message: /32 keys/,
      });
      const tooLong = JSON.stringify({ team: 'x'.repeat(129) });
      expectError(await chat(gateway, { ...VK, 'x-gateway-metadata': tooLong }), 400, {
        type: 'invalid_request_error',
        param: 'x-gateway-metadata',
        message: /128 characters/,
      });
    });

    it('malformed @slug model', async () => {
      for (const model of ['@errors-vk', '@/gpt-4o-mini', '@errors-vk/']) {
        const response = await chat(gateway, {}, { model });
        expectError(response, 400, { type: 'invalid_request_error', param: 'model', message: /@<virtual-key-slug>\/<model>/ });
      }
    });

    it('x-gateway-trace-id with forbidden characters', async () => {
      const response = await chat(gateway, { ...VK, 'x-gateway-trace-id': 'has spaces in it' });
      expectError(response, 400, { type: 'invalid_request_error', param: 'x-gateway-trace-id' });
    });
  });

  describe('403: virtual key not allowed', () => {
    it('a disabled virtual key, until it is enabled again', async () => {
      await createVirtualKey(gateway, { slug: 'to-disable', key: 'sk-disable-secret-000000', custom_host: `${mock.url}/v1` });
      expect((await admin(gateway, 'PATCH', '/v1/virtual-keys/to-disable', { disabled: true })).body.disabled).toBe(true);
      const response = await chat(gateway, { 'x-gateway-virtual-key': 'to-disable' });
      expectError(response, 403, { type: 'permission_error', code: 'virtual_key_disabled', message: /to-disable/ });
      expect((await admin(gateway, 'PATCH', '/v1/virtual-keys/to-disable', { disabled: false })).status).toBe(200);
      expect((await chat(gateway, { 'x-gateway-virtual-key': 'to-disable' })).status).toBe(200);
      mock.reset();
    });

    it('an expired virtual key', async () => {
      const expires_at = new Date(Date.now() - 60_000).toISOString();
      await createVirtualKey(gateway, { slug: 'expired-vk', key: 'sk-expired-secret-000000', custom_host: `${mock.url}/v1`, expires_at });
      const response = await chat(gateway, { 'x-gateway-virtual-key': 'expired-vk' });
      expectError(response, 403, { type: 'permission_error', code: 'virtual_key_expired', message: /expired-vk/ });
    });

    it('a model outside allowed_models', async () => {
      await createVirtualKey(gateway, { slug: 'mini-only', key: 'sk-mini-secret-000000', custom_host: `${mock.url}/v1`, allowed_models: ['gpt-4o-mini'] });
      const response = await chat(gateway, { 'x-gateway-virtual-key': 'mini-only' }, { model: 'gpt-4o' });
      expectError(response, 403, { type: 'permission_error', code: 'model_not_allowed', message: /'gpt-4o'/ });
    });
  });

  it('never answers 500 to odd input', async () => {
    const odd: [string, Parameters<typeof call>[2]][] = [
      ['/v1/chat/completions', { headers: VK, body: 'null' }],
      ['/v1/chat/completions', { headers: VK, body: '"just a string"' }],
      ['/v1/chat/completions', { headers: VK, body: { model: 42, messages: [null] } }],
      ['/v1/chat/completions', { headers: TRANSLATED, body: { model: 'claude-sonnet-4-5', messages: [{}] } }],
      ['/v1/chat/completions', { headers: TRANSLATED, body: { model: 'claude-sonnet-4-5', messages: HELLO, stop: [1, 2] } }],
      ['/v1/chat/completions', { headers: { 'x-gateway-config': '{"targets":[]}' }, body: { model: 'm', messages: HELLO } }],
      ['/v1/chat/completions', { headers: { 'x-gateway-config': '{"strategy":{"mode":"loadbalance"}}' }, body: { model: 'm', messages: HELLO } }],
      ['/v1/chat/completions', { headers: { 'x-gateway-config': '{"strategy":"x","provider":"nope"}' }, body: { model: 'm', messages: HELLO } }],
      ['/v1/chat/completions', { headers: { ...VK, 'content-type': 'application/json; charset=latin-9' }, body: '{}' }],
      ['/v1/logs?limit=abc', {}],
      ['/v1/logs?limit=100000', {}],
      ['/v1/logs?cursor=garbage', {}],
      ['/v1/logs?status=abc', {}],
      ['/v1/logs?from=yesterday', {}],
      ['/v1/api-keys?cursor=garbage', {}],
      ['/v1/virtual-keys', { body: { name: 'x', slug: 'Bad Slug', provider: 'openai', key: 'k' } }],
      ['/v1/virtual-keys', { body: { name: 'x', slug: 'unknown-provider', provider: 'nope', key: 'k' } }],
      ['/v1/configs', { body: { name: 'x', slug: 'bad-config', config: { retry: { attempts: -1 } } } }],
      ['/v1/api-keys', { body: { name: 'x', role: 'root', rate_limits: [{ type: 'requests', unit: 'rpm', value: 0 }] } }],
    ];
    for (const [path, options] of odd) {
      const response = await call(gateway, path, options);
      expect([path, response.status >= 400 && response.status < 500]).toEqual([path, true]);
      expect([path, Object.keys(response.body.error).sort()]).toEqual([path, ['code', 'message', 'param', 'type']]);
    }
  });
});

describe('413: body larger than BODY_LIMIT_BYTES', () => {
  let gateway: TestGateway;
  beforeAll(async () => (gateway = await startTestGateway({ BODY_LIMIT_BYTES: '2048' })));
  afterAll(async () => gateway?.close());

  it('answers 413 in the error shape, and accepts a body under the limit up to routing', async () => {
    const big = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(3000) }] };
    const response = await call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'any' }, body: big });
    expectError(response, 413, { type: 'invalid_request_error', code: 'payload_too_large', message: /2048 bytes/ });
    const small = await call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'any' }, body: { model: 'gpt-4o-mini', messages: HELLO } });
    expect(small.status).toBe(404); // past the body limit, then: unknown virtual key
  });
});
