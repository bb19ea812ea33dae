/**
 * `POST /v1/messages/count_tokens` for Claude on the clouds, with the official `@anthropic-ai/sdk`:
 * counted natively by Bedrock's CountTokens (an InvokeModel body, base64, SigV4-signed; the mock
 * checks the signature) and by Vertex AI's `count-tokens:rawPredict` (a bearer token the mock
 * issued), answered `{input_tokens}` without `estimated`; models that are not Claude keep the
 * tokenizer estimate and send nothing. The mocks count as Anthropic's count_tokens does
 * (countInputTokens in test/support/mock-anthropic-body.ts).
 */
import { generateKeyPairSync } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { estimateInputTokens } from '../../src/modules/messages/count-tokens/token-estimator';
import { createVirtualKey, logOf } from '../support/e2e-helpers';
import { countInputTokens } from '../support/mock-anthropic-body';
import { BEDROCK_TEST_CREDENTIALS } from '../support/mock-bedrock';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const MESSAGES = [
  { role: 'user' as const, content: 'What is the weather in Paris?' },
  { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Let me check.' }] },
  { role: 'user' as const, content: 'Please be quick about it, I am leaving soon.' },
];
const SYSTEM = 'You are a terse weather assistant.';
const TOOLS = [
  {
    name: 'get_weather',
    description: 'Current weather of a city',
    input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
  },
];
const ACCOUNT = 'counter@vertex-test.iam.gserviceaccount.com';
const BEDROCK_CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const VERTEX_CLAUDE = 'claude-sonnet-4-5@20250929';

describe('messages.count_tokens for Claude on Bedrock and Vertex AI', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, {
      slug: 'bedrock-count',
      provider: 'bedrock',
      key: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
      custom_host: mock.url,
      provider_options: { aws_region: 'us-east-1', aws_access_key_id: BEDROCK_TEST_CREDENTIALS.accessKeyId },
    });
    // The right key id with a wrong secret: the mock's signature check refuses it.
    await createVirtualKey(gateway, {
      slug: 'bedrock-bad-secret',
      provider: 'bedrock',
      key: 'not/the+right+secret000000000000000000000',
      custom_host: mock.url,
      provider_options: { aws_region: 'us-east-1', aws_access_key_id: BEDROCK_TEST_CREDENTIALS.accessKeyId },
    });
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    mock.vertex.registerServiceAccount(ACCOUNT, publicKey);
    const serviceAccount = JSON.stringify({
      type: 'service_account',
      project_id: 'vertex-test',
      private_key_id: 'c0un7',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: ACCOUNT,
      client_id: '1234567890',
      token_uri: `${mock.url}/token`,
    });
    await createVirtualKey(gateway, {
      slug: 'vertex-count',
      provider: 'vertex-ai',
      key: serviceAccount,
      custom_host: mock.url,
      provider_options: { project_id: 'vertex-test', region: 'us-east5' },
    });
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
  const modelCalls = () => mock.requests.filter((request) => request.path.startsWith('/model/') || request.path.startsWith('/v1/projects/'));

  describe('Bedrock', () => {
    it('counts a Claude body with CountTokens (the InvokeModel body in base64, signed) and logs it free', async () => {
      const { data, response } = await anthropic('bedrock-count')
        .messages.countTokens(
          { model: BEDROCK_CLAUDE, system: SYSTEM, messages: MESSAGES, tools: TOOLS },
          { headers: { 'anthropic-beta': 'token-efficient-tools-2025-02-19' } },
        )
        .withResponse();
      expect(modelCalls()).toHaveLength(1);
      const sent = modelCalls()[0];
      // CountTokens refuses inference profiles: the profile's foundation model is counted (the mock refuses `us.…`).
      expect(sent.path).toBe(`/model/${encodeURIComponent(BEDROCK_CLAUDE.replace(/^us\./, ''))}/count-tokens`);
      expect(String(sent.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAMOCKBEDROCK00001\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
      expect(Object.keys(sent.body)).toEqual(['input']);
      const invokeBody = JSON.parse(Buffer.from(sent.body.input.invokeModel.body, 'base64').toString('utf8'));
      expect(invokeBody).toEqual({
        anthropic_version: 'bedrock-2023-05-31',
        anthropic_beta: ['token-efficient-tools-2025-02-19'],
        system: SYSTEM,
        messages: MESSAGES,
        tools: TOOLS,
        max_tokens: 1,
      });
      const expected = countInputTokens({ system: SYSTEM, messages: MESSAGES, tools: TOOLS });
      expect(data).toEqual({ input_tokens: expected });
      expect(data).not.toHaveProperty('estimated');
      // The mock's count and the gateway's estimate differ, so the number shows who counted.
      expect(expected).not.toBe(estimateInputTokens({ model: BEDROCK_CLAUDE, system: SYSTEM, messages: MESSAGES, tools: TOOLS }));

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'messages.count_tokens',
        provider: 'bedrock',
        model: BEDROCK_CLAUDE,
        status_code: 200,
        cost_usd: 0,
        prompt_tokens: null,
        response_body: { input_tokens: expected },
      });
    });

    it('sets max_tokens above a thinking budget, which InvokeModel requires', async () => {
      const data = await anthropic('bedrock-count').messages.countTokens({
        model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
        messages: MESSAGES,
        thinking: { type: 'enabled', budget_tokens: 2048 },
      });
      const invokeBody = JSON.parse(Buffer.from(modelCalls()[0].body.input.invokeModel.body, 'base64').toString('utf8'));
      expect(invokeBody.max_tokens).toBe(2049);
      expect(invokeBody.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
      expect(data).toEqual({ input_tokens: countInputTokens({ messages: MESSAGES }) });
    });

    it('keeps the estimate for a model that is not Claude, and sends nothing', async () => {
      const body = { model: 'meta.llama3-70b-instruct-v1:0', system: SYSTEM, messages: MESSAGES };
      const data = await anthropic('bedrock-count').messages.countTokens(body);
      expect(data).toEqual({ input_tokens: estimateInputTokens(body), estimated: true });
      expect(modelCalls()).toHaveLength(0);
    });

    it('estimates a Claude model CountTokens refuses to count, rather than failing', async () => {
      const body = { model: 'anthropic.claude-mock-no-count-v1:0', system: SYSTEM, messages: MESSAGES };
      const { data, response } = await anthropic('bedrock-count').messages.countTokens(body).withResponse();
      expect(modelCalls()).toHaveLength(1);
      expect(data).toEqual({ input_tokens: estimateInputTokens(body), estimated: true });
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'messages.count_tokens', provider: 'bedrock', status_code: 200, cost_usd: 0, response_body: { estimated: true } });
    });

    it("puts AWS's errors in Anthropic's shape, status kept", async () => {
      const throttled = await anthropic('bedrock-count')
        .messages.countTokens({ model: 'us.anthropic.claude-mock-error-429', messages: MESSAGES })
        .catch((error: unknown) => error);
      expect(throttled).toBeInstanceOf(Anthropic.RateLimitError);
      expect((throttled as InstanceType<typeof Anthropic.RateLimitError>).error).toMatchObject({
        type: 'error',
        error: { type: 'rate_limit_error', message: expect.stringContaining('Too many requests') },
      });

      const unsigned = await anthropic('bedrock-bad-secret')
        .messages.countTokens({ model: BEDROCK_CLAUDE, messages: MESSAGES })
        .catch((error: unknown) => error);
      expect(unsigned).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect((unsigned as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toMatchObject({
        type: 'error',
        error: { message: expect.stringContaining('signature') },
      });
    });
  });

  describe('Vertex AI', () => {
    it('counts a Claude body at count-tokens:rawPredict with a bearer token and logs it free', async () => {
      const { data, response } = await anthropic('vertex-count')
        .messages.countTokens({ model: VERTEX_CLAUDE, system: SYSTEM, messages: MESSAGES, tools: TOOLS })
        .withResponse();
      expect(modelCalls()).toHaveLength(1);
      const sent = modelCalls()[0];
      expect(sent.path).toBe('/v1/projects/vertex-test/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict');
      expect(String(sent.headers.authorization)).toMatch(/^Bearer ya29\.mock-/);
      expect(sent.body).toEqual({ anthropic_version: 'vertex-2023-10-16', model: VERTEX_CLAUDE, system: SYSTEM, messages: MESSAGES, tools: TOOLS });
      expect(mock.vertex.calls).toEqual([{ project: 'vertex-test', region: 'us-east5', publisher: 'anthropic', model: 'count-tokens', method: 'rawPredict' }]);
      const expected = countInputTokens(sent.body);
      expect(data).toEqual({ input_tokens: expected });
      expect(data).not.toHaveProperty('estimated');

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'messages.count_tokens',
        provider: 'vertex-ai',
        model: VERTEX_CLAUDE,
        status_code: 200,
        cost_usd: 0,
        response_body: { input_tokens: expected },
      });
      expect(JSON.stringify(log)).not.toContain('ya29.mock-');
    });

    it("passes the counter's refusal through in Anthropic's shape", async () => {
      const refused = await anthropic('vertex-count')
        .messages.countTokens({ model: VERTEX_CLAUDE, messages: [{ role: 'assistant', content: 'I speak first.' }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
      expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(modelCalls()).toHaveLength(1);
    });

    it('keeps the estimate for Gemini, and sends nothing', async () => {
      const body = { model: 'gemini-2.5-flash', messages: MESSAGES };
      const data = await anthropic('vertex-count').messages.countTokens(body);
      expect(data).toEqual({ input_tokens: estimateInputTokens(body), estimated: true });
      expect(modelCalls()).toHaveLength(0);
    });
  });
});
