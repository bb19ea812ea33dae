/**
 * Embeddings from Google through the official `openai` SDK: the Gemini API's
 * `batchEmbedContents` and Vertex AI's `:predict`, answered in OpenAI's shape with
 * `encoding_format` honoured (the SDK asks base64 by default and decodes it itself).
 */
import { generateKeyPairSync } from 'node:crypto';
import OpenAI from 'openai';
import { call, createVirtualKey, expectError, logOf, openai } from '../support/e2e-helpers';
import { mockEmbeddingValues } from '../support/mock-gemini';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const ACCOUNT = 'embedder@vertex-test.iam.gserviceaccount.com';
const GEMINI_EMBEDDING_PRICE = 0.15; // USD per million input tokens in the price catalog (gemini-embedding-001)

describe('embeddings from Google', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let gemini: OpenAI;
  let vertex: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    mock.vertex.registerServiceAccount(ACCOUNT, publicKey);
    const serviceAccount = JSON.stringify({
      type: 'service_account',
      project_id: 'vertex-test',
      private_key_id: 'e1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: ACCOUNT,
      token_uri: `${mock.url}/token`,
    });
    await createVirtualKey(gateway, { slug: 'gemini', provider: 'google', key: 'AIza-embeddings-test-key', custom_host: `${mock.url}/v1beta` });
    await createVirtualKey(gateway, {
      slug: 'vertex',
      provider: 'vertex-ai',
      key: serviceAccount,
      custom_host: mock.url,
      provider_options: { project_id: 'vertex-test', region: 'us-central1' },
    });
    gemini = openai(gateway, { 'x-gateway-virtual-key': 'gemini' });
    vertex = openai(gateway, { 'x-gateway-virtual-key': 'vertex' });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const lastUpstream = (pathEnd: string) => {
    const sent = mock.requests.filter((request) => request.path.endsWith(pathEnd)).at(-1);
    expect(sent).toBeDefined();
    return sent!;
  };

  describe('Gemini API (batchEmbedContents)', () => {
    it('float vectors in OpenAI shape, usage estimated, logged with tokens and the catalog cost', async () => {
      const input = ['hello world', 'a second, longer text'];
      const { data, response } = await gemini.embeddings
        .create({ model: 'gemini-embedding-001', input, encoding_format: 'float', dimensions: 4 })
        .withResponse();
      expect(data.object).toBe('list');
      expect(data.model).toBe('gemini-embedding-001');
      expect(data.data.map((item) => item.embedding)).toEqual(input.map((text) => mockEmbeddingValues(text, 4)));
      expect(data.data[1]).toMatchObject({ object: 'embedding', index: 1 });
      const estimated = Math.ceil(input[0].length / 4) + Math.ceil(input[1].length / 4);
      expect(data.usage).toEqual({ prompt_tokens: estimated, total_tokens: estimated });

      const sent = lastUpstream(':batchEmbedContents');
      expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
      expect(sent.headers['x-goog-api-key']).toBe('AIza-embeddings-test-key');
      expect(sent.body).toEqual({
        requests: input.map((text) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text }] }, outputDimensionality: 4 })),
      });

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'embeddings', provider: 'google', model: 'gemini-embedding-001', prompt_tokens: estimated });
      expect(log.cost_usd).toBeCloseTo((estimated * GEMINI_EMBEDDING_PRICE) / 1e6, 12);
    });

    it("the SDK's default base64 decodes to the same numbers; raw base64 is float32 bytes", async () => {
      const decoded = await gemini.embeddings.create({ model: 'models/gemini-embedding-001', input: 'hello world' });
      expect(decoded.data[0].embedding).toEqual(mockEmbeddingValues('hello world'));
      expect(lastUpstream(':batchEmbedContents').body.requests[0]).not.toHaveProperty('outputDimensionality');

      const raw = await call(gateway, '/v1/embeddings', {
        headers: { 'x-gateway-virtual-key': 'gemini' },
        body: { model: 'gemini-embedding-001', input: 'hello world', encoding_format: 'base64', task_type: 'RETRIEVAL_QUERY' },
      });
      expect(raw.status).toBe(200);
      expect(typeof raw.body.data[0].embedding).toBe('string');
      expect(Array.from(new Float32Array(new Uint8Array(Buffer.from(raw.body.data[0].embedding, 'base64')).buffer))).toEqual(
        mockEmbeddingValues('hello world'),
      );
      expect(lastUpstream(':batchEmbedContents').body.requests[0].taskType).toBe('RETRIEVAL_QUERY');
    });

    it('refuses token ids and unknown fields with a 400 naming the field', async () => {
      expectError(
        await call(gateway, '/v1/embeddings', { headers: { 'x-gateway-virtual-key': 'gemini' }, body: { model: 'gemini-embedding-001', input: [[1, 2, 3]] } }),
        400,
        {
          type: 'invalid_request_error',
          param: 'input',
        },
      );
      expectError(
        await call(gateway, '/v1/embeddings', {
          headers: { 'x-gateway-virtual-key': 'gemini' },
          body: { model: 'gemini-embedding-001', input: 'x', truncate: 'END' },
        }),
        400,
        {
          type: 'invalid_request_error',
          param: 'truncate',
        },
      );
    });
  });

  describe('Vertex AI (:predict)', () => {
    it('float and base64 vectors, token counts from statistics, cost from the catalog', async () => {
      const input = ['hello world', 'vertex text'];
      const { data, response } = await vertex.embeddings.create({ model: 'gemini-embedding-001', input, encoding_format: 'float' }).withResponse();
      expect(data.data.map((item) => item.embedding)).toEqual(input.map((text) => mockEmbeddingValues(text)));
      const tokens = input.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
      expect(data.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
      const sent = lastUpstream(':predict');
      expect(sent.path).toBe('/v1/projects/vertex-test/locations/us-central1/publishers/google/models/gemini-embedding-001:predict');
      expect(sent.headers.authorization).toMatch(/^Bearer ya29\.mock-/);
      expect(sent.body).toEqual({ instances: input.map((content) => ({ content })) });
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'embeddings', provider: 'vertex-ai', model: 'gemini-embedding-001', prompt_tokens: tokens });
      expect(log.cost_usd).toBeCloseTo((tokens * GEMINI_EMBEDDING_PRICE) / 1e6, 12);

      const decoded = await vertex.embeddings.create({ model: 'text-embedding-005', input: 'hello world', dimensions: 3 });
      expect(decoded.data[0].embedding).toEqual(mockEmbeddingValues('hello world', 3));
      expect(lastUpstream(':predict').body).toEqual({ instances: [{ content: 'hello world' }], parameters: { outputDimensionality: 3 } });
    });

    it('a model the price catalog lacks is logged with its tokens and no cost', async () => {
      const { response } = await vertex.embeddings.create({ model: 'text-embedding-005', input: 'priced?', encoding_format: 'float' }).withResponse();
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'embeddings', provider: 'vertex-ai', model: 'text-embedding-005', prompt_tokens: 2, cost_usd: null });
    });
  });
});
