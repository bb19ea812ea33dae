/**
 * Self-test of the mock upstream's other vendors, driven directly (no gateway): Anthropic's
 * Messages API (test/support/mock-anthropic.ts) through the official `@anthropic-ai/sdk`, which
 * must parse everything it sends, Gemini's generateContent, embedContent and model list
 * (test/support/mock-gemini.ts) through plain fetch, and Bedrock's Converse (test/support/mock-bedrock.ts) signed with smithy's
 * SigV4 signer.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { BEDROCK_TEST_CREDENTIALS } from '../support/mock-bedrock';
import { GEMINI_MODELS, mockEmbeddingValues } from '../support/mock-gemini';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream';

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Weather by city',
  input_schema: { type: 'object' as const, properties: { location: { type: 'string' } } },
};
const json = (reply: globalThis.Response): Promise<any> => reply.json();
const WEATHER_DECLARATION = {
  name: 'get_weather',
  description: 'Weather by city',
  parametersJsonSchema: { type: 'object', properties: { location: { type: 'string' } } },
};

describe('mock upstream (Anthropic, Gemini and Bedrock)', () => {
  let mock: MockUpstream;
  let client: Anthropic;

  beforeAll(async () => {
    mock = await startMockUpstream();
    client = new Anthropic({ baseURL: mock.url, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(() => mock.close());
  beforeEach(() => mock.reset());

  describe('Anthropic Messages API', () => {
    it('answers a message with deterministic usage and a request-id', async () => {
      const { data, response } = await client.messages
        .create({ model: 'claude-mock-1', max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] })
        .withResponse();
      // "Say hello": 9 chars -> 3 input tokens; "Hello from mock": 3 words.
      expect(data).toEqual({
        id: expect.stringMatching(/^msg_01[0-9A-Za-z]{22}$/),
        type: 'message',
        role: 'assistant',
        model: 'claude-mock-1',
        content: [{ type: 'text', text: 'Hello from mock' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      });
      expect(response.headers.get('request-id')).toMatch(/^req_01/);
      expect(mock.requests[0]).toMatchObject({ path: '/v1/messages', headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' } });
    });

    it('echoes block content, counts the system prompt, reports cache use for cache_control, and stops at stop_sequences and max_tokens', async () => {
      const cached = await client.messages.create({
        model: 'claude-mock-2',
        max_tokens: 50,
        system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'echo:  one two three ' }] }],
      });
      expect(cached.content).toEqual([{ type: 'text', text: 'one two three' }]);
      // 14 + 21 chars -> 9 input tokens.
      expect(cached.usage).toEqual({ input_tokens: 9, output_tokens: 3, cache_creation_input_tokens: 50, cache_read_input_tokens: 200 });

      const stopped = await client.messages.create({
        model: 'm',
        max_tokens: 50,
        stop_sequences: ['three'],
        messages: [{ role: 'user', content: 'echo: one two three four' }],
      });
      expect(stopped).toMatchObject({ content: [{ text: 'one two ' }], stop_reason: 'stop_sequence', stop_sequence: 'three' });
      const cut = await client.messages.create({ model: 'm', max_tokens: 2, messages: [{ role: 'user', content: 'echo: one two three four' }] });
      expect(cut).toMatchObject({ content: [{ text: 'one two' }], stop_reason: 'max_tokens', usage: { output_tokens: 2 } });
    });

    it('streams text event by event, as the SDK assembles it', async () => {
      const stream = client.messages.stream({ model: 'claude-mock-1', max_tokens: 100, messages: [{ role: 'user', content: 'echo: one two three' }] });
      const events: string[] = [];
      const deltas: string[] = [];
      stream.on('streamEvent', (event) => events.push(event.type));
      stream.on('text', (delta) => deltas.push(delta));
      const message = await stream.finalMessage();
      expect(message).toMatchObject({
        content: [{ type: 'text', text: 'one two three' }],
        stop_reason: 'end_turn',
        usage: { output_tokens: 3, input_tokens: 5 },
      });
      expect(deltas).toEqual(['one', ' two', ' three']);
      const names = [
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ];
      expect(events).toEqual(['message_start', ...names]); // the SDK swallows pings

      // On the wire: `event: <type>` names the data's type, a ping after message_start, no [DONE].
      const raw = await fetch(mock.url + '/v1/messages', {
        method: 'POST',
        headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'echo: one two three' }] }),
      });
      expect(raw.headers.get('content-type')).toContain('text/event-stream');
      const frames = (await raw.text()).split('\n\n').filter(Boolean);
      const typed = frames.map((frame) => {
        const [, name, data] = /^event: (\w+)\ndata: (.*)$/.exec(frame)!;
        expect(JSON.parse(data).type).toBe(name);
        return name;
      });
      expect(typed).toEqual(['message_start', 'ping', ...names]);
    });

    it('calls a custom tool when asked about the weather (streamed or not), and answers its result in text', async () => {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
      const streamed = await client.messages.stream({ model: 'claude-mock-1', max_tokens: 100, tools: [WEATHER_TOOL], messages }).finalMessage();
      expect(streamed.stop_reason).toBe('tool_use');
      expect(streamed.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_01/), name: 'get_weather', input: { location: 'Paris' } }]);
      expect(streamed.usage.output_tokens).toBe(5);

      const other = { name: 'get_time', input_schema: { type: 'object' as const } };
      const forced = await client.messages.create({
        model: 'm',
        max_tokens: 100,
        tools: [WEATHER_TOOL, other],
        tool_choice: { type: 'tool', name: 'get_time' },
        messages,
      });
      expect(forced.content).toMatchObject([{ type: 'tool_use', name: 'get_time' }]);
      const none = await client.messages.create({ model: 'm', max_tokens: 100, tools: [WEATHER_TOOL], tool_choice: { type: 'none' }, messages });
      expect(none.content).toEqual([{ type: 'text', text: 'Hello from mock' }]);

      const toolUse = streamed.content[0] as Anthropic.ToolUseBlock;
      const answered = await client.messages.create({
        model: 'm',
        max_tokens: 100,
        tools: [WEATHER_TOOL],
        messages: [
          ...messages,
          { role: 'assistant', content: [toolUse] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18°C' }] },
        ],
      });
      expect(answered).toMatchObject({ content: [{ type: 'text', text: 'Hello from mock' }], stop_reason: 'end_turn' });
    });

    describe('tool script (a user text starting with "tools:")', () => {
      const DOCS_TOOLS = ['docs__search_docs', 'docs__add'].map((name) => ({ name, input_schema: { type: 'object' as const } }));
      const SCRIPT = 'tools: docs__search_docs {"query":"refunds"} ; docs__add {"a":1,"b":2} | docs__add {"a":3,"b":4}';
      const toolUses = (message: Anthropic.Message) => message.content.filter((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');

      async function runScript(ask: (messages: Anthropic.MessageParam[]) => Promise<Anthropic.Message>): Promise<void> {
        const messages: Anthropic.MessageParam[] = [{ role: 'user', content: [{ type: 'text', text: SCRIPT }] }];
        const first = await ask(messages);
        expect(first.stop_reason).toBe('tool_use');
        expect(first.content).toEqual([
          { type: 'tool_use', id: expect.stringMatching(/^toolu_01[0-9A-Za-z]{22}$/), name: 'docs__search_docs', input: { query: 'refunds' } },
          { type: 'tool_use', id: expect.stringMatching(/^toolu_01[0-9A-Za-z]{22}$/), name: 'docs__add', input: { a: 1, b: 2 } },
        ]);
        expect(first.usage.output_tokens).toBe(14); // argument fragments, 5 + 9
        const [search, add] = toolUses(first);
        messages.push(
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: search.id, content: 'Refunds take 5 days' },
              { type: 'tool_result', tool_use_id: add.id, content: [{ type: 'text', text: 'boom' }], is_error: true },
            ],
          },
        );
        const second = await ask(messages);
        expect(second.stop_reason).toBe('tool_use');
        expect(toolUses(second).map((block) => [block.name, block.input])).toEqual([['docs__add', { a: 3, b: 4 }]]);
        messages.push(
          { role: 'assistant', content: second.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: second.content[0].type === 'tool_use' ? second.content[0].id : '', content: '7' }] },
        );
        const last = await ask(messages);
        expect(last).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'results: Refunds take 5 days / error: boom / 7' }] });
      }

      it('calls the tools round after round, then lists the results (error results marked)', async () => {
        await runScript((messages) => client.messages.create({ model: 'claude-mock-1', max_tokens: 100, tools: DOCS_TOOLS, messages }));
      });

      it('streams the tool_use blocks one after another, as the SDK assembles them', async () => {
        await runScript((messages) => client.messages.stream({ model: 'claude-mock-1', max_tokens: 100, tools: DOCS_TOOLS, messages }).finalMessage());
        const raw = await fetch(`${mock.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ model: 'claude-mock-1', max_tokens: 100, stream: true, tools: DOCS_TOOLS, messages: [{ role: 'user', content: SCRIPT }] }),
        });
        const events = (await raw.text())
          .split('\n\n')
          .filter(Boolean)
          .map((frame) => JSON.parse(frame.split('\ndata: ')[1]));
        const starts = events.filter((event) => event.type === 'content_block_start');
        expect(starts.map((event) => [event.index, event.content_block.name, event.content_block.input])).toEqual([
          [0, 'docs__search_docs', {}],
          [1, 'docs__add', {}],
        ]);
        const json = (index: number) =>
          events
            .filter((event) => event.type === 'content_block_delta' && event.index === index)
            .map((event) => event.delta.partial_json)
            .join('');
        expect([json(0), json(1)]).toEqual(['{"query":"refunds"}', '{"a":1,"b":2}']);
        expect(events.find((event) => event.type === 'message_delta').delta.stop_reason).toBe('tool_use');
      });

      it('answers "no tool <name>" for a tool not offered (or tool_choice none)', async () => {
        const ask = (text: string, tool_choice?: Anthropic.ToolChoice) =>
          client.messages.create({
            model: 'claude-mock-1',
            max_tokens: 100,
            tools: DOCS_TOOLS,
            ...(tool_choice ? { tool_choice } : {}),
            messages: [{ role: 'user', content: text }],
          });
        expect((await ask('tools: docs__nope {}')).content).toEqual([{ type: 'text', text: 'no tool docs__nope' }]);
        expect((await ask('tools: docs__add {}', { type: 'none' })).content).toEqual([{ type: 'text', text: 'no tool docs__add' }]);
        expect((await ask('hello tools: docs__add {}')).content).toEqual([{ type: 'text', text: 'Hello from mock' }]);
      });
    });

    it('runs the MCP connector with the beta header, streamed or not', async () => {
      const mcp_servers = [
        { type: 'url' as const, url: 'https://a.example.com/mcp', name: 'search' },
        { type: 'url' as const, url: 'https://b.example.com/mcp', name: 'tools' },
      ];
      const request = {
        model: 'claude-mock-1',
        max_tokens: 100,
        messages: [{ role: 'user' as const, content: 'echo: ping' }],
        mcp_servers,
        betas: ['mcp-client-2025-04-04' as const],
      };
      const message = await client.beta.messages.create(request);
      expect(mock.requests[0].headers['anthropic-beta']).toContain('mcp-client-2025-04-04');
      expect(message.content.map((block) => block.type)).toEqual(['mcp_tool_use', 'mcp_tool_result', 'mcp_tool_use', 'mcp_tool_result', 'text']);
      const [use, result] = message.content as [Anthropic.Beta.BetaMCPToolUseBlock, Anthropic.Beta.BetaMCPToolResultBlock];
      expect(use).toEqual({
        type: 'mcp_tool_use',
        id: expect.stringMatching(/^mcptoolu_01/),
        name: 'echo',
        server_name: 'search',
        input: { text: 'echo: ping' },
      });
      expect(result).toEqual({ type: 'mcp_tool_result', tool_use_id: use.id, is_error: false, content: [{ type: 'text', text: 'echo from search' }] });
      expect(message.content[4]).toEqual({ type: 'text', text: 'ping' });

      const streamed = await client.beta.messages.stream(request).finalMessage();
      expect(streamed.content.map((block) => block.type)).toEqual(['mcp_tool_use', 'mcp_tool_result', 'mcp_tool_use', 'mcp_tool_result', 'text']);
      expect(streamed.content[2]).toMatchObject({ server_name: 'tools', input: { text: 'echo: ping' } });

      const { betas: _betas, ...withoutBeta } = request;
      const error = await client.beta.messages.create(withoutBeta).catch((e) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect(error.message).toMatch(/mcp-client-2025-04-04/);
    });

    it('checks auth headers and the body, in Anthropic error shape', async () => {
      const post = (headers: Record<string, string>, body: unknown) =>
        fetch(mock.url + '/v1/messages', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        });
      const ok = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
      const noKey = await post({ 'anthropic-version': '2023-06-01' }, ok);
      expect(noKey.status).toBe(401);
      expect(await json(noKey)).toEqual({
        type: 'error',
        error: { type: 'authentication_error', message: 'x-api-key header is required' },
        request_id: expect.stringMatching(/^req_/),
      });
      expect(noKey.headers.get('request-id')).toMatch(/^req_/);
      const noVersion = await post({ 'x-api-key': 'k' }, ok);
      expect(noVersion.status).toBe(400);
      expect((await json(noVersion)).error).toEqual({ type: 'invalid_request_error', message: 'anthropic-version: header is required' });
      const badJson = await post({ 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }, '{"model":');
      expect(badJson.status).toBe(400);

      const invalid: [Record<string, unknown>, RegExp][] = [
        [{ max_tokens: 0 }, /^max_tokens: /],
        [{ temperature: 1.5 }, /^temperature: /],
        [{ messages: [] }, /^messages: /],
        [{ messages: [{ role: 'assistant', content: 'hi' }] }, /^messages: first message must use the "user" role/],
        [{ messages: [{ role: 'system', content: 'hi' }] }, /^messages\.0\.role: /],
        [{ n: 2 }, /^n: Extra inputs are not permitted/],
      ];
      for (const [change, message] of invalid) {
        const error = await client.messages.create({ ...ok, ...change } as any).catch((e) => e);
        expect(error).toBeInstanceOf(Anthropic.BadRequestError);
        expect(error.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(message) } });
      }
      // Consecutive user turns are merged by Anthropic, not refused.
      const merged = await client.messages.create({
        ...ok,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'echo: b' },
        ],
      });
      expect(merged.content).toEqual([{ type: 'text', text: 'b' }]);
    });

    it('mock-error-<status> and mock-stream-error give the errors the SDK knows', async () => {
      const limited = await client.messages.create({ model: 'mock-error-429', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
      expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
      expect(limited.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
      expect(limited.headers.get('retry-after')).toBe('1');
      const overloaded = await client.messages
        .create({ model: 'provider/mock-error-529', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(overloaded.status).toBe(529);
      expect(overloaded.error.error.type).toBe('overloaded_error');

      await expect(
        client.messages.stream({ model: 'mock-stream-error', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).finalMessage(),
      ).rejects.toThrow(/Overloaded/);
    });

    it('mock-malformed-chunk and mock-stream-cut break the stream as documented', async () => {
      const body = (model: string) => JSON.stringify({ model, max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'echo: one two three' }] });
      const headers = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
      const malformed = await (await fetch(mock.url + '/v1/messages', { method: 'POST', headers, body: body('mock-malformed-chunk') })).text();
      const frames = malformed.trim().split('\n\n');
      expect(frames).toHaveLength(2);
      expect(frames[0]).toMatch(/^event: message_start\ndata: \{/);
      expect(() => JSON.parse(frames[1].split('\ndata: ')[1])).toThrow();
      expect(malformed).not.toContain('message_stop');

      await expect(
        client.messages.stream({ model: 'mock-stream-cut', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }).finalMessage(),
      ).rejects.toThrow();
    });
  });

  describe('Gemini API', () => {
    const generate = (model: string, body: unknown, { method = 'generateContent', query = '', key = 'g-key' } = {}) =>
      fetch(`${mock.url}/v1beta/models/${encodeURIComponent(model)}:${method}${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { 'x-goog-api-key': key } : {}) },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const user = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] });
    const sseChunks = async (reply: globalThis.Response): Promise<any[]> => {
      const text = await reply.text();
      expect(text.endsWith('\r\n\r\n')).toBe(true);
      return text
        .split('\r\n\r\n')
        .filter(Boolean)
        .map((frame) => JSON.parse(frame.replace(/^data: /, '')));
    };

    it('answers generateContent with deterministic usage; the model comes from the path', async () => {
      const reply = await generate('gemini-2.5-flash', { systemInstruction: { parts: [{ text: 'Be brief.' }] }, ...user('echo: hello gemini') });
      expect(reply.status).toBe(200);
      // 9 + 18 chars -> 7 prompt tokens; "hello gemini": 2 words.
      expect(await json(reply)).toEqual({
        candidates: [{ content: { parts: [{ text: 'hello gemini' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 7 }] },
        modelVersion: 'gemini-2.5-flash',
        responseId: expect.any(String),
      });
      const thinking = await json(
        await generate(
          'gemini-2.5-pro',
          { ...user('hi'), generation_config: { thinking_config: { thinking_budget: 128 }, max_output_tokens: 2 } },
          { method: 'generateContent', query: '?key=q-key', key: '' },
        ),
      );
      expect(thinking.candidates[0]).toMatchObject({ content: { parts: [{ text: 'Hello from' }] }, finishReason: 'MAX_TOKENS' });
      expect(thinking.usageMetadata).toMatchObject({ promptTokenCount: 1, candidatesTokenCount: 2, thoughtsTokenCount: 5, totalTokenCount: 8 });
    });

    it('streams one chunk per word over SSE (alt=sse), or one JSON array without it', async () => {
      const reply = await generate('gemini-2.5-flash', user('echo: streamed by gemini'), { method: 'streamGenerateContent', query: '?alt=sse' });
      expect(reply.headers.get('content-type')).toContain('text/event-stream');
      const chunks = await sseChunks(reply);
      expect(chunks.map((chunk) => chunk.candidates[0].content.parts[0].text)).toEqual(['streamed', ' by', ' gemini']);
      expect(chunks.map((chunk) => chunk.candidates[0].finishReason)).toEqual([undefined, undefined, 'STOP']);
      expect(chunks.map((chunk) => chunk.usageMetadata.candidatesTokenCount)).toEqual([1, 2, 3]);
      expect(new Set(chunks.map((chunk) => chunk.responseId)).size).toBe(1);

      const array = await json(await generate('gemini-2.5-flash', user('echo: streamed by gemini'), { method: 'streamGenerateContent' }));
      expect(array.map((chunk: any) => chunk.candidates[0].content.parts[0].text).join('')).toBe('streamed by gemini');
    });

    it('calls the first declared function about the weather, whole in one chunk, and answers its response in text', async () => {
      const ask = { ...user('weather in Paris?'), tools: [{ functionDeclarations: [WEATHER_DECLARATION] }] };
      const call = await json(await generate('gemini-2.5-flash', ask));
      expect(call.candidates[0]).toEqual({
        content: { parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }], role: 'model' },
        finishReason: 'STOP',
        index: 0,
      });
      expect(call.usageMetadata.candidatesTokenCount).toBe(5);
      const streamed = await sseChunks(await generate('gemini-2.5-flash', ask, { method: 'streamGenerateContent', query: '?alt=sse' }));
      expect(streamed).toHaveLength(1);
      expect(streamed[0].candidates[0].content.parts[0].functionCall).toEqual({ name: 'get_weather', args: { location: 'Paris' } });

      const history = [
        ...ask.contents,
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: '18°C' } } }] },
      ];
      const answered = await json(await generate('gemini-2.5-flash', { ...ask, contents: history }));
      expect(answered.candidates[0].content.parts).toEqual([{ text: 'Hello from mock' }]);
    });

    describe('tool script (a user text starting with "tools:")', () => {
      const tools = [{ functionDeclarations: ['docs__search_docs', 'docs__add'].map((name) => ({ name, parametersJsonSchema: { type: 'object' } })) }];
      const SCRIPT = 'tools: docs__search_docs {"query":"refunds"} ; docs__add {"a":1,"b":2} | docs__add {"a":3,"b":4}';

      /** Runs the script; `ask` returns the answer's parts and finishReason (streamed: the chunks' parts joined). */
      async function runScript(ask: (contents: unknown[]) => Promise<{ parts: any[]; finishReason: string }>): Promise<void> {
        const contents: unknown[] = [{ role: 'user', parts: [{ text: SCRIPT }] }];
        const first = await ask(contents);
        expect(first).toEqual({
          parts: [{ functionCall: { name: 'docs__search_docs', args: { query: 'refunds' } } }, { functionCall: { name: 'docs__add', args: { a: 1, b: 2 } } }],
          finishReason: 'STOP',
        });
        contents.push(
          { role: 'model', parts: first.parts },
          {
            role: 'user',
            parts: [
              { functionResponse: { name: 'docs__search_docs', response: { result: 'Refunds take 5 days' } } },
              { functionResponse: { name: 'docs__add', response: { sum: 3 } } },
            ],
          },
        );
        const second = await ask(contents);
        expect(second.parts).toEqual([{ functionCall: { name: 'docs__add', args: { a: 3, b: 4 } } }]);
        contents.push(
          { role: 'model', parts: second.parts },
          { role: 'user', parts: [{ functionResponse: { name: 'docs__add', response: { content: '7' } } }] },
        );
        const last = await ask(contents);
        expect(last).toEqual({ parts: [{ text: 'results: Refunds take 5 days / {"sum":3} / 7' }], finishReason: 'STOP' });
      }

      it('calls the functions round after round (parallel calls as parts of one content), then lists the results', async () => {
        await runScript(async (contents) => {
          const answer = await json(await generate('gemini-2.5-flash', { contents, tools }));
          return { parts: answer.candidates[0].content.parts, finishReason: answer.candidates[0].finishReason };
        });
        const first = await json(await generate('gemini-2.5-flash', { ...user(SCRIPT), tools }));
        expect(first.usageMetadata.candidatesTokenCount).toBe(14); // argument fragments, 5 + 9
      });

      it('streams the calls whole in one chunk and the final text word by word', async () => {
        const chunkCounts: number[] = [];
        await runScript(async (contents) => {
          const chunks = await sseChunks(await generate('gemini-2.5-flash', { contents, tools }, { method: 'streamGenerateContent', query: '?alt=sse' }));
          chunkCounts.push(chunks.length);
          const parts = chunks.flatMap((chunk) => chunk.candidates[0].content.parts);
          const text = parts.every((part) => typeof part.text === 'string') ? [{ text: parts.map((part) => part.text).join('') }] : parts;
          return { parts: text, finishReason: chunks.at(-1).candidates[0].finishReason };
        });
        expect(chunkCounts).toEqual([1, 1, 9]);
      });

      it('answers "no tool <name>" for a function not declared (or mode NONE)', async () => {
        const text = async (body: unknown) => (await json(await generate('gemini-2.5-flash', body))).candidates[0].content.parts[0].text;
        expect(await text({ ...user('tools: docs__nope {}'), tools })).toBe('no tool docs__nope');
        expect(await text({ ...user('tools: docs__add {}'), tools, toolConfig: { functionCallingConfig: { mode: 'NONE' } } })).toBe('no tool docs__add');
      });
    });

    it("refuses what Google refuses, in Google's error shape", async () => {
      const noKey = await generate('gemini-2.5-flash', user('hi'), { key: '' });
      expect(noKey.status).toBe(403);
      expect(await json(noKey)).toEqual({
        error: {
          code: 403,
          message:
            "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
          status: 'PERMISSION_DENIED',
        },
      });
      const unknown = await generate('gemini-2.5-flash', { ...user('hi'), temperature: 0.5 });
      expect(unknown.status).toBe(400);
      expect(await json(unknown)).toEqual({
        error: { code: 400, message: 'Invalid JSON payload received. Unknown name "temperature": Cannot find field.', status: 'INVALID_ARGUMENT' },
      });
      const badConfig = await json(await generate('gemini-2.5-flash', { ...user('hi'), generationConfig: { max_tokens: 5 } }));
      expect(badConfig.error.message).toBe('Invalid JSON payload received. Unknown name "max_tokens" at \'generation_config\': Cannot find field.');
      const noContents = await generate('gemini-2.5-flash', { generationConfig: {} });
      expect(noContents.status).toBe(400);
      expect((await generate('gemini-2.5-flash', '{"contents": [')).status).toBe(400);
    });

    it('embeds one content with embedContent (the key required, unknown fields refused)', async () => {
      const embedded = await generate('gemini-embedding-001', { content: { parts: [{ text: 'hello ' }, { text: 'world' }] } }, { method: 'embedContent' });
      expect(embedded.status).toBe(200);
      expect(await json(embedded)).toEqual({ embedding: { values: mockEmbeddingValues('hello world') } });
      const sized = await json(
        await generate(
          'gemini-embedding-001',
          { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hi' }] }, taskType: 'RETRIEVAL_DOCUMENT', title: 'T', outputDimensionality: 3 },
          { method: 'embedContent' },
        ),
      );
      expect(sized.embedding.values).toEqual(mockEmbeddingValues('hi', 3));

      const noKey = await generate('gemini-embedding-001', { content: { parts: [{ text: 'hi' }] } }, { method: 'embedContent', key: '' });
      expect(noKey.status).toBe(403);
      expect((await json(noKey)).error.status).toBe('PERMISSION_DENIED');
      const unknown = await generate('gemini-embedding-001', { content: { parts: [{ text: 'hi' }] }, input: 'hi' }, { method: 'embedContent' });
      expect(unknown.status).toBe(400);
      expect(await json(unknown)).toEqual({
        error: { code: 400, message: 'Invalid JSON payload received. Unknown name "input": Cannot find field.', status: 'INVALID_ARGUMENT' },
      });
      const otherModel = await generate('gemini-embedding-001', { model: 'models/other', content: { parts: [{ text: 'hi' }] } }, { method: 'embedContent' });
      expect(otherModel.status).toBe(400);
      expect((await generate('gemini-embedding-001', { content: { parts: [] } }, { method: 'embedContent' })).status).toBe(400);
    });

    it("lists models in Google's native shape, page by page, and gets one (the key required)", async () => {
      const list = (query: string, headers: Record<string, string> = { 'x-goog-api-key': 'g-key' }) => fetch(`${mock.url}/v1beta/models${query}`, { headers });
      const all = await list('');
      expect(all.status).toBe(200);
      const body = await json(all);
      expect(body).toEqual({ models: GEMINI_MODELS });
      expect(body.models[0]).toMatchObject({
        name: 'models/gemini-2.5-flash',
        version: expect.any(String),
        displayName: 'Gemini 2.5 Flash',
        inputTokenLimit: expect.any(Number),
        outputTokenLimit: expect.any(Number),
        supportedGenerationMethods: expect.arrayContaining(['generateContent', 'countTokens']),
      });

      const names: string[] = [];
      let token = '';
      for (let page = 0; page < 5; page++) {
        const reply = await json(await list(`?pageSize=3${token ? `&pageToken=${token}` : ''}`));
        expect(reply.models.length).toBeLessThanOrEqual(3);
        names.push(...reply.models.map((model: any) => model.name));
        if (!reply.nextPageToken) break;
        token = reply.nextPageToken;
      }
      expect(names).toEqual(GEMINI_MODELS.map((model) => model.name));
      expect((await list('?pageSize=3&pageToken=bogus')).status).toBe(400);

      const byQueryKey = await list('/gemini-2.5-pro?key=q-key', {});
      expect(byQueryKey.status).toBe(200);
      expect((await json(byQueryKey)).name).toBe('models/gemini-2.5-pro');
      expect((await json(await list(`/${encodeURIComponent('models/gemini-2.5-flash')}`))).name).toBe('models/gemini-2.5-flash');
      const missing = await list('/gemini-0-nope');
      expect(missing.status).toBe(404);
      expect((await json(missing)).error).toMatchObject({ code: 404, status: 'NOT_FOUND', message: expect.stringContaining('models/gemini-0-nope') });
      const noKey = await list('', {});
      expect(noKey.status).toBe(403);
      expect((await json(noKey)).error.status).toBe('PERMISSION_DENIED');
    });

    it('the behaviour switches answer as documented', async () => {
      const limited = await generate('mock-error-429', user('hi'));
      expect(limited.status).toBe(429);
      expect((await json(limited)).error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
      expect((await json(await generate('mock-error-503', user('hi')))).error.status).toBe('UNAVAILABLE');

      const malformed = await (
        await generate('mock-malformed-chunk', user('echo: one two three'), { method: 'streamGenerateContent', query: '?alt=sse' })
      ).text();
      const frames = malformed.split('\r\n\r\n').filter(Boolean);
      expect(frames).toHaveLength(2);
      expect(JSON.parse(frames[0].slice(6)).candidates[0].content.parts[0].text).toBe('one');
      expect(() => JSON.parse(frames[1].slice(6))).toThrow();

      const cut = await generate('mock-stream-cut', user('echo: one two three'), { method: 'streamGenerateContent', query: '?alt=sse' });
      await expect(cut.text()).rejects.toThrow();
      const retry = await json(await generate('mock-retry-after-1500', user('hi')));
      expect(retry.error.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' }]);
      const flaky = () => generate('mock-flaky-1-503', user('hi'));
      expect([(await flaky()).status, (await flaky()).status]).toEqual([503, 200]);
      const started = Date.now();
      const slow = await sseChunks(await generate('mock-slow-20', user('echo: a b c'), { method: 'streamGenerateContent', query: '?alt=sse' }));
      expect(slow).toHaveLength(3);
      expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    });
  });

  describe('Bedrock Converse', () => {
    const MODEL = 'mistral.mistral-large-2407-v1';
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const signer = new SignatureV4({ service: 'bedrock', region: 'us-east-1', credentials: BEDROCK_TEST_CREDENTIALS, sha256: Sha256 });

    /** A Converse (or ConverseStream) call, SigV4-signed as AWS's SDK signs it. */
    async function converse(body: unknown, stream = false): Promise<globalThis.Response> {
      const path = `/model/${MODEL}/${stream ? 'converse-stream' : 'converse'}`;
      const { host } = new URL(mock.url);
      const raw = JSON.stringify(body);
      const signed = await signer.sign({
        method: 'POST',
        protocol: 'http:',
        hostname: '127.0.0.1',
        path,
        query: {},
        headers: { host, 'content-type': 'application/json' },
        body: raw,
      });
      return fetch(mock.url + path, { method: 'POST', headers: signed.headers, body: raw });
    }

    /** The event frames of a ConverseStream answer: [event type, payload without its `p` padding]. */
    async function frames(reply: globalThis.Response): Promise<[string, any][]> {
      const bytes = new Uint8Array(await reply.arrayBuffer());
      const events: [string, any][] = [];
      for (let at = 0; at < bytes.length;) {
        const length = new DataView(bytes.buffer, bytes.byteOffset + at).getUint32(0);
        const message = codec.decode(bytes.subarray(at, at + length));
        const { p: _padding, ...payload } = JSON.parse(toUtf8(message.body));
        events.push([String(message.headers[':event-type']?.value), payload]);
        at += length;
      }
      return events;
    }

    const toolConfig = { tools: ['docs__search_docs', 'docs__add'].map((name) => ({ toolSpec: { name, inputSchema: { json: { type: 'object' } } } })) };
    const SCRIPT = 'tools: docs__search_docs {"query":"refunds"} ; docs__add {"a":1,"b":2} | docs__add {"a":3,"b":4}';

    /** Runs the script; `ask` returns the answer's content and stopReason. */
    async function runScript(ask: (messages: unknown[]) => Promise<{ content: any[]; stopReason: string }>): Promise<void> {
      const messages: any[] = [{ role: 'user', content: [{ text: SCRIPT }] }];
      const first = await ask(messages);
      expect(first).toEqual({
        content: [
          { toolUse: { toolUseId: expect.stringMatching(/^tooluse_[\w-]{22}$/), name: 'docs__search_docs', input: { query: 'refunds' } } },
          { toolUse: { toolUseId: expect.stringMatching(/^tooluse_[\w-]{22}$/), name: 'docs__add', input: { a: 1, b: 2 } } },
        ],
        stopReason: 'tool_use',
      });
      const [search, add] = first.content.map((block) => block.toolUse.toolUseId);
      messages.push(
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: search, content: [{ text: 'Refunds take 5 days' }] } },
            { toolResult: { toolUseId: add, content: [{ json: { sum: 3 } }], status: 'error' } },
          ],
        },
      );
      const second = await ask(messages);
      expect(second.content.map((block) => [block.toolUse.name, block.toolUse.input])).toEqual([['docs__add', { a: 3, b: 4 }]]);
      messages.push(
        { role: 'assistant', content: second.content },
        { role: 'user', content: [{ toolResult: { toolUseId: second.content[0].toolUse.toolUseId, content: [{ text: '7' }] } }] },
      );
      const last = await ask(messages);
      expect(last).toEqual({ content: [{ text: 'results: Refunds take 5 days / error: {"sum":3} / 7' }], stopReason: 'end_turn' });
    }

    it('follows the tool script: toolUse blocks round after round, then the results', async () => {
      await runScript(async (messages) => {
        const reply = await converse({ messages, toolConfig });
        expect(reply.status).toBe(200);
        const answer = await json(reply);
        return { content: answer.output.message.content, stopReason: answer.stopReason };
      });
      const unknown = await json(await converse({ messages: [{ role: 'user', content: [{ text: 'tools: docs__nope {}' }] }], toolConfig }));
      expect(unknown.output.message.content).toEqual([{ text: 'no tool docs__nope' }]);
    });

    it('streams one toolUse block per call (start, input deltas, stop), and the final text word by word', async () => {
      await runScript(async (messages) => {
        const events = await frames(await converse({ messages, toolConfig }, true));
        const blocks: any[] = [];
        for (const [type, payload] of events) {
          const index = payload.contentBlockIndex;
          if (type === 'contentBlockStart') blocks[index] = { toolUse: { ...payload.start.toolUse, input: '' } };
          if (type === 'contentBlockDelta' && payload.delta.toolUse) blocks[index].toolUse.input += payload.delta.toolUse.input;
          if (type === 'contentBlockDelta' && payload.delta.text !== undefined) blocks[index] = { text: (blocks[index]?.text ?? '') + payload.delta.text };
          if (type === 'contentBlockStop' && blocks[index].toolUse) blocks[index].toolUse.input = JSON.parse(blocks[index].toolUse.input);
        }
        expect(events.filter(([type]) => type === 'contentBlockStop').map(([, payload]) => payload.contentBlockIndex)).toEqual(blocks.map((_, index) => index));
        return { content: blocks, stopReason: events.find(([type]) => type === 'messageStop')![1].stopReason };
      });
    });
  });
});
