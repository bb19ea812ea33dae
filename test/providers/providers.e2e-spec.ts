/**
 * The long tail of providers (issue 21): `GET /v1/providers` lists every provider id the
 * registry routes to with the operations each serves; a vendor of the list is reached in
 * OpenAI's wire format at its host (here the mock, named per request), logged under its own
 * id; the built-in local servers (`lm-studio`) are hosts an admin chose, like `ollama`.
 */
import { call, createApiKey, expectError, logOf, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

describe('providers of the long tail', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let userKey: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    // A user key may not name a private host per request here, so the lm-studio case shows the built-in host is not held to that.
    gateway = await startTestGateway({ UPSTREAM_ALLOW_PRIVATE_NETWORKS: 'false' });
    userKey = (await createApiKey(gateway, { name: 'app' })).key;
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  describe('GET /v1/providers', () => {
    it('lists every provider id, sorted, with the operations each serves, to any gateway key', async () => {
      const response = await call(gateway, '/v1/providers', { apiKey: userKey });
      expect(response.status).toBe(200);
      expect(Object.keys(response.body)).toEqual(['object', 'data']);
      expect(response.body.object).toBe('list');
      const data: { id: string; operations: string[] }[] = response.body.data;
      const ids = data.map((entry) => entry.id);
      expect(ids.length).toBeGreaterThanOrEqual(30);
      expect(ids).toEqual([...ids].sort());
      expect(new Set(ids).size).toBe(ids.length);
      for (const entry of data) {
        expect(Object.keys(entry)).toEqual(['id', 'operations']);
        expect(entry.operations.length).toBeGreaterThan(0);
      }
      const operations = Object.fromEntries(data.map((entry) => [entry.id, entry.operations]));
      expect(operations.cerebras).toEqual(['chat.completions', 'models']);
      expect(operations['azure-ai-foundry']).toEqual(['chat.completions', 'embeddings']);
      expect(operations['lm-studio']).toEqual(['chat.completions', 'responses', 'embeddings', 'models']);
      expect(operations.sambanova).toEqual(['chat.completions', 'embeddings', 'audio.transcriptions', 'audio.translations', 'models']);
      expect(operations.anthropic).toEqual(['chat.completions', 'messages', 'messages.count_tokens', 'models']);
      expect(operations.openai).toEqual(
        expect.arrayContaining([
          'chat.completions',
          'responses',
          'embeddings',
          'images.generations',
          'audio.speech',
          'realtime',
          'fine_tuning.jobs',
          'files',
          'vector_stores',
        ]),
      );
      expect(operations.google).toContain('chat.completions');
    });

    it('needs a gateway key (401 in the error shape) and writes no log row', async () => {
      expectError(await call(gateway, '/v1/providers', { apiKey: null }), 401, { type: 'authentication_error', code: 'invalid_api_key' });
      const listed = await call(gateway, '/v1/providers');
      expect(listed.status).toBe(200);
      await gateway.flushLogs();
      const log = await call(gateway, `/v1/logs/${listed.headers.get('x-gateway-request-id')}`);
      expect(log.status).toBe(404);
      expect(mock.requests).toHaveLength(0);
    });
  });

  it("routes a chat completion to a vendor by id (Cerebras at a host named per request), in OpenAI's wire format, logged under its id", async () => {
    // The admin key's own header may name a private host (the mock), as in test/security/ssrf.e2e-spec.ts.
    const client = openai(gateway, { 'x-gateway-provider': 'cerebras', 'x-gateway-custom-host': `${mock.url}/v1` }, 'csk-test-cerebras-secret');
    const { data, response } = await client.chat.completions
      .create({ model: 'llama-3.3-70b', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe('Hello from mock');
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', headers: { authorization: 'Bearer csk-test-cerebras-secret' } });
    expect(response.headers.get('x-gateway-provider')).toBe('cerebras');

    const stream = await client.chat.completions.create({ model: 'llama-3.3-70b', messages: [{ role: 'user', content: 'Say hello' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from mock');

    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({
      operation: 'chat.completions',
      provider: 'cerebras',
      model: 'llama-3.3-70b',
      status_code: 200,
      prompt_tokens: data.usage!.prompt_tokens,
    });
  });

  it("prices a vendor the catalog lacks from its price list, and Hugging Face's router at the rate of the provider the model's suffix names, streams included", async () => {
    const priced = async (provider: string, model: string, perMillion: { input: number; output: number }) => {
      const client = openai(gateway, { 'x-gateway-provider': provider, 'x-gateway-custom-host': `${mock.url}/v1` }, 'vendor-test-secret');
      const { data, response } = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }] }).withResponse();
      const plain = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      const expected = (data.usage!.prompt_tokens * perMillion.input + data.usage!.completion_tokens * perMillion.output) / 1e6;
      expect(plain).toMatchObject({ provider, model, status_code: 200 });
      expect(Number(plain.cost_usd)).toBeCloseTo(expected, 10);

      const { data: stream, response: streamed } = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true } })
        .withResponse();
      for await (const chunk of stream) void chunk;
      const log = await logOf(gateway, streamed.headers.get('x-gateway-request-id'));
      expect(log.completion_tokens).toBeGreaterThan(0);
      expect(Number(log.cost_usd)).toBeCloseTo((log.prompt_tokens * perMillion.input + log.completion_tokens * perMillion.output) / 1e6, 10);
    };
    await priced('sambanova', 'Meta-Llama-3.3-70B-Instruct', { input: 0.6, output: 1.2 });
    await priced('huggingface', 'meta-llama/Llama-3.3-70B-Instruct:nebius', { input: 0.13, output: 0.4 });

    // The router's own choice of provider: unknown, never 0.
    const client = openai(gateway, { 'x-gateway-provider': 'huggingface', 'x-gateway-custom-host': `${mock.url}/v1` }, 'hf-test-secret');
    const { response } = await client.chat.completions
      .create({ model: 'meta-llama/Llama-3.3-70B-Instruct', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).cost_usd).toBeNull();
  });

  it('sends Azure AI Foundry requests with its api-key header and api-version', async () => {
    const client = openai(gateway, { 'x-gateway-provider': 'azure-ai-foundry', 'x-gateway-custom-host': `${mock.url}/v1` }, 'foundry-test-secret');
    const embedding = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hi', encoding_format: 'float' });
    expect(embedding.data[0].embedding.length).toBeGreaterThan(0);
    expect(mock.requests[0]).toMatchObject({
      path: '/v1/embeddings',
      query: { 'api-version': '2024-05-01-preview' },
      headers: { 'api-key': 'foundry-test-secret' },
    });
    expect(mock.requests[0].headers.authorization).toBeUndefined();
  });

  it('sends to the built-in lm-studio provider on localhost:1234 (refused only by the network, not by the host policy)', async () => {
    const response = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-provider': 'lm-studio' },
      body: { model: 'qwen3-8b', messages: [{ role: 'user', content: 'hi' }] },
      apiKey: userKey,
    });
    // Nothing listens on 1234 here: a 502 from the refused connection, not a 400 upstream_host_not_allowed.
    expectError(response, 502, { type: 'upstream_error', code: 'upstream_unreachable', message: /could not be reached/ });
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ provider: 'lm-studio', status_code: 502 });
  });

  it('asks for custom_host where a vendor has no public endpoint (vllm)', async () => {
    const response = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-provider': 'vllm' },
      body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
      apiKey: userKey,
    });
    expectError(response, 400, { type: 'invalid_request_error', message: /vllm needs a custom host/ });
    expect(mock.requests).toHaveLength(0);
  });
});
