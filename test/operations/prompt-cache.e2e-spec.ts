/**
 * Prompt-cache breakpoints across formats (CONTRACT section 16): `cache_control` on chat
 * messages and content parts (as opencode and other OpenRouter-taught clients send it) goes to
 * Anthropic as `cache_control` on the blocks and to Claude on Bedrock's Converse as `cachePoint`
 * blocks; a provider that caches on its own has them named as ignored, never a 400. A config's
 * `cache_breakpoints: "auto"` places them for Claude when the client marked none. Cache reads
 * and writes are on the log row and priced. The mocks: Anthropic reports 50 tokens written and
 * 200 read for a request with any breakpoint (more than 4 is its 400), Bedrock the same for a
 * request with a cachePoint (mock-anthropic-body.ts, mock-bedrock.ts).
 */
import Anthropic from '@anthropic-ai/sdk';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';
import { call, createConfig, createVirtualKey, logOf, openai } from '../support/e2e-helpers';
import { BEDROCK_TEST_CREDENTIALS } from '../support/mock-bedrock';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';

const MARK = { type: 'ephemeral' as const };
const CLAUDE_ON_BEDROCK = 'us.anthropic.claude-sonnet-4-20250514-v1:0';
const WEATHER = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

/** An agent's conversation with its breakpoints as opencode marks them: on the system message and on the last user part. */
const MARKED_CONVERSATION: any[] = [
  { role: 'system', content: 'You are a careful coding agent. Follow the repository conventions.', cache_control: MARK },
  { role: 'user', content: 'Read the README.' },
  { role: 'assistant', content: 'Done: it describes a gateway.' },
  { role: 'user', content: [{ type: 'text', text: 'echo: now summarise it', cache_control: MARK }] },
];

