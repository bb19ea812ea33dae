/**
 * Server-side request forgery: provider hosts (x-gateway-custom-host, a virtual key's
 * custom_host) are checked after DNS resolution. Hosts an admin chose (virtual keys,
 * stored configs, built-in providers, an admin key's own headers) may be private; hosts a
 * user-role key names per request follow the operator's policy: by default no private
 * network (loopback included). Link-local and metadata addresses: never.
 */
import { call, createApiKey, createConfig, createVirtualKey, expectError, logOf } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

describe('provider host policy', () => {
  let strict: TestGateway;
  let listed: TestGateway;
  let mock: MockUpstream;
  const userKeys = new Map<TestGateway, string>();

  beforeAll(async () => {
    mock = await startMockUpstream();
    strict = await startTestGateway({ UPSTREAM_ALLOW_PRIVATE_NETWORKS: 'false' });
    listed = await startTestGateway({ UPSTREAM_ALLOW_PRIVATE_NETWORKS: 'false', UPSTREAM_ALLOWED_NETWORKS: '127.0.0.1/32, ::1' });
    for (const gateway of [strict, listed]) userKeys.set(gateway, (await createApiKey(gateway, { name: 'app' })).key);
  });

  afterAll(async () => {
    await strict?.close();
    await listed?.close();
    await mock?.close();
  });

  /** A host named per request by a user-role key. */
  const viaHost = (gateway: TestGateway, host: string, apiKey = userKeys.get(gateway)) =>
    call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-x', 'x-gateway-custom-host': host },
      body: CHAT,
      apiKey,
    });
  const mockPort = () => new URL(mock.url).port;

  it('refuses the cloud metadata address and link-local ranges, however written', async () => {
    for (const host of ['http://169.254.169.254/v1', 'http://[::ffff:a9fe:a9fe]/v1', 'http://[fe80::1]/v1']) {
      expectError(await viaHost(strict, host), 400, {
        type: 'invalid_request_error',
        code: 'upstream_host_not_allowed',
        message: /link-local, metadata or reserved/,
      });
    }
    expect(mock.requests).toHaveLength(0);
  });

  it('judges IPv6 forms by the IPv4 they embed, and refuses the special-purpose ranges, for hosts named per request', async () => {
    const reserved = [
      'http://[64:ff9b::a9fe:a9fe]/v1',
      'http://[64:ff9b:1::a9fe:a9fe]/v1',
      'http://[2002:a9fe:a9fe::1]/v1',
      'http://[::169.254.169.254]/v1',
      'http://192.0.2.1/v1',
      'http://198.51.100.1/v1',
      'http://203.0.113.1/v1',
      'http://255.255.255.255/v1',
      'http://[2001:db8::1]/v1',
      'http://[100::1]/v1',
    ];
    for (const host of reserved) {
      expectError(await viaHost(strict, host), 400, {
        type: 'invalid_request_error',
        code: 'upstream_host_not_allowed',
        message: /link-local, metadata or reserved/,
      });
    }
    const internal = [
      'http://[::7f00:1]/v1',
      'http://[::127.0.0.1]/v1',
      'http://[::ffff:127.0.0.1]/v1',
      'http://[64:ff9b::a00:1]/v1',
      'http://[2002:7f00:1::1]/v1',
      'http://[fec0::1]/v1',
      'http://198.18.0.1/v1',
    ];
    for (const host of internal) {
      expectError(await viaHost(strict, host), 400, { type: 'invalid_request_error', code: 'upstream_host_not_allowed', message: /private address/ });
    }
    expect(mock.requests).toHaveLength(0);
  });

  it('applies the same checks to MCP server hosts', async () => {
    for (const url of ['http://[64:ff9b::a9fe:a9fe]/mcp', 'http://[::7f00:1]/mcp', 'http://198.18.0.1/mcp', 'http://[fec0::1]/mcp']) {
      const created = await call(strict, '/v1/mcp-servers', { body: { name: 'm', slug: 'm', url } });
      expectError(created, 400, { type: 'invalid_request_error', code: 'mcp_server_not_allowed', param: 'url' });
    }
  });

  it('refuses loopback named per request by a user key, checked after DNS resolution of a name, in headers and inline configs alike', async () => {
    const response = await viaHost(strict, `http://localhost:${mockPort()}/v1`);
    expectError(response, 400, {
      type: 'invalid_request_error',
      code: 'upstream_host_not_allowed',
      message: /localhost is not allowed: .*private address.*UPSTREAM_ALLOW_PRIVATE_NETWORKS/,
    });
    const inline = JSON.stringify({ provider: 'openai', api_key: 'sk-x', custom_host: `${mock.url}/v1` });
    const byInline = await call(strict, '/v1/chat/completions', { headers: { 'x-gateway-config': inline }, body: CHAT, apiKey: userKeys.get(strict) });
    expectError(byInline, 400, { type: 'invalid_request_error', code: 'upstream_host_not_allowed', message: /127\.0\.0\.1 is not allowed/ });
    expect(mock.requests).toHaveLength(0);

    await strict.flushLogs();
    const log = await logOf(strict, byInline.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 400, error: { type: 'invalid_request_error', code: 'upstream_host_not_allowed' } });
  });

  it("reaches a private host an admin chose: a virtual key, a stored config, an admin key's own header; never a metadata address", async () => {
    const user = userKeys.get(strict);
    await createVirtualKey(strict, { slug: 'internal', key: 'sk-internal', custom_host: `${mock.url}/v1` });
    await createConfig(strict, 'internal-config', { provider: 'openai', api_key: 'sk-x', custom_host: `http://localhost:${mockPort()}/v1` });
    const before = mock.requests.length;
    expect((await call(strict, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'internal' }, body: CHAT, apiKey: user })).status).toBe(200);
    expect((await call(strict, '/v1/chat/completions', { headers: { 'x-gateway-config': 'internal-config' }, body: CHAT, apiKey: user })).status).toBe(200);
    expect((await viaHost(strict, `http://localhost:${mockPort()}/v1`, strict.adminKey)).status).toBe(200);
    expect(mock.requests.length - before).toBe(3);

    await createVirtualKey(strict, { slug: 'metadata', key: 'sk-x', custom_host: 'http://169.254.169.254/v1' });
    const metadata = await call(strict, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'metadata' }, body: CHAT, apiKey: user });
    expectError(metadata, 400, { type: 'invalid_request_error', code: 'upstream_host_not_allowed', message: /link-local, metadata or reserved/ });
  });

  it('sends to the built-in ollama provider on localhost (refused only by the network, not by the policy)', async () => {
    const response = await call(strict, '/v1/chat/completions', {
      headers: { 'x-gateway-provider': 'ollama' },
      body: { ...CHAT, model: 'llama3.2' },
      apiKey: userKeys.get(strict),
    });
    // Nothing listens on 11434 here: the connection is refused, which is a 502, not a 400 of the host policy.
    expectError(response, 502, { type: 'upstream_error', code: 'upstream_unreachable', message: /could not be reached/ });
  });

  it('lets through the networks the operator lists, by address or by name', async () => {
    expect((await viaHost(listed, `${mock.url}/v1`)).status).toBe(200);
    expect((await viaHost(listed, `http://localhost:${mockPort()}/v1`)).status).toBe(200);
    expectError(await viaHost(listed, 'http://169.254.169.254/v1'), 400, { type: 'invalid_request_error', code: 'upstream_host_not_allowed' });
  });
});
