import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { randomBytes } from 'node:crypto';
import { GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { admin, startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

describe('two gateway processes on one database', () => {
  let first: TestGateway;
  let second: GatewayProcess;
  let secondUrl: string;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    first = await startTestGateway();
    // A long cache TTL: only the change notification can make the second instance forget a key.
    second = await startGatewayProcess({
      DATABASE_URL: first.databaseUrl,
      GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
      GATEWAY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      KEY_CACHE_TTL_MS: '600000',
    });
    secondUrl = second.url;
  });

  afterAll(async () => {
    await second?.stop();
    await first?.close();
    await mock?.close();
  });

  const listKeys = (key: string) => fetch(`${secondUrl}/v1/api-keys`, { headers: { 'x-gateway-api-key': key } });

  it('stops accepting a key revoked on the other instance at once', async () => {
    const created = await admin(first, 'POST', '/v1/api-keys', { name: 'ops', role: 'admin' });
    expect(created.status).toBe(201);
    expect((await listKeys(created.body.key)).status).toBe(200); // now cached on the second instance

    expect((await admin(first, 'DELETE', `/v1/api-keys/${created.body.id}`)).status).toBe(200);
    let status = 0;
    for (let i = 0; i < 50 && status !== 401; i++) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await listKeys(created.body.key)).status;
    }
    expect(status).toBe(401);
  });

  it('says so when a virtual key was sealed with another GATEWAY_ENCRYPTION_KEY (this test gives each instance its own)', async () => {
    await admin(first, 'POST', '/v1/virtual-keys', {
      name: 'sealed',
      slug: 'sealed-elsewhere',
      provider: 'openai',
      key: 'sk-sealed',
      custom_host: `${mock.url}/v1`,
    });
    const response = await fetch(`${secondUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-virtual-key': 'sealed-elsewhere', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/cannot decrypt .*GATEWAY_ENCRYPTION_KEY/);
  });

  it("holds an API key's budget across both instances under concurrency", async () => {
    // 4,000 characters: 1,000 prompt tokens and 3 completion tokens of gpt-4o-mini, $0.0001518 a request.
    const key = await admin(first, 'POST', '/v1/api-keys', { name: 'shared budget', role: 'user', budget_limit_usd: 0.000759 }); // 5 requests
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(4000) }], max_tokens: 3 });
    const headers = {
      'x-gateway-api-key': key.body.key,
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-shared',
      'x-gateway-custom-host': `${mock.url}/v1`,
      'content-type': 'application/json',
    };
    const send = (url: string) => fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body }).then((r) => r.status);
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => send(i % 2 ? secondUrl : first.url)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(35);
    expect(mock.requests).toHaveLength(5);
  });
});
