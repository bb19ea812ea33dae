/**
 * `POST /v1/embeddings` and `POST /v1/images/generations`: routing (virtual key,
 * provider header, Azure deployment URL), validation, errors passed through, the log
 * row, and the config features every operation gets from the route executor.
 * The mock's routes and model switches are described in test/support/mock-openai-operations.ts.
 */
import type OpenAI from 'openai';
import { call, createVirtualKey, expectError, logOf, openai, RawResponse } from '../support/e2e-helpers';
import { mockErrorBody } from '../support/mock-openai-chunks';
import { MOCK_PNG_BASE64 } from '../support/mock-openai-operations';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const VK_SECRET = 'sk-ops-vk-secret-111111';
const DIRECT_SECRET = 'sk-ops-direct-secret-222222';

/** Both operations, with a body of a priced model for each. */
const OPERATIONS = [
  { operation: 'embeddings', path: '/v1/embeddings', body: { model: 'text-embedding-3-small', input: 'The quick brown fox' } },
  { operation: 'images.generations', path: '/v1/images/generations', body: { model: 'gpt-image-1', prompt: 'A lighthouse at dawn', quality: 'low' } },
] as const;

describe('embeddings and image generations', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let base: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ RETRY_BASE_DELAY_MS: '10' });
    base = `${mock.url}/v1`;
    await createVirtualKey(gateway, { slug: 'openai-ops', key: VK_SECRET, custom_host: base });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  /** The single request the mock saw. */
  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  /** A POST to the gateway, never throwing on an error status. */
  const post = (path: string, body: Record<string, unknown>, headers: Record<string, string>): Promise<RawResponse> => call(gateway, path, { body, headers });

  /** A config targeting the mock, answering as `model`. */
  const target = (model: string, extra: Record<string, unknown> = {}) => ({
    provider: 'openai',
    api_key: 'sk-test',
    custom_host: base,
    override_params: { model },
    ...extra,
  });
  const withConfig = (config: Record<string, unknown>) => ({ 'x-gateway-config': JSON.stringify(config) });

  /** Every log row of the request's trace: the failed attempts, then the request's own row. */
  async function traceRows(res: RawResponse): Promise<any[]> {
    await gateway.flushLogs();
    const rows = (await admin(gateway, 'GET', `/v1/logs?trace_id=${res.headers.get('x-gateway-trace-id')}`)).body.data as any[];
    const ownId = res.headers.get('x-gateway-request-id');
    return [...rows.filter((r) => r.id !== ownId).reverse(), ...rows.filter((r) => r.id === ownId)];
  }

  describe('embeddings', () => {
    it('through a virtual key with the SDK: base64 by default, decoded; logged with tokens and cost', async () => {
      const client = openai(gateway, { 'x-gateway-virtual-key': 'openai-ops' });
      const { data, response } = await client.embeddings
        .create({ model: 'text-embedding-3-small', input: ['first text', 'the second text'], user: 'emma' })
        .withResponse();
      expect(data).toMatchObject({ object: 'list', model: 'text-embedding-3-small', usage: { prompt_tokens: 3 + 4, total_tokens: 7 } });
      expect(data.data.map((d) => [d.object, d.index, d.embedding.length])).toEqual([
        ['embedding', 0, 1536],
        ['embedding', 1, 1536],
      ]);
      expect(upstream()).toMatchObject({ path: '/v1/embeddings', body: { model: 'text-embedding-3-small', encoding_format: 'base64', user: 'emma' } });
      expect(upstream().headers.authorization).toBe(`Bearer ${VK_SECRET}`);
      expect(response.headers.get('x-gateway-provider')).toBe('openai');
      expect(response.headers.get('x-gateway-cache-status')).toBe('DISABLED');

      // The same vectors as floats: the base64 answer passed through byte for byte.
      const floats = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['first text', 'the second text'], encoding_format: 'float' });
      expect(floats.data.map((d) => d.embedding)).toEqual(data.data.map((d) => d.embedding));

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'embeddings',
        provider: 'openai',
        model: 'text-embedding-3-small',
        status_code: 200,
        is_stream: false,
        prompt_tokens: 7,
        completion_tokens: 0,
        total_tokens: 7,
        user: 'emma',
        error: null,
      });
      expect(log.cost_usd).toBeCloseTo((7 * 0.02) / 1e6, 12);
      expect(log.request_body).toMatchObject({ input: ['first text', 'the second text'] });
      expect(log.response_body).toMatchObject({ object: 'list', usage: { prompt_tokens: 7 } });
    });

    it('through x-gateway-provider: token arrays, dimensions and unknown fields pass through', async () => {
      const body = { model: 'text-embedding-3-large', input: [[1, 2, 3], [4]], dimensions: 8, encoding_format: 'float', vendor_field: { keep: true } };
      const direct = { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': base, authorization: `Bearer ${DIRECT_SECRET}` };
      const res = await post('/v1/embeddings', body, direct);
      expect(res.status).toBe(200);
      expect(res.body.data.map((d: any) => d.embedding.length)).toEqual([8, 8]);
      expect(res.body.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
      expect(upstream().body).toEqual(body);
      expect(upstream().headers.authorization).toBe(`Bearer ${DIRECT_SECRET}`);
      const log = await logOf(gateway, res.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'embeddings', virtual_key_id: null, model: 'text-embedding-3-large', prompt_tokens: 4 });
      expect(log.cost_usd).toBeCloseTo((4 * 0.13) / 1e6, 12);
    });
  });

  describe('image generations', () => {
    it('through a virtual key with the SDK: a GPT Image answer with its token usage, priced', async () => {
      const client = openai(gateway, { 'x-gateway-virtual-key': 'openai-ops' });
      const prompt = 'A watercolour lighthouse at dawn';
      const { data, response } = await client.images.generate({ model: 'gpt-image-1', prompt, n: 2, quality: 'low', user: 'ines' }).withResponse();
      expect(data.data!.map((image) => image.b64_json)).toEqual([MOCK_PNG_BASE64, MOCK_PNG_BASE64]);
      const inputTokens = Math.ceil(prompt.length / 4);
      expect(data.usage).toMatchObject({ input_tokens: inputTokens, output_tokens: 2 * 272 });
      expect(upstream()).toMatchObject({ path: '/v1/images/generations', body: { model: 'gpt-image-1', prompt, n: 2, quality: 'low' } });

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'images.generations',
        provider: 'openai',
        model: 'gpt-image-1',
        status_code: 200,
        prompt_tokens: inputTokens,
        completion_tokens: 544,
        total_tokens: inputTokens + 544,
        user: 'ines',
      });
      expect(log.cost_usd).toBeCloseTo((inputTokens * 5 + 544 * 40) / 1e6, 12);
    });

    it('through x-gateway-provider: DALL·E answers have no usage, so they are priced per image by size and quality', async () => {
      const client = openai(gateway, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': base }, DIRECT_SECRET);
      const { data, response } = await client.images.generate({ model: 'dall-e-3', prompt: 'A red kite', size: '1024x1024' }).withResponse();
      expect(data.data![0]).toEqual({ url: expect.stringMatching(/^https:\/\/.+\.png$/), revised_prompt: 'A red kite' });
      expect(upstream().headers.authorization).toBe(`Bearer ${DIRECT_SECRET}`);
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'images.generations', model: 'dall-e-3', status_code: 200, prompt_tokens: null, cost_usd: 0.04 });

      const priced = async (body: { model: string; prompt: string; size?: string; quality?: string; n?: number }) => {
        const { data: answer, response: raw } = await client.images.generate(body as OpenAI.ImageGenerateParamsNonStreaming).withResponse();
        return { images: answer.data!.length, cost: (await logOf(gateway, raw.headers.get('x-gateway-request-id'))).cost_usd };
      };
      expect(await priced({ model: 'dall-e-3', prompt: 'wide', size: '1792x1024', quality: 'hd' })).toEqual({ images: 1, cost: 0.12 });
      expect(await priced({ model: 'dall-e-2', prompt: 'three', size: '512x512', n: 3 })).toEqual({ images: 3, cost: 0.054 });
      // A size the table has no price for: no cost rather than a guess.
      expect(await priced({ model: 'dall-e-2', prompt: 'odd', size: '640x480' })).toEqual({ images: 1, cost: null });
    });
  });

  it('azure-openai: the deployment URL of each operation, api-version and the api-key header', async () => {
    await createVirtualKey(gateway, {
      slug: 'azure-ops',
      provider: 'azure-openai',
      key: 'azure-ops-key-333333',
      custom_host: mock.url,
      provider_options: { api_version: '2024-10-21' },
    });
    const client = openai(gateway, { 'x-gateway-virtual-key': 'azure-ops' });
    await client.embeddings.create({ model: 'text-embedding-3-small', input: 'azure' });
    await client.images.generate({ model: 'dall-e-3', prompt: 'azure' });
    expect(mock.requests.map((r) => [r.path, r.query['api-version'], r.headers['api-key'], r.headers.authorization])).toEqual([
      ['/openai/deployments/text-embedding-3-small/embeddings', '2024-10-21', 'azure-ops-key-333333', undefined],
      ['/openai/deployments/dall-e-3/images/generations', '2024-10-21', 'azure-ops-key-333333', undefined],
    ]);
  });

  describe('errors', () => {
    const vk = { 'x-gateway-virtual-key': 'openai-ops' };

    it.each([
      ['/v1/embeddings', { model: 'text-embedding-3-small', input: [] }, 'input should not be empty', 'input'],
      ['/v1/embeddings', { model: 'text-embedding-3-small', input: ['a', 3] }, 'input[1] must be a string, like input[0]', 'input[1]'],
      ['/v1/embeddings', { model: 'text-embedding-3-small', input: 'a', encoding_format: 'int8' }, /^encoding_format must be one of/, 'encoding_format'],
      ['/v1/images/generations', { prompt: 'a' }, 'model must be a string', 'model'],
      ['/v1/images/generations', { model: 'dall-e-3', prompt: '' }, 'prompt should not be empty', 'prompt'],
      ['/v1/images/generations', { model: 'dall-e-3', prompt: 'a', size: 'huge' }, 'size must be auto or <width>x<height>, e.g. 1024x1024', 'size'],
      ['/v1/images/generations', { model: 'dall-e-2', prompt: 'a', n: 11 }, 'n must not be greater than 10', 'n'],
    ])('%s %j: 400 naming the field, nothing sent', async (path, body, message, param) => {
      expectError(await post(path, body, vk), 400, { type: 'invalid_request_error', param, message });
      expect(mock.requests).toHaveLength(0);
    });

    it.each([
      ['/v1/embeddings', 'groq', { model: 'nomic-embed-text', input: 'a' }, 'Provider groq does not offer embeddings'],
      ['/v1/images/generations', 'deepseek', { model: 'some-image-model', prompt: 'a' }, 'Provider deepseek does not offer image generations'],
    ])('%s on %s: 400 naming the provider and the operation', async (path, provider, body, message) => {
      const res = await post(path, body, { 'x-gateway-provider': provider, authorization: 'Bearer sk-x' });
      expectError(res, 400, { type: 'invalid_request_error', param: 'model', message });
    });

    it.each(OPERATIONS)('$operation: a provider error passes through with its status, body and Retry-After; logged', async ({ operation, path, body }) => {
      const res = await post(path, { ...body, model: 'mock-error-429' }, vk);
      expect(res.status).toBe(429);
      expect(res.body).toEqual(JSON.parse(mockErrorBody(429)));
      expect(res.headers.get('retry-after')).toBe('1');
      const log = await logOf(gateway, res.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation, status_code: 429, model: 'mock-error-429', error: { type: 'upstream_error', code: '429' } });
    });
  });

  describe('config features', () => {
    it.each(OPERATIONS)('$operation: fallback moves on from a 503; one log row per attempt under the trace', async ({ operation, path, body }) => {
      const config = { strategy: { mode: 'fallback' }, targets: [target('mock-error-503'), target(body.model)] };
      const res = await post(path, body, withConfig(config));
      expect(res.status).toBe(200);
      expect(res.headers.get('x-gateway-target-index')).toBe('1');
      expect(mock.requests.map((r) => r.body.model)).toEqual(['mock-error-503', body.model]);
      const rows = await traceRows(res);
      expect(rows.map((r) => [r.operation, r.status_code, r.target_index, r.model])).toEqual([
        [operation, 503, '0', 'mock-error-503'],
        [operation, 200, '1', body.model],
      ]);
    });

    it.each(OPERATIONS)('$operation: a dropped connection and a request_timeout fall back too', async ({ path, body }) => {
      const config = { strategy: { mode: 'fallback' }, targets: [target('mock-drop'), target('mock-slow-2000', { request_timeout: 150 }), target(body.model)] };
      const res = await post(path, body, withConfig(config));
      expect([res.status, res.headers.get('x-gateway-target-index')]).toEqual([200, '2']);
      expect((await traceRows(res)).map((r) => [r.status_code, r.error?.code ?? null])).toEqual([
        [502, 'upstream_unreachable'],
        [504, 'request_timeout'],
        [200, null],
      ]);
    });

    it.each(OPERATIONS)('$operation: retry on a flaky target', async ({ path, body }) => {
      const res = await post(path, body, withConfig(target('mock-flaky-1-503', { retry: { attempts: 1 } })));
      expect(res.status).toBe(200);
      expect(res.headers.get('x-gateway-retry-count')).toBe('1');
      expect(mock.requests).toHaveLength(2);
    });

    it.each(OPERATIONS)('$operation: cache MISS then HIT without a second upstream request; the HIT costs 0', async ({ operation, path, body }) => {
      const config = { provider: 'openai', api_key: 'sk-test', custom_host: base, cache: { mode: 'simple' } };
      const miss = await post(path, body, withConfig(config));
      const hit = await post(path, body, withConfig(config));
      expect([miss.status, hit.status]).toEqual([200, 200]);
      expect([miss.headers.get('x-gateway-cache-status'), hit.headers.get('x-gateway-cache-status')]).toEqual(['MISS', 'HIT']);
      expect(hit.text).toBe(miss.text);
      expect(mock.requests).toHaveLength(1);

      const missLog = await logOf(gateway, miss.headers.get('x-gateway-request-id'));
      const hitLog = await logOf(gateway, hit.headers.get('x-gateway-request-id'));
      expect(missLog).toMatchObject({ operation, cache_status: 'MISS' });
      expect(missLog.cost_usd).toBeGreaterThan(0);
      expect(hitLog).toMatchObject({ operation, cache_status: 'HIT', status_code: 200, cost_usd: 0, prompt_tokens: missLog.prompt_tokens });
    });
  });
});
