/**
 * `/v1/chat/completions` for providers with their own wire format, driven with the
 * official `openai` SDK: Anthropic (`@anthropic-prod/claude-…`) and Gemini answer in
 * OpenAI's shape, streaming included; what cannot be translated is a 400.
 * The mock's rules are in test/support/mock-anthropic.ts and mock-gemini.ts.
 */
import OpenAI from 'openai';
import { call, createVirtualKey, expectError, logOf, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const ANTHROPIC_SECRET = 'sk-ant-chat-secret-777777';
const GEMINI_SECRET = 'gemini-chat-secret-888888';
const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather by city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('chat completions translated for Anthropic and Gemini', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: ANTHROPIC_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'gemini-prod', provider: 'google', key: GEMINI_SECRET, custom_host: `${mock.url}/v1beta` });
    client = openai(gateway, {});
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

  describe('Anthropic', () => {
    it('translates the request (system, max_tokens, user) and answers in OpenAI shape with usage and cost', async () => {
      const { data, response } = await client.chat.completions
        .create({
          model: '@anthropic-prod/claude-sonnet-4-5',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'echo: hello claude' },
          ],
          user: 'carol',
        })
        .withResponse();
      expect(data.object).toBe('chat.completion');
      expect(data.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: 'hello claude' }, finish_reason: 'stop' });
      const sent = upstream();
      expect(sent.path).toBe('/v1/messages');
      expect(sent.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
      expect(sent.headers['anthropic-version']).toBe('2023-06-01');
      expect(sent.body).toMatchObject({ model: 'claude-sonnet-4-5', system: 'Be brief.', max_tokens: 4096, metadata: { user_id: 'carol' } });
      expect(sent.body.messages).toHaveLength(1);
      expect(sent.body.messages[0].role).toBe('user');
      expect(JSON.stringify(sent.body.messages[0].content)).toContain('echo: hello claude');

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        user: 'carol',
        prompt_tokens: data.usage!.prompt_tokens,
        completion_tokens: data.usage!.completion_tokens,
      });
      expect(log.cost_usd).toBeCloseTo((data.usage!.prompt_tokens * 3 + data.usage!.completion_tokens * 15) / 1e6, 12);
      expect(log.response_body.choices[0].message.content).toBe('hello claude');
    });

    it('streams OpenAI chunks from Anthropic events, usage only when asked for', async () => {
      const stream = await client.chat.completions.create({
        model: '@anthropic-prod/claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'echo: one two three' }],
        stream: true,
      });
      let text = '';
      let usageChunks = 0;
      let finish: string | null = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usageChunks++;
      }
      expect(text).toBe('one two three');
      expect(finish).toBe('stop');
      expect(usageChunks).toBe(0);

      const withUsage = await client.chat.completions.create({
        model: '@anthropic-prod/claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'echo: one two three' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of withUsage) usage = chunk.usage ?? usage;
      expect(usage).toMatchObject({ completion_tokens: 3, prompt_tokens: expect.any(Number) });

      const [logged] = (await (async () => {
        await gateway.flushLogs();
        return (await call(gateway, '/v1/logs?provider=anthropic&limit=2')).body.data;
      })()) as any[];
      expect(logged).toMatchObject({ is_stream: true, completion_tokens: 3, prompt_tokens: usage!.prompt_tokens });
      expect(logged.response_body.choices[0].message.content).toBe('one two three');
      expect(logged.cost_usd).toBeCloseTo((usage!.prompt_tokens * 3 + 3 * 15) / 1e6, 12);
    });

    it('translates tools, tool calls and tool results both ways, streaming included', async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
      const first = await client.chat.completions.create({ model: '@anthropic-prod/claude-sonnet-4-5', messages, tools: [WEATHER_TOOL], tool_choice: 'auto' });
      const call0 = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      expect(call0.function.name).toBe('get_weather');
      expect(JSON.parse(call0.function.arguments)).toEqual({ location: 'Paris' });
      expect(upstream().body).toMatchObject({
        tools: [{ name: 'get_weather', input_schema: WEATHER_TOOL.function.parameters }],
        tool_choice: { type: 'auto' },
      });

      mock.reset();
      const stream = await client.chat.completions.create({ model: '@anthropic-prod/claude-sonnet-4-5', messages, tools: [WEATHER_TOOL], stream: true });
      let args = '';
      let name = '';
      for await (const chunk of stream) {
        const call = chunk.choices[0]?.delta?.tool_calls?.[0];
        if (call?.function?.name) name = call.function.name;
        args += call?.function?.arguments ?? '';
      }
      expect(name).toBe('get_weather');
      expect(JSON.parse(args)).toEqual({ location: 'Paris' });

      mock.reset();
      await client.chat.completions.create({
        model: '@anthropic-prod/claude-sonnet-4-5',
        messages: [...messages, first.choices[0].message, { role: 'tool', tool_call_id: call0.id, content: '18°C and sunny' }],
        tools: [WEATHER_TOOL],
      });
      const history = upstream().body.messages;
      expect(history[1]).toMatchObject({
        role: 'assistant',
        content: expect.arrayContaining([{ type: 'tool_use', id: call0.id, name: 'get_weather', input: { location: 'Paris' } }]),
      });
      expect(history[2]).toMatchObject({ role: 'user', content: [expect.objectContaining({ type: 'tool_result', tool_use_id: call0.id })] });
    });

    it('translates image inputs', async () => {
      await client.chat.completions.create({
        model: '@anthropic-prod/claude-sonnet-4-5',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: PIXEL } },
            ],
          },
        ],
      });
      expect(upstream().body.messages[0].content).toEqual([
        { type: 'text', text: 'What is this?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL.split(',')[1] } },
      ]);
    });

    it.each([
      ['n > 1', { n: 2 }, 'n'],
      ['logit_bias', { logit_bias: { 50256: -100 } }, 'logit_bias'],
      ['a temperature above 1', { temperature: 1.5 }, 'temperature'],
    ])('refuses what Anthropic lacks (%s): 400 naming the field, nothing sent', async (_name, extra, param) => {
      const response = await call(gateway, '/v1/chat/completions', {
        body: { model: '@anthropic-prod/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], ...extra },
      });
      expectError(response, 400, { type: 'invalid_request_error', param, message: /anthropic/ });
      expect(mock.requests).toHaveLength(0);
    });

    it("passes Anthropic's errors on in OpenAI's error shape with their status", async () => {
      const response = await call(gateway, '/v1/chat/completions', {
        body: { model: '@anthropic-prod/mock-error-429', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(response.status).toBe(429);
      expect(response.body).toEqual({ error: { message: expect.any(String), type: 'rate_limit_error', param: null, code: null } });
    });

    it('a malformed stream chunk ends the OpenAI stream with an error event', async () => {
      const response = await call(gateway, '/v1/chat/completions', {
        body: { model: '@anthropic-prod/mock-malformed-chunk', messages: [{ role: 'user', content: 'hi' }], stream: true },
      });
      expect(response.status).toBe(200);
      const frames = response.text.trim().split('\n\n');
      expect(JSON.parse(frames[0].slice(6)).choices[0].delta.role).toBe('assistant');
      expect(JSON.parse(frames.at(-1)!.slice(6))).toMatchObject({ error: { type: 'upstream_error', code: 'upstream_malformed_response' } });
      expect(response.text).not.toContain('[DONE]');
    });
  });

  describe('Gemini', () => {
    const GEMINI = { 'x-gateway-virtual-key': 'gemini-prod' };

    it('translates to generateContent and answers in OpenAI shape with usage and cost', async () => {
      const { data, response } = await openai(gateway, GEMINI)
        .chat.completions.create({
          model: 'gemini-2.5-flash',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'echo: hello gemini' },
          ],
          max_tokens: 30,
        })
        .withResponse();
      expect(data.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'hello gemini' }, finish_reason: 'stop' });
      const sent = upstream();
      expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(sent.headers['x-goog-api-key']).toBe(GEMINI_SECRET);
      expect(sent.body).toMatchObject({
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [{ role: 'user', parts: [{ text: 'echo: hello gemini' }] }],
        generationConfig: { maxOutputTokens: 30 },
      });
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ provider: 'google', prompt_tokens: data.usage!.prompt_tokens, completion_tokens: data.usage!.completion_tokens });
      expect(log.cost_usd).toBeCloseTo((data.usage!.prompt_tokens * 0.3 + data.usage!.completion_tokens * 2.5) / 1e6, 12);
    });

    it('streams from streamGenerateContent, tool calls included', async () => {
      const stream = await openai(gateway, GEMINI).chat.completions.create({
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'echo: streamed by gemini' }],
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe('streamed by gemini');
      expect(upstream()).toMatchObject({ path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent', query: { alt: 'sse' } });

      mock.reset();
      const tools = await openai(gateway, GEMINI).chat.completions.create({
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'weather in Paris?' }],
        tools: [WEATHER_TOOL],
        stream: true,
      });
      let args = '';
      for await (const chunk of tools) args += chunk.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '';
      expect(JSON.parse(args)).toEqual({ location: 'Paris' });
      const { parameters, ...declared } = WEATHER_TOOL.function;
      expect(upstream().body.tools).toEqual([{ functionDeclarations: [{ ...declared, parametersJsonSchema: parameters }] }]);
    });

    it('refuses what Gemini lacks with a 400', async () => {
      const response = await call(gateway, '/v1/chat/completions', {
        headers: GEMINI,
        body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], logit_bias: { 1: 1 } },
      });
      expectError(response, 400, { type: 'invalid_request_error', param: 'logit_bias', message: /google/ });
      expect(mock.requests).toHaveLength(0);
    });
  });
});
