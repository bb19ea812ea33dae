/**
 * CONTRACT section 12, "every client unchanged": what Claude Code sends (recorded in
 * test/fixtures/clients/) reaches Anthropic untouched and OpenAI and Gemini translated;
 * each translated parameter is mapped (thinking ↔ reasoning_effort ↔ thinkingBudget),
 * ignored (named in x-gateway-ignored-params and the log's ignored_params) or refused
 * (400 naming it), and a config's strict_params refuses what would be ignored.
 * Driven with the official `@anthropic-ai/sdk` and `openai` clients and raw HTTP.
 */
import Anthropic from '@anthropic-ai/sdk';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, createVirtualKey, expectError, logOf, openai } from '../support/e2e-helpers';
import { THINKING_TEXT } from '../support/mock-anthropic-body';
import { THOUGHT_SUMMARY } from '../support/mock-gemini-body';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
}
const recorded = (file: string): RecordedRequest[] => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'clients', file), 'utf8')).requests;
const CLAUDE_CODE = [...recorded('claude-code-plain.json'), ...recorded('claude-code-tool.json')];

/** The headers Claude Code sent that a client sets (not the transport's, not the redacted key). */
function clientHeaders(request: RecordedRequest, routing: Record<string, string>): Record<string, string> {
  const skip = new Set(['host', 'connection', 'content-length', 'accept-encoding', 'x-api-key', 'authorization']);
  return { ...Object.fromEntries(Object.entries(request.headers).filter(([name]) => !skip.has(name))), ...routing };
}

const WEATHER = {
  name: 'get_weather',
  description: 'Weather by city',
  input_schema: { type: 'object' as const, properties: { location: { type: 'string' } } },
};

