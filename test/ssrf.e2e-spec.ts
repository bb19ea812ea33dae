/**
 * Server-side request forgery: provider hosts (x-gateway-custom-host, a virtual key's
 * custom_host) are checked after DNS resolution against the operator's policy. By
 * default no private network (loopback included) and never link-local or metadata.
 */
import { call, createVirtualKey, expectError, logOf } from './support/e2e-helpers';
import { MockUpstream, startMockUpstream } from './support/mock-upstream';
import { startTestGateway, TestGateway } from './support/test-gateway';

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

describe('provider host policy', () => {
  let strict: TestGateway;
  let listed: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    strict = await startTestGateway({ UPSTREAM_ALLOW_PRIVATE_NETWORKS: 'false' });
    listed = await startTestGateway({ UPSTREAM_ALLOW_PRIVATE_NETWORKS: 'false', UPSTREAM_ALLOWED_NETWORKS: '127.0.0.1/32, ::1' });
  });

  afterAll(async () => {
    await strict?.close();
    await listed?.close();
    await mock?.close();
  });

  const viaHost = (gateway: TestGateway, host: string) =>
    call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-x', 'x-gateway-custom-host': host }, body: CHAT });
  const mockPort = () => new URL(mock.url).port;

  it('refuses the cloud metadata address and link-local ranges, however written', async () => {
    for (const host of ['http://169.254.169.254/v1', 'http://[::ffff:a9fe:a9fe]/v1', 'http://[fe80::1]/v1']) {
      expectError(await viaHost(strict, host), 400, { type: 'invalid_request_error', code: 'upstream_host_not_allowed', message: /link-local, metadata or reserved/ });
    }
    expect(mock.requests).toHaveLength(0);
  });

  it('refuses loopback by default, checked after DNS resolution of a name, for headers and virtual keys alike', async () => {
    const response = await viaHost(strict, `http://localhost:${mockPort()}/v1`);
    expectError(response, 400, { type: 'invalid_request_error', code: 'upstream_host_not_allowed', message: /localhost is not allowed: .*private address.*UPSTREAM_ALLOW_PRIVATE_NETWORKS/ });
    await createVirtualKey(strict, { slug: 'internal', key: 'sk-internal', custom_host: `${mock.url}/v1` });
    const byKey = await call(strict, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': 'internal' }, body: CHAT });
    expectError(byKey, 400, { type: 'invalid_request_error', code: 'upstream_host_not_allowed', message: /127\.0\.0\.1 is not allowed/ });
    expect(mock.requests).toHaveLength(0);

    await strict.flushLogs();
    const log = await logOf(strict, byKey.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 400, error: { type: 'invalid_request_error', code: 'upstream_host_not_allowed' } });
  });

  it('lets through the networks the operator lists, by address or by name', async () => {
    expect((await viaHost(listed, `${mock.url}/v1`)).status).toBe(200);
    expect((await viaHost(listed, `http://localhost:${mockPort()}/v1`)).status).toBe(200);
    expectError(await viaHost(listed, 'http://169.254.169.254/v1'), 400, { type: 'invalid_request_error', code: 'upstream_host_not_allowed' });
  });
});
