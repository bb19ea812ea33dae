import OpenAI from 'openai';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

describe('chat completions through the gateway with the OpenAI SDK', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    const created = await admin(gateway, 'POST', '/v1/virtual-keys', {
      name: 'OpenAI prod',
      slug: 'openai-prod',
      provider: 'openai',
      key: 'sk-test-provider-secret-123456',
      custom_host: `${mock.url}/v1`,
    });
    expect(created.status).toBe(201);
    client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'openai-prod' },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it('answers non-streaming and logs tokens, cost, user, metadata and bodies', async () => {
    const { data, response } = await client.chat.completions
      .create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], user: 'alice' },
        { headers: { 'x-gateway-metadata': JSON.stringify({ team: 'search' }) } },
      )
      .withResponse();
    expect(data.choices[0].message.content).toBe('Hello from mock');
    expect(mock.requests[0].headers.authorization).toBe('Bearer sk-test-provider-secret-123456');
    const requestId = response.headers.get('x-gateway-request-id')!;
    expect(response.headers.get('x-gateway-provider')).toBe('openai');

    await gateway.flushLogs();
    const log = await admin(gateway, 'GET', `/v1/logs/${requestId}`);
    expect(log.status).toBe(200);
    expect(log.body).toMatchObject({
      operation: 'chat.completions',
      provider: 'openai',
      model: 'gpt-4o-mini',
      status_code: 200,
      user: 'alice',
      metadata: { team: 'search' },
      prompt_tokens: data.usage!.prompt_tokens,
      completion_tokens: data.usage!.completion_tokens,
      is_stream: false,
    });
    const expectedCost = (data.usage!.prompt_tokens * 0.15 + data.usage!.completion_tokens * 0.6) / 1e6;
    expect(log.body.cost_usd).toBeCloseTo(expectedCost, 12);
    expect(log.body.response_body.choices[0].message.content).toBe('Hello from mock');
    expect(log.body.request_headers['x-gateway-api-key']).toBe('[REDACTED]');
  });

  it('streams chunk by chunk and logs the assembled response', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'echo: one two three four' }],
      stream: true,
      user: 'bob',
    });
    let text = '';
    let sawUsage = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) sawUsage = true;
    }
    expect(text).toBe('one two three four');
    expect(sawUsage).toBe(false);
    expect(mock.requests[0].body.stream_options).toEqual({ include_usage: true });

    await gateway.flushLogs();
    const logs = await admin(gateway, 'GET', '/v1/logs?user=bob');
    expect(logs.body.data).toHaveLength(1);
    expect(logs.body.data[0]).toMatchObject({ is_stream: true, completion_tokens: 4, status_code: 200 });
    expect(logs.body.data[0].response_body.choices[0].message.content).toBe('one two three four');
    expect(logs.body.data[0].ttft_ms).toEqual(expect.any(Number));
  });
});
