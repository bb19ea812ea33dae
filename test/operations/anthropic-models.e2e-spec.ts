/**
 * `GET /v1/models` and `/v1/models/{id}` in Anthropic's shape (the request carries
 * `anthropic-version` or `vendor-version`), driven by the official `@anthropic-ai/sdk`:
 * passed through from Anthropic (its paging query too), converted from the OpenAI-shaped
 * lists of OpenAI and Gemini (paged by the gateway); and an Anthropic key's list in
 * OpenAI's shape for clients without the header.
 */
import Anthropic from '@anthropic-ai/sdk';
import { call, createVirtualKey, logOf } from '../support/e2e-helpers';
import { ANTHROPIC_MODELS } from '../support/mock-anthropic-body';
import { GEMINI_OPENAI_MODELS } from '../support/mock-gemini';
import { MOCK_MODEL_IDS } from '../support/mock-openai-chunks';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const ANTHROPIC_SECRET = 'sk-ant-provider-secret-121212';

describe('models in Anthropic shape with the Anthropic SDK', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: ANTHROPIC_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-343434', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'gemini-prod', provider: 'google', key: 'gemini-key-565656', custom_host: `${mock.url}/v1beta` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const anthropic = (virtualKey: string) =>
    new Anthropic({
      baseURL: gateway.url,
      apiKey: 'dummy-key',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': virtualKey },
    });

  async function listAll(client: Anthropic, limit?: number): Promise<any[]> {
    const models: any[] = [];
    for await (const model of client.models.list(limit ? { limit } : {})) models.push(model);
    return models;
  }

  describe('from Anthropic, passed through', () => {
    it('pages with the SDK through limit and after_id, with the provider key and a version', async () => {
      const models = await listAll(anthropic('anthropic-prod'), 2);
      expect(models).toEqual(ANTHROPIC_MODELS);
      expect(mock.requests.map((request) => [request.path, request.query])).toEqual([
        ['/v1/models', { limit: '2' }],
        ['/v1/models', { limit: '2', after_id: ANTHROPIC_MODELS[1].id }],
      ]);
      for (const request of mock.requests) {
        expect(request.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
        expect(request.headers['anthropic-version']).toBe('2023-06-01');
      }
    });

    it('retrieves one model and logs the call', async () => {
      const { data, response } = await anthropic('anthropic-prod').models.retrieve('claude-sonnet-4-5-20250929').withResponse();
      expect(data).toEqual(ANTHROPIC_MODELS[1]);
      expect(mock.requests[0].path).toBe('/v1/models/claude-sonnet-4-5-20250929');
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'models.retrieve', provider: 'anthropic', status_code: 200, response_body: ANTHROPIC_MODELS[1] });
    });

    it("answers an Anthropic key in OpenAI's shape to a client without the version header", async () => {
      const listed = await call(gateway, '/v1/models', { headers: { 'x-gateway-virtual-key': 'anthropic-prod' } });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({
        object: 'list',
        data: ANTHROPIC_MODELS.map((model) => ({ id: model.id, object: 'model', created: Date.parse(model.created_at) / 1000, owned_by: 'anthropic' })),
      });
      expect(mock.requests[0].query).toEqual({ limit: '1000' });
    });
  });

  describe('from OpenAI, converted', () => {
    it('lists every model with the SDK in pages the gateway cuts, created as RFC 3339, the id as display name', async () => {
      const models = await listAll(anthropic('openai-prod'), 3);
      expect(models.map((model) => model.id)).toEqual(MOCK_MODEL_IDS);
      expect(models[0]).toEqual({ type: 'model', id: MOCK_MODEL_IDS[0], display_name: MOCK_MODEL_IDS[0], created_at: '2024-05-10T18:50:49Z' });
      expect(mock.requests.length).toBe(Math.ceil(MOCK_MODEL_IDS.length / 3));
      // OpenAI's list takes no paging query: none is forwarded.
      expect(mock.requests.every((request) => request.path === '/v1/models' && Object.keys(request.query).length === 0)).toBe(true);
    });

    it('retrieves one model converted, and answers vendor-version like anthropic-version', async () => {
      expect(await anthropic('openai-prod').models.retrieve('gpt-4o')).toEqual({
        type: 'model',
        id: 'gpt-4o',
        display_name: 'gpt-4o',
        created_at: '2024-05-10T18:50:49Z',
      });
      const raw = await call(gateway, '/v1/models?limit=1', { headers: { 'x-gateway-virtual-key': 'openai-prod', 'vendor-version': '2023-06-01' } });
      expect(raw.body).toMatchObject({
        data: [{ type: 'model', id: MOCK_MODEL_IDS[0] }],
        has_more: true,
        first_id: MOCK_MODEL_IDS[0],
        last_id: MOCK_MODEL_IDS[0],
      });
    });

    it("keeps OpenAI's shape, as the provider sent it, without the header", async () => {
      const listed = await call(gateway, '/v1/models', { headers: { 'x-gateway-virtual-key': 'openai-prod' } });
      expect(listed.body.object).toBe('list');
      expect(listed.body.data[0]).toEqual({ id: MOCK_MODEL_IDS[0], object: 'model', created: 1715367049, owned_by: 'system' });
    });

    it("answers errors in Anthropic's shape: a bad limit, a provider without a list", async () => {
      const badLimit = await call(gateway, '/v1/models?limit=0', { headers: { 'x-gateway-virtual-key': 'openai-prod', 'anthropic-version': '2023-06-01' } });
      expect(badLimit.status).toBe(400);
      expect(badLimit.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'limit must be an integer from 1 to 1000' } });
      const noList = await call(gateway, '/v1/models', {
        headers: { 'x-gateway-provider': 'fireworks-ai', authorization: 'Bearer fw', 'anthropic-version': '2023-06-01' },
      });
      expect(noList.status).toBe(400);
      expect(noList.body).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'Provider fireworks-ai does not offer a model list' },
      });
    });
  });

  describe('from Gemini, converted', () => {
    it("lists Gemini's OpenAI-compatible list with the SDK", async () => {
      const models = await listAll(anthropic('gemini-prod'));
      expect(models).toEqual(
        GEMINI_OPENAI_MODELS.map((model) => ({ type: 'model', id: model.id, display_name: model.id, created_at: '1970-01-01T00:00:00Z' })),
      );
      expect(mock.requests[0].path).toBe('/v1beta/openai/models');
      expect(mock.requests[0].headers.authorization).toBe('Bearer gemini-key-565656');
    });

    it("passes Gemini's error through in Anthropic's shape with its status", async () => {
      const missing = await call(gateway, '/v1/models/gemini-0-nothing', {
        headers: { 'x-gateway-virtual-key': 'gemini-prod', 'anthropic-version': '2023-06-01' },
      });
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: expect.stringContaining('gemini-0-nothing') } });
    });
  });
});
