import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';
import { RequestLogger } from '../../src/modules/logging/request-logger.service';

describe('tmp: clients leaving under load', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  beforeAll(async () => {
    mock = await startMockUpstream({ record: false });
    gateway = await startTestGateway();
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  it('ends every attempt', async () => {
    for (const stream of [false, true]) {
      const controllers = Array.from({ length: 150 }, () => new AbortController());
      const calls = controllers.map((c) =>
        fetch(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          signal: c.signal,
          headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1`, authorization: 'Bearer sk-x' },
          body: JSON.stringify({ model: 'mock-slow-100', messages: [{ role: 'user', content: 'hi' }], stream }),
        }).then((r) => r.text()).catch((e) => String(e)),
      );
      await new Promise((r) => setTimeout(r, stream ? 300 : 80));
      controllers.forEach((c) => c.abort());
      await Promise.all(calls);
      const logger = gateway.app.get(RequestLogger);
      const started = Date.now();
      await logger.whenIdle(5000);
      expect(Date.now() - started).toBeLessThan(2000);
    }
  });
});