describe('prompt-cache breakpoints across formats', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: 'sk-ant-cache-1', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'gemini-prod', provider: 'google', key: 'gemini-cache-1', custom_host: `${mock.url}/v1beta` });
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-cache-1', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, {
      slug: 'bedrock-prod',
      provider: 'bedrock',
      key: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
      custom_host: mock.url,
      provider_options: { aws_region: 'us-east-1', aws_access_key_id: BEDROCK_TEST_CREDENTIALS.accessKeyId },
    });
    await createConfig(gateway, 'claude-auto-cache', { virtual_key: 'anthropic-prod', cache_breakpoints: 'auto' });
    await createConfig(gateway, 'bedrock-auto-cache', { virtual_key: 'bedrock-prod', cache_breakpoints: 'auto' });
    // Prices of our own, so that the cost of the reads and writes is known exactly (USD per million tokens).
    const price = await admin(gateway, 'POST', '/v1/prices', {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      input: 3,
      output: 15,
      cached_input: 0.3,
      cache_write: 3.75,
    });
    expect(price.status).toBe(201);
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  describe('chat completions from an OpenAI-format client', () => {
    it('to Anthropic: a message mark on its last block, a part mark on its block; reads and writes logged and priced', async () => {
      const { data, response } = await openai(gateway, { 'x-gateway-virtual-key': 'anthropic-prod' })
        .chat.completions.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: MARKED_CONVERSATION })
        .withResponse();
      expect(data.choices[0].message.content).toBe('now summarise it');
      const sent = mock.requests[0];
      expect(sent.path).toBe('/v1/messages');
      expect(sent.body.system).toEqual([{ type: 'text', text: MARKED_CONVERSATION[0].content, cache_control: MARK }]);
      expect(sent.body.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'echo: now summarise it', cache_control: MARK }] });
      expect(sent.body.messages[0].content).toEqual([{ type: 'text', text: 'Read the README.' }]);
      expect(response.headers.get('x-gateway-ignored-params')).toBeNull();

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ provider: 'anthropic', cached_tokens: 200, cache_write_tokens: 50 });
      const uncached = log.prompt_tokens - 200 - 50;
      const expected = (uncached * 3 + 200 * 0.3 + 50 * 3.75 + log.completion_tokens * 15) / 1e6;
      expect(log.cost_usd).toBeCloseTo(expected, 10);
      expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(200);
    });

    it("to Anthropic: a breakpoint that is not Anthropic's is a 400 naming it, nothing sent", async () => {
      const response = await call(gateway, '/v1/chat/completions', {
        headers: { 'x-gateway-virtual-key': 'anthropic-prod' },
        body: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi', cache_control: { type: 'persistent' } }] },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages[0].cache_control' });
      expect(mock.requests).toHaveLength(0);
    });

    it('to Gemini, which caches on its own: the marks are named as ignored and not sent', async () => {
      const { response } = await openai(gateway, { 'x-gateway-virtual-key': 'gemini-prod' })
        .chat.completions.create({ model: 'gemini-2.5-flash', messages: MARKED_CONVERSATION })
        .withResponse();
      expect(response.headers.get('x-gateway-ignored-params')).toBe('messages[].cache_control,messages[].content[].cache_control');
      expect(JSON.stringify(mock.requests[0].body)).not.toContain('cache_control');
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.ignored_params).toEqual(['messages[].cache_control', 'messages[].content[].cache_control']);
    });

    it('to Claude on Bedrock (Converse): a cachePoint after each marked block and message; reads and writes logged', async () => {
      const { response } = await openai(gateway, { 'x-gateway-virtual-key': 'bedrock-prod' })
        .chat.completions.create({ model: CLAUDE_ON_BEDROCK, messages: MARKED_CONVERSATION })
        .withResponse();
      const sent = mock.requests[0];
      expect(sent.path).toBe(`/model/${encodeURIComponent(CLAUDE_ON_BEDROCK)}/converse`);
      expect(sent.body.system).toEqual([{ text: MARKED_CONVERSATION[0].content }, { cachePoint: { type: 'default' } }]);
      expect(sent.body.messages.at(-1)).toEqual({ role: 'user', content: [{ text: 'echo: now summarise it' }, { cachePoint: { type: 'default' } }] });
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ provider: 'bedrock', cached_tokens: 200, cache_write_tokens: 50 });
    });

    it('to a Bedrock model without prompt caching (Llama): the marks are named as ignored', async () => {
      const { response } = await openai(gateway, { 'x-gateway-virtual-key': 'bedrock-prod' })
        .chat.completions.create({ model: 'meta.llama3-1-70b-instruct-v1:0', messages: MARKED_CONVERSATION })
        .withResponse();
      expect(response.headers.get('x-gateway-ignored-params')).toBe('messages[].cache_control,messages[].content[].cache_control');
      expect(JSON.stringify(mock.requests[0].body)).not.toContain('cachePoint');
    });
  });

  describe('cache_breakpoints: "auto"', () => {
    const anthropic = (config: string) =>
      new Anthropic({
        baseURL: gateway.url,
        apiKey: 'unused',
        maxRetries: 0,
        defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': config },
      });

    it('marks the last tool, the system prompt and the conversation so far of a Messages request that has none', async () => {
      const { response } = await anthropic('claude-auto-cache')
        .messages.create({
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          system: 'You are a careful coding agent.',
          tools: [
            { name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: {} } },
            { name: 'write_file', description: 'Write a file', input_schema: { type: 'object', properties: {} } },
          ],
          messages: [
            { role: 'user', content: 'Read the README.' },
            { role: 'assistant', content: 'Done.' },
            { role: 'user', content: 'echo: summarise it' },
          ],
        })
        .withResponse();
      const sent = mock.requests[0].body;
      expect(sent.tools.map((tool: any) => tool.cache_control ?? null)).toEqual([null, MARK]);
      expect(sent.system).toEqual([{ type: 'text', text: 'You are a careful coding agent.', cache_control: MARK }]);
      expect(sent.messages[0]).toEqual({ role: 'user', content: 'Read the README.' });
      expect(sent.messages[2]).toEqual({ role: 'user', content: [{ type: 'text', text: 'echo: summarise it', cache_control: MARK }] });
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ cached_tokens: 200, cache_write_tokens: 50 });
      // The client's own body is logged, not the marked one.
      expect(JSON.stringify(log.request_body)).not.toContain('cache_control');
    });

    it('leaves a request that marks its own breakpoints as the client sent it', async () => {
      const body = {
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        system: [{ type: 'text' as const, text: 'Rules', cache_control: MARK }],
        messages: [{ role: 'user' as const, content: 'echo: hi' }],
      };
      await anthropic('claude-auto-cache').messages.create(body);
      expect(mock.requests[0].body).toEqual(body);
    });

    it('places them on a chat request translated for Claude, and as cachePoints for Claude on Bedrock', async () => {
      const messages: any[] = [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'echo: hello' },
      ];
      await openai(gateway, { 'x-gateway-config': 'claude-auto-cache' }).chat.completions.create({ model: 'claude-sonnet-4-5', messages, tools: [WEATHER] });
      const toAnthropic = mock.requests[0].body;
      expect(toAnthropic.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: MARK }]);
      expect(toAnthropic.tools.at(-1).cache_control).toEqual(MARK);
      expect(toAnthropic.messages.at(-1).content.at(-1).cache_control).toEqual(MARK);

      mock.reset();
      await openai(gateway, { 'x-gateway-config': 'bedrock-auto-cache' }).chat.completions.create({ model: CLAUDE_ON_BEDROCK, messages, tools: [WEATHER] });
      const toBedrock = mock.requests[0].body;
      const point = { cachePoint: { type: 'default' } };
      expect(toBedrock.system.at(-1)).toEqual(point);
      expect(toBedrock.toolConfig.tools.at(-1)).toEqual(point);
      expect(toBedrock.messages.at(-1).content.at(-1)).toEqual(point);
    });

    it('changes nothing for a provider that caches on its own', async () => {
      await createConfig(gateway, 'openai-auto-cache', { virtual_key: 'openai-prod', cache_breakpoints: 'auto' });
      const body = {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system' as const, content: 'Be brief.' },
          { role: 'user' as const, content: 'Hi' },
        ],
      };
      await openai(gateway, { 'x-gateway-config': 'openai-auto-cache' }).chat.completions.create(body);
      expect(mock.requests[0].body).toEqual(body);
    });

    it('is checked in a config: "auto" or "none"', async () => {
      const created = await admin(gateway, 'POST', '/v1/configs', {
        name: 'bad',
        slug: 'bad-cache',
        config: { virtual_key: 'anthropic-prod', cache_breakpoints: 'always' },
      });
      expect(created.status).toBe(400);
      expect(JSON.stringify(created.body)).toContain('cache_breakpoints');
    });
  });
});
