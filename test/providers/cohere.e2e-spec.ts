/**
 * Cohere through the gateway: chat completions translated to and from Cohere's v2 chat
 * (plain, streamed, a tool call round trip) and embeddings in OpenAI's shape (float and
 * the SDK's default base64), driven with the official `openai` SDK; `POST /v1/rerank`
 * through raw HTTP (the SDKs have no rerank). Each with its log row.
 * The mock's rules are in test/support/mock-cohere.ts.
 */
import OpenAI from 'openai';
import { call, createVirtualKey, expectError, logOf, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const COHERE_SECRET = 'cohere-secret-key-424242';
const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather by city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};
const DOCUMENTS = ['Paris is the capital of France.', 'The weather in Berlin is cold.', 'Cats sleep a lot.'];

describe('cohere', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'cohere-prod', provider: 'cohere', key: COHERE_SECRET, custom_host: `${mock.url}/v2` });
    client = openai(gateway, { 'x-gateway-virtual-key': 'cohere-prod' });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  describe('chat completions', () => {
    it('translates the request and answers in OpenAI shape, logged with tokens and cost', async () => {
      const { data, response } = await client.chat.completions
        .create({
          model: 'command-a-03-2025',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'echo: hello cohere' },
          ],
          max_tokens: 50,
          top_p: 0.5,
          user: 'dana',
        })
        .withResponse();
      expect(data.object).toBe('chat.completion');
      expect(data.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: 'hello cohere' }, finish_reason: 'stop' });
      const sent = upstream();
      expect(sent.path).toBe('/v2/chat');
      expect(sent.headers.authorization).toBe(`Bearer ${COHERE_SECRET}`);
      expect(sent.body).toEqual({
        model: 'command-a-03-2025',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'echo: hello cohere' },
        ],
        max_tokens: 50,
        p: 0.5,
      });
      // The billed counts, not Cohere's raw ones (which add its prompt template).
      expect(data.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'chat.completions',
        provider: 'cohere',
        model: 'command-a-03-2025',
        user: 'dana',
        prompt_tokens: 7,
        completion_tokens: 2,
      });
      expect(log.cost_usd).toBeCloseTo((7 * 2.5 + 2 * 10) / 1e6, 12);
    });

    it('streams OpenAI chunks from Cohere events, with usage', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({
          model: 'command-a-03-2025',
          messages: [{ role: 'user', content: 'echo: one two three' }],
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      let text = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe('one two three');
      expect(finish).toBe('stop');
      expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3 });
      expect(upstream().body.stream).toBe(true);
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'chat.completions', provider: 'cohere', is_stream: true, prompt_tokens: 5, completion_tokens: 3 });
    });

    it.each([false, true])('round-trips a tool call (stream: %s)', async (streamed) => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
      let assistant: OpenAI.ChatCompletionMessageParam;
      if (!streamed) {
        const completion = await client.chat.completions.create({ model: 'command-a-03-2025', messages, tools: [WEATHER_TOOL] });
        expect(completion.choices[0].finish_reason).toBe('tool_calls');
        assistant = completion.choices[0].message;
      } else {
        const stream = client.chat.completions.stream({ model: 'command-a-03-2025', messages, tools: [WEATHER_TOOL] });
        const completion = await stream.finalChatCompletion();
        expect(completion.choices[0].finish_reason).toBe('tool_calls');
        const { role, content, tool_calls } = completion.choices[0].message;
        assistant = { role, content, tool_calls };
      }
      const toolCall = assistant.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(toolCall.function).toEqual({ name: 'get_weather', arguments: '{"location":"Paris"}' });
      expect(assistant.content).toBe('I will look up the weather.');
      expect(mock.requests[0].body.tools).toEqual([{ type: 'function', function: WEATHER_TOOL.function }]);

      mock.reset();
      const answer = await client.chat.completions.create({
        model: 'command-a-03-2025',
        messages: [...messages, assistant, { role: 'tool', tool_call_id: toolCall.id, content: '{"temperature": 21}' }],
        tools: [WEATHER_TOOL],
      });
      expect(answer.choices[0]).toMatchObject({ message: { content: 'Hello from mock' }, finish_reason: 'stop' });
      expect(upstream().body.messages.slice(1)).toEqual([
        {
          role: 'assistant',
          tool_plan: 'I will look up the weather.',
          tool_calls: [{ id: toolCall.id, type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: toolCall.id, content: '{"temperature": 21}' },
      ]);
    });

    it('refuses what Cohere cannot do with a 400 naming it, and passes Cohere errors on in OpenAI shape', async () => {
      const refused = await call(gateway, '/v1/chat/completions', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: { model: 'command-a-03-2025', messages: [{ role: 'user', content: 'hi' }], n: 2 },
      });
      expectError(refused, 400, { type: 'invalid_request_error', param: 'n' });
      expect(mock.requests).toHaveLength(0);

      const failed = await call(gateway, '/v1/chat/completions', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: { model: 'mock-error-429', messages: [{ role: 'user', content: 'hi' }] },
      });
      expectError(failed, 429, { type: 'rate_limit_error', message: 'Mock error (status 429)' });
    });
  });

  describe('through the bridges', () => {
    it('/v1/messages (Anthropic shape) and /v1/responses reach Cohere through chat completions', async () => {
      const messages = await call(gateway, '/v1/messages', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod', 'anthropic-version': '2023-06-01' },
        body: { model: 'command-a-03-2025', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'echo: bridged hello' }] },
      });
      expect(messages.status).toBe(200);
      expect(messages.body).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'bridged hello' }], stop_reason: 'end_turn' });
      expect(upstream().body).toMatchObject({
        model: 'command-a-03-2025',
        max_tokens: 64,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'echo: bridged hello' },
        ],
      });

      mock.reset();
      const response = await client.responses.create({ model: 'command-a-03-2025', input: 'echo: via responses' });
      expect(response.output_text).toBe('via responses');
      expect(upstream().path).toBe('/v2/chat');
    });
  });

  describe('embeddings', () => {
    it('answers float vectors in OpenAI shape, logged with tokens and cost', async () => {
      const { data, response } = await client.embeddings
        .create({ model: 'embed-v4.0', input: ['hello world', 'second text'], encoding_format: 'float' })
        .withResponse();
      expect(data.object).toBe('list');
      expect(data.data).toHaveLength(2);
      expect(data.data[1]).toMatchObject({ object: 'embedding', index: 1 });
      expect(data.data[0].embedding).toHaveLength(8);
      expect(data.data[0].embedding[0]).toBeCloseTo(Math.sin(11), 3);
      expect(data.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
      const sent = upstream();
      expect(sent.path).toBe('/v2/embed');
      expect(sent.body).toEqual({ model: 'embed-v4.0', texts: ['hello world', 'second text'], input_type: 'search_document', embedding_types: ['float'] });

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'embeddings', provider: 'cohere', model: 'embed-v4.0', prompt_tokens: 6 });
      expect(log.cost_usd).toBeCloseTo((6 * 0.12) / 1e6, 12);
    });

    it("decodes the SDK's default base64 to the same vectors, and passes input_type and dimensions on", async () => {
      const floats = await client.embeddings.create({ model: 'embed-v4.0', input: 'hello world', encoding_format: 'float', dimensions: 4 });
      mock.reset();
      // No encoding_format: the SDK asks for base64 and decodes it into numbers itself.
      const decoded = await client.embeddings.create({
        model: 'embed-v4.0',
        input: 'hello world',
        dimensions: 4,
        input_type: 'search_query',
      } as OpenAI.EmbeddingCreateParams);
      expect(upstream().body).toMatchObject({ input_type: 'search_query', output_dimension: 4, embedding_types: ['float'] });
      expect(decoded.data[0].embedding).toHaveLength(4);
      decoded.data[0].embedding.forEach((value, i) => expect(value).toBeCloseTo(floats.data[0].embedding[i], 6));

      const raw = await call(gateway, '/v1/embeddings', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: { model: 'embed-v4.0', input: 'hello world', dimensions: 4, encoding_format: 'base64' },
      });
      expect(typeof raw.body.data[0].embedding).toBe('string');
      expect(Buffer.from(raw.body.data[0].embedding, 'base64')).toHaveLength(16);
    });
  });

  describe('POST /v1/rerank', () => {
    it('ranks the documents best first with their texts, logged as rerank with its search units at $2 per 1,000 searches', async () => {
      const response = await call(gateway, '/v1/rerank', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: {
          model: 'rerank-v3.5',
          query: 'weather in Berlin',
          documents: [DOCUMENTS[0], { text: DOCUMENTS[1] }, DOCUMENTS[2]],
          top_n: 2,
          return_documents: true,
          user: 'erin',
        },
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        object: 'list',
        model: 'rerank-v3.5',
        usage: { search_units: 1 },
        results: [
          { index: 1, relevance_score: 1, document: { text: DOCUMENTS[1] } },
          { index: 0, relevance_score: 0, document: { text: DOCUMENTS[0] } },
        ],
      });
      const sent = upstream();
      expect(sent.path).toBe('/v2/rerank');
      expect(sent.headers.authorization).toBe(`Bearer ${COHERE_SECRET}`);
      expect(sent.body).toEqual({ model: 'rerank-v3.5', query: 'weather in Berlin', documents: DOCUMENTS, top_n: 2 });

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'rerank',
        provider: 'cohere',
        model: 'rerank-v3.5',
        user: 'erin',
        status_code: 200,
        prompt_tokens: 0,
        billed_units: { search_units: 1 },
      });
      expect(log.cost_usd).toBeCloseTo(0.002, 12);
      expect(log.response_body.usage).toEqual({ search_units: 1 });
    });

    it('an override sets the per-search price; 150 documents are two search units', async () => {
      expect(
        (await admin(gateway, 'POST', '/v1/prices', { provider: 'cohere', model: 'rerank-english-v3.0', input: 0, output: 0, per_search: 0.005 })).status,
      ).toBe(201);
      const documents = Array.from({ length: 150 }, (_, i) => `document ${i}`);
      const response = await call(gateway, '/v1/rerank', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: { model: 'rerank-english-v3.0', query: 'cats', documents },
      });
      expect(response.status).toBe(200);
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.billed_units).toEqual({ search_units: 2 });
      expect(log.cost_usd).toBeCloseTo(0.01, 12);
      expect((await call(gateway, '/v1/prices/cohere/rerank-english-v3.0', { method: 'DELETE' })).status).toBe(204);

      // A rerank model nothing prices per search: no cost rather than a made-up 0.
      const unpriced = await call(gateway, '/v1/rerank', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: { model: 'rerank-unknown-v9', query: 'cats', documents: DOCUMENTS },
      });
      expect((await logOf(gateway, unpriced.headers.get('x-gateway-request-id'))).cost_usd).toBeNull();
    });

    it('leaves documents out unless asked, and checks what the gateway reads', async () => {
      const plain = await call(gateway, '/v1/rerank', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: { model: 'rerank-v3.5', query: 'cats', documents: DOCUMENTS },
      });
      expect(plain.status).toBe(200);
      expect(plain.body.results.map((result: any) => result.index)).toEqual([2, 0, 1]);
      expect(plain.body.results[0]).toEqual({ index: 2, relevance_score: 1 });

      const bad = await call(gateway, '/v1/rerank', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: { model: 'rerank-v3.5', query: 'cats', documents: [1, 2] },
      });
      expectError(bad, 400, { type: 'invalid_request_error', param: 'documents[0]' });
      const badTopN = await call(gateway, '/v1/rerank', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: { model: 'rerank-v3.5', query: 'cats', documents: DOCUMENTS, top_n: 0 },
      });
      expectError(badTopN, 400, { type: 'invalid_request_error', param: 'top_n' });

      const unoffered = await call(gateway, '/v1/rerank', {
        headers: { 'x-gateway-provider': 'anthropic', authorization: 'Bearer sk-ant-x' },
        body: { model: 'claude', query: 'cats', documents: DOCUMENTS },
      });
      expectError(unoffered, 400, { type: 'invalid_request_error', message: /anthropic does not offer rerank/ });

      const failed = await call(gateway, '/v1/rerank', {
        headers: { 'x-gateway-virtual-key': 'cohere-prod' },
        body: { model: 'mock-error-401', query: 'cats', documents: DOCUMENTS },
      });
      expectError(failed, 401, { type: 'authentication_error', message: 'Mock error (status 401)' });
    });

    it('reaches an OpenAI-compatible server with a Jina-shaped /rerank (vLLM), answered in the same shape and priced by tokens', async () => {
      const headers = { 'x-gateway-provider': 'openai-compatible', authorization: 'Bearer vllm-key', 'x-gateway-custom-host': `${mock.url}/v1` };
      const response = await call(gateway, '/v1/rerank', { headers, body: { model: 'bge-reranker-v2-m3', query: 'cats', documents: DOCUMENTS, top_n: 1 } });
      expect(response.status).toBe(200);
      // The server sent each result's document; the client did not ask for them.
      expect(response.body).toMatchObject({
        object: 'list',
        model: 'bge-reranker-v2-m3',
        results: [{ index: 2, relevance_score: 1 }],
        usage: { total_tokens: 21 },
      });
      expect(response.body.results[0].document).toBeUndefined();
      expect(upstream()).toMatchObject({ path: '/v1/rerank', headers: { authorization: 'Bearer vllm-key' } });
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'rerank',
        provider: 'openai-compatible',
        model: 'bge-reranker-v2-m3',
        prompt_tokens: 21,
        total_tokens: 21,
        billed_units: null,
        cost_usd: null,
      });

      // With a token price (an override for the self-hosted model), the tokens are priced at the input rate.
      expect((await admin(gateway, 'POST', '/v1/prices', { provider: 'openai-compatible', model: 'bge-reranker-v2-m3', input: 0.5, output: 0 })).status).toBe(
        201,
      );
      const priced = await call(gateway, '/v1/rerank', { headers, body: { model: 'bge-reranker-v2-m3', query: 'cats', documents: DOCUMENTS, top_n: 1 } });
      expect((await logOf(gateway, priced.headers.get('x-gateway-request-id'))).cost_usd).toBeCloseTo((21 * 0.5) / 1e6, 12);
      expect((await call(gateway, '/v1/prices/openai-compatible/bge-reranker-v2-m3', { method: 'DELETE' })).status).toBe(204);
    });
  });
});
