/**
 * `POST /v1/messages/count_tokens` with the official `@anthropic-ai/sdk`: counted natively by
 * Anthropic (headers mapped, body passed through) and by Gemini (countTokens of the request
 * its chat would send), estimated with the tokenizer for OpenAI (`"estimated": true`);
 * logged as `messages.count_tokens`, never cached, nothing reserved on budgets.
 * The mocks' counting rules are in test/support/mock-anthropic.ts and mock-gemini.ts.
 */
import Anthropic from '@anthropic-ai/sdk';
import { estimateInputTokens } from '../../src/modules/messages/count-tokens/token-estimator';
import { call, createApiKey, createVirtualKey, logOf } from '../support/e2e-helpers';
import { countInputTokens } from '../support/mock-anthropic-body';
import { planGemini } from '../support/mock-gemini-body';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const ANTHROPIC_SECRET = 'sk-ant-provider-secret-777777';

const MESSAGES = [
  { role: 'user' as const, content: 'What is the weather in Paris?' },
  { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Let me check.' }] },
  { role: 'user' as const, content: 'Please be quick about it.' },
];
const SYSTEM = 'You are a terse weather assistant.';
const TOOLS = [
  {
    name: 'get_weather',
    description: 'Current weather of a city',
    input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
  },
];

describe('messages.count_tokens with the Anthropic SDK', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: ANTHROPIC_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-888888', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'gemini-prod', provider: 'google', key: 'gemini-key-999999', custom_host: `${mock.url}/v1beta` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const anthropic = (headers: Record<string, string>, gatewayKey = gateway.adminKey) =>
    new Anthropic({ baseURL: gateway.url, apiKey: 'dummy-key', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': gatewayKey, ...headers } });

  describe('natively to Anthropic', () => {
    it('passes the body through to /v1/messages/count_tokens with the provider key and the mapped version, and logs it free', async () => {
      const { data, response } = await anthropic({ 'x-gateway-virtual-key': 'anthropic-prod' })
        .messages.countTokens(
          { model: 'claude-sonnet-4-5', system: SYSTEM, messages: MESSAGES, tools: TOOLS },
          { headers: { 'vendor-version': '2023-01-01', 'vendor-beta': 'token-counting-2024-11-01' } },
        )
        .withResponse();
      expect(mock.requests).toHaveLength(1);
      const sent = mock.requests[0];
      expect(sent.method).toBe('POST');
      expect(sent.path).toBe('/v1/messages/count_tokens');
      expect(sent.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
      expect(sent.headers['anthropic-version']).toBe('2023-01-01');
      expect(sent.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
      expect(sent.headers['x-gateway-api-key']).toBeUndefined();
      expect(sent.body).toEqual({ model: 'claude-sonnet-4-5', system: SYSTEM, messages: MESSAGES, tools: TOOLS });
      expect(data).toEqual({ input_tokens: countInputTokens(sent.body) });
      expect(response.headers.get('x-gateway-cache-status')).toBe('DISABLED');

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'messages.count_tokens',
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        status_code: 200,
        cost_usd: 0,
        prompt_tokens: null,
        completion_tokens: null,
        response_body: { input_tokens: data.input_tokens },
      });
      expect(log.request_headers['x-api-key']).toBe('[REDACTED]');
    });

    it("routes @slug/model like /v1/messages and passes Anthropic's own refusal through in its shape", async () => {
      const client = anthropic({});
      const counted = await client.messages.countTokens({ model: '@anthropic-prod/claude-haiku-4-5', messages: [{ role: 'user', content: 'Hi' }] });
      expect(counted.input_tokens).toBe(1);
      expect(mock.requests[0].body.model).toBe('claude-haiku-4-5');

      // max_tokens is no field of count_tokens: Anthropic says so, and the gateway does not pretend otherwise.
      const refused = await call(gateway, '/v1/messages/count_tokens', {
        headers: { 'x-gateway-virtual-key': 'anthropic-prod' },
        body: { model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] },
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Extra inputs are not permitted' } });
    });

    it('is never cached, even under a config whose cache is on', async () => {
      const config = JSON.stringify({
        provider: 'anthropic',
        api_key: ANTHROPIC_SECRET,
        custom_host: `${mock.url}/v1`,
        cache: { mode: 'simple', max_age: 60 },
      });
      const body = { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'Count me twice' }] };
      const first = await call(gateway, '/v1/messages/count_tokens', { headers: { 'x-gateway-config': config }, body });
      const second = await call(gateway, '/v1/messages/count_tokens', { headers: { 'x-gateway-config': config }, body });
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.headers.get('x-gateway-cache-status')).toBe('DISABLED');
      expect(mock.requests).toHaveLength(2);
    });
  });

  describe('estimated for OpenAI', () => {
    it('answers the tokenizer estimate marked estimated, sends nothing, and logs it at no cost', async () => {
      const body = { model: 'gpt-4o-mini', system: SYSTEM, messages: MESSAGES, tools: TOOLS };
      const { data, response } = await anthropic({ 'x-gateway-virtual-key': 'openai-prod' }).messages.countTokens(body).withResponse();
      expect(data).toEqual({ input_tokens: estimateInputTokens(body), estimated: true });
      expect(data.input_tokens).toBeGreaterThan(40);
      expect(mock.requests).toHaveLength(0);

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'messages.count_tokens',
        provider: 'openai',
        model: 'gpt-4o-mini',
        status_code: 200,
        cost_usd: 0,
        prompt_tokens: null,
      });
      expect(log.response_body).toEqual({ input_tokens: data.input_tokens, estimated: true });
    });

    it('reserves nothing on a budgeted key', async () => {
      const key = await createApiKey(gateway, { role: 'user', budget_limit_usd: 1 });
      const counted = await anthropic({ 'x-gateway-virtual-key': 'openai-prod' }, key.key).messages.countTokens({ model: 'gpt-4o', messages: MESSAGES });
      expect(counted.input_tokens).toBeGreaterThan(0);
      const counters = await gateway.dataSource.query('select reserved_usd::float8 as reserved from budget_counters where scope_id = $1', [key.id]);
      expect(counters).toEqual([]);
    });

    it("refuses a virtual key's model it does not allow, as /v1/messages does", async () => {
      await createVirtualKey(gateway, {
        slug: 'openai-narrow',
        provider: 'openai',
        key: 'sk-narrow',
        custom_host: `${mock.url}/v1`,
        allowed_models: ['gpt-4o'],
      });
      const refused = await call(gateway, '/v1/messages/count_tokens', {
        headers: { 'x-gateway-virtual-key': 'openai-narrow' },
        body: { model: 'gpt-4o-mini', messages: [] },
      });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    });
  });

  describe('natively to Gemini', () => {
    it('counts the request its chat would send with countTokens', async () => {
      const { data, response } = await anthropic({ 'x-gateway-virtual-key': 'gemini-prod' })
        .messages.countTokens({ model: 'gemini-2.5-flash', system: SYSTEM, messages: MESSAGES, tools: TOOLS })
        .withResponse();
      expect(mock.requests).toHaveLength(1);
      const sent = mock.requests[0];
      expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
      expect(sent.headers['x-goog-api-key']).toBe('gemini-key-999999');
      const request = sent.body.generateContentRequest;
      expect(request.model).toBe('models/gemini-2.5-flash');
      expect(request.systemInstruction).toEqual({ parts: [{ text: SYSTEM }] });
      expect(request.contents.map((content: any) => content.role)).toEqual(['user', 'model', 'user']);
      expect(request.tools[0].functionDeclarations[0].name).toBe('get_weather');
      expect(request.generationConfig).toBeUndefined();
      const expected = planGemini(request, false).promptTokenCount + Math.ceil(JSON.stringify(request.tools).length / 4);
      expect(data).toEqual({ input_tokens: expected });

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      // Google does not document countTokens as free: the cost is unknown, not 0.
      expect(log).toMatchObject({ operation: 'messages.count_tokens', provider: 'google', model: 'gemini-2.5-flash', status_code: 200, cost_usd: null });
    });

    it('estimates what the chat bridge cannot carry (a PDF document) instead of refusing it', async () => {
      const body = {
        model: 'gemini-2.5-flash',
        messages: [
          {
            role: 'user' as const,
            content: [
              { type: 'document' as const, source: { type: 'base64' as const, media_type: 'application/pdf' as const, data: 'JVBERi0xLjQK' } },
              { type: 'text' as const, text: 'Summarise' },
            ],
          },
        ],
      };
      const counted = await anthropic({ 'x-gateway-virtual-key': 'gemini-prod' }).messages.countTokens(body);
      expect(counted).toEqual({ input_tokens: estimateInputTokens(body), estimated: true });
      expect(mock.requests).toHaveLength(0);
    });

    it("turns Gemini's error into Anthropic's shape with Gemini's status", async () => {
      const failed = await call(gateway, '/v1/messages/count_tokens', {
        headers: { 'x-gateway-virtual-key': 'gemini-prod' },
        body: { model: 'mock-error-429', messages: [{ role: 'user', content: 'Hi' }] },
      });
      expect(failed.status).toBe(429);
      expect(failed.body).toMatchObject({
        type: 'error',
        error: { type: 'rate_limit_error', message: expect.stringContaining('Resource has been exhausted') },
      });
    });
  });

  describe('validation (only what the gateway acts on)', () => {
    it("400s in Anthropic's shape naming model or messages", async () => {
      const noModel = await call(gateway, '/v1/messages/count_tokens', { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body: { messages: [] } });
      expect(noModel.status).toBe(400);
      expect(noModel.body).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('model must be a string') },
      });
      const notList = await call(gateway, '/v1/messages/count_tokens', {
        headers: { 'x-gateway-virtual-key': 'openai-prod' },
        body: { model: 'gpt-4o', messages: 'hello' },
      });
      expect(notList.status).toBe(400);
      expect(notList.body.error.message).toContain('messages must be an array');
    });

    it('estimates odd message shapes rather than failing on them', async () => {
      const odd = await call(gateway, '/v1/messages/count_tokens', {
        headers: { 'x-gateway-virtual-key': 'openai-prod' },
        body: { model: 'gpt-4o', messages: [null, 7, { role: 'system', content: { nested: true } }], system: 42, tools: 'none' },
      });
      expect(odd.status).toBe(200);
      expect(odd.body.estimated).toBe(true);
      expect(odd.body.input_tokens).toBeGreaterThan(0);
    });
  });
});
