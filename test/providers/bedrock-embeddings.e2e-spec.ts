/**
 * Embeddings on AWS Bedrock through the official `openai` SDK: Cohere Embed and Titan Text
 * Embeddings through InvokeModel, every request SigV4-signed (the mock recomputes each
 * signature), answered in OpenAI's shape with `encoding_format` honoured (the SDK asks
 * base64 by default and decodes it), tokens from Bedrock's `x-amzn-bedrock-input-token-count`.
 * Titan takes one text a request: a client's batch fans out, one log row for the whole.
 */
import OpenAI from 'openai';
import { call, createVirtualKey, expectError, logOf, openai } from '../support/e2e-helpers';
import { BEDROCK_TEST_CREDENTIALS, mockEmbeddingTokens, mockEmbeddingVector } from '../support/mock-bedrock';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const COHERE = 'cohere.embed-english-v3';
const COHERE_V4 = 'us.cohere.embed-v4:0';
const TITAN = 'amazon.titan-embed-text-v2:0';
const TITAN_V1 = 'amazon.titan-embed-text-v1';
/** USD per million input tokens the price catalog gives Titan Text Embeddings (the v1 entry, which v2 matches). */
const TITAN_PRICE = 0.1;
const SIGNED = new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_TEST_CREDENTIALS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request`);

describe('embeddings on AWS Bedrock', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, {
      slug: 'bedrock-embed',
      provider: 'bedrock',
      key: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
      custom_host: mock.url,
      provider_options: { aws_region: 'us-east-1', aws_access_key_id: BEDROCK_TEST_CREDENTIALS.accessKeyId },
    });
    client = openai(gateway, { 'x-gateway-virtual-key': 'bedrock-embed' });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const invokes = () => mock.requests.filter((request) => request.path.endsWith('/invoke'));

  describe('Cohere Embed', () => {
    it('embeds every input in one signed InvokeModel, float vectors in OpenAI shape, tokens from the header in the answer and the log', async () => {
      const input = ['hello world', 'a second, longer text'];
      const { data, response } = await client.embeddings.create({ model: COHERE, input, encoding_format: 'float', user: 'dana' }).withResponse();
      expect(data).toMatchObject({ object: 'list', model: COHERE });
      expect(data.data.map((item) => item.embedding)).toEqual(input.map((text) => mockEmbeddingVector(text, 1024)));
      expect(data.data.map((item) => item.index)).toEqual([0, 1]);
      const tokens = mockEmbeddingTokens(input[0]) + mockEmbeddingTokens(input[1]);
      expect(data.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });

      expect(invokes()).toHaveLength(1);
      const [sent] = invokes();
      expect(sent.path).toBe(`/model/${COHERE}/invoke`);
      expect(sent.headers.authorization).toMatch(SIGNED);
      // search_document by default: what most embedding is for (indexing); `user` is not Bedrock's.
      expect(sent.body).toEqual({ texts: input, input_type: 'search_document' });

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'embeddings', provider: 'bedrock', model: COHERE, user: 'dana', prompt_tokens: tokens });
      // The price catalog has no price for Cohere Embed on Bedrock: no cost rather than a made-up 0.
      expect(log.cost_usd).toBeNull();
      expect(JSON.stringify(log)).not.toContain(BEDROCK_TEST_CREDENTIALS.secretAccessKey);
    });

    it("decodes the SDK's default base64 to the same numbers, passes input_type, truncate and dimensions (v4, behind a profile)", async () => {
      const data = await client.embeddings.create({
        model: COHERE_V4,
        input: 'find me',
        dimensions: 256,
        input_type: 'search_query',
        truncate: 'END',
      } as OpenAI.EmbeddingCreateParams);
      expect(data.data[0].embedding).toEqual(mockEmbeddingVector('find me', 256));
      const [sent] = invokes();
      expect(sent.path).toBe(`/model/${encodeURIComponent(COHERE_V4)}/invoke`);
      expect(sent.body).toEqual({ texts: ['find me'], input_type: 'search_query', truncate: 'END', output_dimension: 256 });

      const raw = await call(gateway, '/v1/embeddings', {
        headers: { 'x-gateway-virtual-key': 'bedrock-embed' },
        body: { model: COHERE, input: 'find me', encoding_format: 'base64' },
      });
      expect(raw.status).toBe(200);
      const bytes = Buffer.from(raw.body.data[0].embedding, 'base64');
      expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4))).toEqual(mockEmbeddingVector('find me', 1024));
    });

    it('splits more than 96 texts into requests of 96, merged in order with the tokens summed', async () => {
      const input = Array.from({ length: 100 }, (_, i) => `text number ${i}`);
      const data = await client.embeddings.create({ model: COHERE, input, encoding_format: 'float' });
      expect(data.data).toHaveLength(100);
      expect(data.data[99]).toMatchObject({ index: 99, embedding: mockEmbeddingVector('text number 99', 1024) });
      expect(data.usage.prompt_tokens).toBe(input.reduce((sum, text) => sum + mockEmbeddingTokens(text), 0));
      expect(
        invokes()
          .map((request) => request.body.texts.length)
          .sort((a, b) => a - b),
      ).toEqual([4, 96]);
    });
  });

  describe('Titan Text Embeddings', () => {
    it('fans a batch out one text a request, each signed, merged in order; one log row with the summed tokens and the catalog cost', async () => {
      const input = ['alpha', 'bravo charlie', 'delta echo foxtrot golf', 'hotel'];
      const { data, response } = await client.embeddings.create({ model: TITAN, input, encoding_format: 'float', dimensions: 256 }).withResponse();
      expect(data.data.map((item) => [item.index, item.embedding])).toEqual(input.map((text, index) => [index, mockEmbeddingVector(text, 256)]));
      const tokens = input.reduce((sum, text) => sum + mockEmbeddingTokens(text), 0);
      expect(data.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });

      const sent = invokes();
      expect(sent).toHaveLength(input.length);
      for (const request of sent) {
        expect(request.path).toBe(`/model/${encodeURIComponent(TITAN)}/invoke`);
        expect(request.headers.authorization).toMatch(SIGNED);
      }
      expect(sent.map((request) => request.body).sort((a, b) => a.inputText.localeCompare(b.inputText))).toEqual(
        input.map((inputText) => ({ inputText, dimensions: 256 })),
      );

      const requestId = response.headers.get('x-gateway-request-id');
      const log = await logOf(gateway, requestId);
      expect(log).toMatchObject({ operation: 'embeddings', provider: 'bedrock', model: TITAN, prompt_tokens: tokens });
      expect(log.response_body.data).toHaveLength(input.length);
      expect(log.cost_usd).toBeCloseTo((tokens * TITAN_PRICE) / 1e6, 12);
      // One row for the client's request, not one per upstream request (this is the first Titan request of the file).
      const rows = await call(gateway, `/v1/logs?model=${encodeURIComponent(TITAN)}`);
      expect(rows.body.data.map((row: { id: string }) => row.id)).toEqual([requestId]);
    });

    it("answers one text in one request, the SDK's default base64 decoded; v1 takes inputText alone", async () => {
      const data = await client.embeddings
        .create({ model: TITAN_V1, input: 'just one', normalize: false } as OpenAI.EmbeddingCreateParams)
        .catch((error: unknown) => error);
      // Titan v1 takes no normalize: Bedrock's ValidationException passes through as a 400.
      expect(data).toBeInstanceOf(OpenAI.BadRequestError);
      expect((data as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/ValidationException.*extraneous key \[normalize\]/);

      mock.reset();
      const decoded = await client.embeddings.create({ model: TITAN_V1, input: ['just one'] });
      expect(decoded.data).toHaveLength(1);
      expect(decoded.data[0].embedding).toEqual(mockEmbeddingVector('just one', 1536));
      expect(decoded.usage.prompt_tokens).toBe(mockEmbeddingTokens('just one'));
      expect(invokes().map((request) => request.body)).toEqual([{ inputText: 'just one' }]);
    });

    it("fails the whole request with a part's error (a throttle: 429 in OpenAI's shape), and logs the failure", async () => {
      const input = ['fine', 'also fine', 'please mock-throttle this one', 'fine again'];
      const raw = await call(gateway, '/v1/embeddings', { headers: { 'x-gateway-virtual-key': 'bedrock-embed' }, body: { model: TITAN, input } });
      expectError(raw, 429, { type: 'rate_limit_error', code: 'ThrottlingException', message: /Provider bedrock answered 429 ThrottlingException/ });
      expect(invokes().some((request) => request.body.inputText === input[2])).toBe(true);
      const log = await logOf(gateway, raw.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'embeddings', provider: 'bedrock', status_code: 429 });
    });
  });

  it('refuses what Bedrock cannot embed before anything is sent: token ids, an unknown field, a model of neither family (400 naming the field)', async () => {
    const headers = { 'x-gateway-virtual-key': 'bedrock-embed' };
    expectError(await call(gateway, '/v1/embeddings', { headers, body: { model: TITAN, input: [[1, 2, 3]] } }), 400, {
      type: 'invalid_request_error',
      param: 'input',
    });
    expectError(await call(gateway, '/v1/embeddings', { headers, body: { model: TITAN, input: ['a', 'b'], input_type: 'search_query' } }), 400, {
      type: 'invalid_request_error',
      param: 'input_type',
    });
    expectError(await call(gateway, '/v1/embeddings', { headers, body: { model: COHERE, input: 'a', embedding_types: ['int8'] } }), 400, {
      type: 'invalid_request_error',
      param: 'embedding_types',
    });
    expectError(await call(gateway, '/v1/embeddings', { headers, body: { model: 'amazon.titan-embed-image-v1', input: 'a' } }), 400, {
      type: 'invalid_request_error',
      param: 'model',
    });
    expect(invokes()).toHaveLength(0);
  });
});