describe('clients unchanged: Claude Code bodies, and parameters mapped, ignored or refused', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: 'sk-ant-params-1', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-params-2', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'gemini-prod', provider: 'google', key: 'gemini-params-3', custom_host: `${mock.url}/v1beta` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const anthropic = (headers: Record<string, string> = {}) =>
    new Anthropic({ baseURL: gateway.url, apiKey: 'dummy-key', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers } });
  const OPENAI = { 'x-gateway-virtual-key': 'openai-prod' };
  const GEMINI = { 'x-gateway-virtual-key': 'gemini-prod' };

  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  /** A conversation as Claude Code holds it: a system message after the first user turn, thinking in the assistant's history. */
  const CONVERSATION: Anthropic.Beta.BetaMessageParam[] = [
    { role: 'user', content: 'What is the weather?' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants weather.', signature: 'sig-abc' },
        { type: 'text', text: 'Where?' },
      ],
    },
    { role: 'system', content: 'Plan mode is on.' },
    { role: 'user', content: [{ type: 'text', text: 'echo: in Paris', cache_control: { type: 'ephemeral' } }] },
  ];

  describe('/v1/messages to an OpenAI model', () => {
    it('a mid-conversation system message stays at its place, thinking becomes reasoning_effort, ignored fields are named in the header and the log', async () => {
      const { data, response } = await anthropic(OPENAI)
        .beta.messages.create({
          model: 'gpt-5-mini',
          max_tokens: 20000,
          thinking: { type: 'enabled', budget_tokens: 10000 },
          messages: CONVERSATION,
          tools: [{ ...WEATHER, eager_input_streaming: true }],
        })
        .withResponse();
      expect(data.content).toEqual([{ type: 'text', text: 'in Paris' }]);
      const sent = upstream().body;
      expect(sent).toMatchObject({ model: 'gpt-5-mini', max_completion_tokens: 20000, reasoning_effort: 'medium' });
      expect(sent).not.toHaveProperty('thinking');
      expect(sent.messages).toEqual([
        { role: 'user', content: 'What is the weather?' },
        { role: 'assistant', content: 'Where?' },
        { role: 'system', content: 'Plan mode is on.' },
        { role: 'user', content: 'echo: in Paris' },
      ]);
      expect(sent.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: WEATHER.input_schema } }]);

      const ignored = 'messages[].content[].cache_control,tools[].eager_input_streaming';
      expect(response.headers.get('x-gateway-ignored-params')).toBe(ignored);
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.ignored_params).toEqual(ignored.split(','));
    });

    it('with strict_params in the config, an ignored field is a 400 naming it and nothing is sent', async () => {
      const config = { provider: 'openai', api_key: 'sk-openai-params-2', custom_host: `${mock.url}/v1`, strict_params: true };
      const response = await call(gateway, '/v1/messages', {
        headers: { 'x-gateway-config': JSON.stringify(config) },
        body: { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }], tools: [{ ...WEATHER, eager_input_streaming: true }] },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringMatching(/^tools\[0\]\.eager_input_streaming would be ignored .*strict_params/) },
      });
      expect(mock.requests).toHaveLength(0);

      const plain = await call(gateway, '/v1/messages', {
        headers: { 'x-gateway-config': JSON.stringify(config) },
        body: { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'echo: fine' }] },
      });
      expect(plain.status).toBe(200);
    });

    it('a malformed block the bridge cannot read is a 400 naming the field, in Anthropic shape', async () => {
      const response = await call(gateway, '/v1/messages', {
        headers: OPENAI,
        body: {
          model: 'gpt-4o-mini',
          max_tokens: 10,
          messages: [
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: [{ text: 'no type' }] },
          ],
        },
      });
      expect(response.status).toBe(400);
      expect(response.body.error.message).toMatch(/^messages\[1\]\.content\[0\] must be a content block with a type/);
      expect(mock.requests).toHaveLength(0);
    });
  });

  describe('/v1/messages to a Gemini model', () => {
    it('thinking becomes thinkingBudget with thought summaries, which come back as a thinking block; the system message is a marked user part at its place', async () => {
      const { data, response } = await anthropic(GEMINI)
        .beta.messages.create({ model: 'gemini-2.5-flash', max_tokens: 18000, thinking: { type: 'enabled', budget_tokens: 16384 }, messages: CONVERSATION })
        .withResponse();
      const sent = upstream().body;
      expect(sent.generationConfig).toEqual({ maxOutputTokens: 18000, thinkingConfig: { thinkingBudget: 24576, includeThoughts: true } });
      expect(sent.contents).toEqual([
        { role: 'user', parts: [{ text: 'What is the weather?' }] },
        { role: 'model', parts: [{ text: 'Where?' }] },
        { role: 'user', parts: [{ text: 'System message: Plan mode is on.' }, { text: 'echo: in Paris' }] },
      ]);
      // The mock echoes only a user turn that starts with "echo:"; this one starts with the system part.
      expect(data.content).toEqual([
        { type: 'thinking', thinking: THOUGHT_SUMMARY, signature: '' },
        { type: 'text', text: 'Hello from mock' },
      ]);
      expect(response.headers.get('x-gateway-ignored-params')).toBe('messages[].content[].cache_control');
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ reasoning_tokens: 5, ignored_params: ['messages[].content[].cache_control'] });
    });

    it('streams the thought summary as thinking_delta events before the text', async () => {
      const stream = anthropic(GEMINI).messages.stream({
        model: 'gemini-2.5-flash',
        max_tokens: 8000,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        messages: [{ role: 'user', content: 'echo: two words' }],
      });
      const deltas: string[] = [];
      stream.on('streamEvent', (event) => {
        if (event.type === 'content_block_delta') deltas.push(event.delta.type);
      });
      const message = await stream.finalMessage();
      expect(message.content).toEqual([
        { type: 'thinking', thinking: THOUGHT_SUMMARY, signature: '' },
        { type: 'text', text: 'two words' },
      ]);
      expect(deltas[0]).toBe('thinking_delta');
      expect(deltas.slice(1).every((type) => type === 'text_delta')).toBe(true);
      expect(upstream().body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    });
  });

  describe("Claude Code's recorded requests", () => {
    it.each(CLAUDE_CODE.map((request, i) => [i, request] as const))('request %i reaches Anthropic unchanged but for the model prefix', async (_i, request) => {
      const body = { ...request.body, model: `@anthropic-prod/${request.body.model}` };
      const response = await call(gateway, request.path, { headers: clientHeaders(request, {}), body });
      expect(response.status).toBe(200);
      expect(response.text).toContain('event: message_stop');
      const sent = upstream();
      expect(sent.path).toBe('/v1/messages');
      expect(sent.body).toEqual(request.body);
      expect(sent.headers['anthropic-beta']).toBe(request.headers['anthropic-beta']);
      expect(response.headers.get('x-gateway-ignored-params')).toBeNull();
    });

    it.each(CLAUDE_CODE.flatMap((request, i) => [[i, 'openai', request] as const, [i, 'gemini', request] as const]))(
      'request %i goes through to %s, streamed back in Anthropic events',
      async (_i, target, request) => {
        const model = target === 'openai' ? 'gpt-5-mini' : 'gemini-2.5-pro';
        const response = await call(gateway, request.path, {
          headers: clientHeaders(request, { 'x-gateway-virtual-key': `${target}-prod` }),
          body: { ...request.body, model },
        });
        expect(response.status).toBe(200);
        expect(response.text).toMatch(/^event: message_start\n/);
        expect(response.text).toContain('event: message_stop');
        const sent = upstream().body;
        if (target === 'openai') {
          // adaptive thinking sends no level; output_config.effort does.
          expect(sent).toMatchObject({
            model,
            reasoning_effort: 'medium',
            max_completion_tokens: 128000,
            stream: true,
            user: expect.stringMatching(/^[0-9a-f]{64}$/),
          });
          expect(sent.messages.filter((m: any) => m.role === 'system')).toHaveLength(2);
          expect(sent.messages[0].role).toBe('system');
          expect(sent.messages.map((m: any) => m.role)).toContain('user');
        } else {
          expect(sent.systemInstruction.parts[0].text).toContain('x-anthropic-billing-header');
          expect(JSON.stringify(sent.contents)).toContain('System message: # Environment');
          expect(sent.generationConfig).toMatchObject({ maxOutputTokens: 128000, thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });
        }
        const toolNames = target === 'openai' ? sent.tools.map((t: any) => t.function.name) : sent.tools[0].functionDeclarations.map((d: any) => d.name);
        expect(toolNames).toContain('Bash');
        expect(toolNames).not.toContain('DeferredToolPlaceholder');
        const ignored = response.headers.get('x-gateway-ignored-params')!.split(',');
        expect(ignored).toEqual(expect.arrayContaining(['context_management', 'system[].cache_control', 'tools[].defer_loading']));
        const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
        expect(log.ignored_params).toEqual(ignored);
        expect(log.user).toBe(request.body.metadata.user_id);
      },
    );
  });

  describe('/v1/chat/completions to an Anthropic model (openai SDK)', () => {
    const client = () => openai(gateway, {});

    it('reasoning_effort becomes extended thinking with a budget', async () => {
      await client().chat.completions.create({
        model: '@anthropic-prod/claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'Hi' }],
        reasoning_effort: 'high',
        max_completion_tokens: 20000,
      });
      expect(upstream().body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 16384 }, max_tokens: 20000 });
    });

    it("gives Claude's thinking back as reasoning_content, plain and streamed, without its signature", async () => {
      const request = { model: '@anthropic-prod/claude-sonnet-4-5', messages: [{ role: 'user' as const, content: 'Hi' }], reasoning_effort: 'low' as const };
      const answer = await client().chat.completions.create(request);
      expect((answer.choices[0].message as any).reasoning_content).toBe(THINKING_TEXT);
      let streamed = '';
      for await (const chunk of await client().chat.completions.create({ ...request, stream: true }))
        streamed += (chunk.choices[0]?.delta as any)?.reasoning_content ?? '';
      expect(streamed).toBe(THINKING_TEXT);
    });

    it('a tool loop with reasoning_effort goes on without thinking (a chat history has no signed thinking for the tool call), naming reasoning_effort as ignored', async () => {
      const messages = [
        { role: 'user' as const, content: 'What is the weather in Paris?' },
        {
          role: 'assistant' as const,
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
        },
        { role: 'tool' as const, tool_call_id: 'call_1', content: 'Sunny' },
      ];
      const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER.input_schema } }];
      const { data, response } = await client()
        .chat.completions.create({ model: '@anthropic-prod/claude-sonnet-4-5', messages, tools, reasoning_effort: 'medium' })
        .withResponse();
      expect(data.choices[0].message.content).toBeTruthy();
      expect(upstream().body).not.toHaveProperty('thinking');
      expect(response.headers.get('x-gateway-ignored-params')).toBe('reasoning_effort');
    });

    it('a temperature that extended thinking refuses is a 400 naming it, nothing sent', async () => {
      const response = await call(gateway, '/v1/chat/completions', {
        body: { model: '@anthropic-prod/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], reasoning_effort: 'low', temperature: 0.2 },
      });
      expectError(response, 400, { type: 'invalid_request_error', param: 'temperature', message: /reasoning_effort/ });
      expect(mock.requests).toHaveLength(0);
    });

    it('n = 2 is refused: a 400 naming n, nothing sent', async () => {
      const response = await call(gateway, '/v1/chat/completions', {
        body: { model: '@anthropic-prod/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], n: 2 },
      });
      expectError(response, 400, { type: 'invalid_request_error', param: 'n', message: /anthropic/ });
      expect(mock.requests).toHaveLength(0);
    });

    it('a parameter that only tunes caching is ignored and named', async () => {
      const { response } = await client()
        .chat.completions.create({ model: '@anthropic-prod/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: 'session-1' })
        .withResponse();
      expect(response.headers.get('x-gateway-ignored-params')).toBe('prompt_cache_key');
      expect(upstream().body).not.toHaveProperty('prompt_cache_key');
    });

    it('an unknown role or reasoning_effort value passes to an OpenAI provider untouched', async () => {
      const body = {
        model: 'gpt-5-mini',
        messages: [
          { role: 'critic', content: 'Be harsh.' },
          { role: 'user', content: 'Hi' },
        ],
        reasoning_effort: 'xhigh',
        verbosity: 'low',
      };
      const response = await call(gateway, '/v1/chat/completions', { headers: OPENAI, body });
      expect(response.status).toBe(200);
      expect(upstream().body).toEqual(body);
    });
  });
});
