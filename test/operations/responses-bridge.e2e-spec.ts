/**
 * `POST /v1/responses` for providers without the Responses API (CONTRACT section 12),
 * bridged through their chat completions, with the official `openai` SDK: Anthropic and
 * Gemini, plain and streamed, a function tool and its result sent back as
 * `function_call_output`, the log row; what cannot be kept is a 400 naming it; and the
 * pass-through to OpenAI, which forwards what the gateway does not know unchanged.
 * The mocks' rules are in test/support/mock-anthropic.ts, mock-gemini.ts and mock-openai-responses.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import OpenAI from 'openai';
import { call, createVirtualKey, expectError, logOf, openai } from '../support/e2e-helpers';
import { THINKING_TEXT } from '../support/mock-anthropic-body';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const WEATHER: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather by city',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
  strict: true,
};

/** A recorded client request (test/fixtures/clients/README.md of branch clients). */
function recorded(file: string): { headers: Record<string, string>; body: Record<string, any> }[] {
  return JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/clients', file), 'utf8')).requests;
}

/** The events of an SSE body as the SDK would read them. */
function sseEvents(text: string): Record<string, any>[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.includes('data: '))
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)));
}

describe('responses bridged through chat completions', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: 'sk-ant-bridge-777777', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'gemini-prod', provider: 'google', key: 'gemini-bridge-888888', custom_host: `${mock.url}/v1beta` });
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-bridge-999999', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const claude = () => openai(gateway, { 'x-gateway-virtual-key': 'anthropic-prod' });
  const gemini = () => openai(gateway, { 'x-gateway-virtual-key': 'gemini-prod' });

  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  /** Every event of a stream, checked to be numbered 0, 1, 2 … */
  async function collect(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>): Promise<OpenAI.Responses.ResponseStreamEvent[]> {
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
    return events;
  }

  describe('to Anthropic', () => {
    it('answers a Response object, sends instructions as the system prompt, and logs usage and cost', async () => {
      const { data, response } = await claude()
        .responses.create({
          model: 'claude-sonnet-4-5',
          instructions: 'Be brief.',
          input: 'echo: bridged hello',
          max_output_tokens: 64,
          temperature: 0.5,
          user: 'ann',
          metadata: { team: 'a' },
        })
        .withResponse();
      const sent = upstream();
      expect(sent.path).toBe('/v1/messages');
      expect(sent.body).toEqual({
        model: 'claude-sonnet-4-5',
        system: 'Be brief.',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'echo: bridged hello' }] }],
        max_tokens: 64,
        temperature: 0.5,
        metadata: { user_id: 'ann' },
      });

      expect(data).toMatchObject({
        object: 'response',
        status: 'completed',
        model: 'claude-sonnet-4-5',
        instructions: 'Be brief.',
        user: 'ann',
        metadata: { team: 'a' },
        store: false,
      });
      expect(data.id).toMatch(/^resp_[0-9a-f]{48}$/);
      expect(data.output_text).toBe('bridged hello');
      expect(data.output).toEqual([
        {
          id: expect.stringMatching(/^msg_/),
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'bridged hello', annotations: [], logprobs: [] }],
        },
      ]);
      const usage = data.usage!;
      expect(usage.output_tokens).toBe(2);
      expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'responses', provider: 'anthropic', model: 'claude-sonnet-4-5', user: 'ann', status_code: 200, is_stream: false });
      expect(log).toMatchObject({ prompt_tokens: usage.input_tokens, completion_tokens: 2, total_tokens: usage.total_tokens });
      expect(log.cost_usd).toBeCloseTo((usage.input_tokens * 3 + 2 * 15) / 1e6, 12);
      expect(log.response_body).toEqual(JSON.parse(JSON.stringify({ ...data, output_text: undefined })));
    });

    it('streams a function call as typed events, then answers the function_call_output', async () => {
      const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: [{ type: 'input_text', text: 'What is the weather in Paris?' }] }];
      const stream = await claude().responses.create({ model: 'claude-sonnet-4-5', input, tools: [WEATHER], tool_choice: 'auto', stream: true });
      const events = await collect(stream);
      expect(events.map((event) => event.type)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        ...Array(5).fill('response.function_call_arguments.delta'),
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ]);
      const done = events.find((event) => event.type === 'response.output_item.done') as OpenAI.Responses.ResponseOutputItemDoneEvent;
      const call = done.item as OpenAI.Responses.ResponseFunctionToolCall;
      expect(call).toMatchObject({ type: 'function_call', status: 'completed', name: 'get_weather', arguments: '{"location":"Paris"}' });
      expect(call.call_id).toMatch(/^toolu_01/);
      const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
      expect(completed.response.output).toEqual([call]);
      expect(completed.response.usage).toMatchObject({ output_tokens: 5 });
      expect(upstream().body.tools).toEqual([{ name: 'get_weather', description: 'Weather by city', input_schema: WEATHER.parameters }]);

      mock.reset();
      const { data, response } = await claude()
        .responses.create({
          model: 'claude-sonnet-4-5',
          input: [...input, call, { type: 'function_call_output', call_id: call.call_id, output: '{"celsius":21}' }],
          tools: [WEATHER],
        })
        .withResponse();
      expect(data.output_text).toBe('Hello from mock');
      expect(upstream().body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: call.call_id, name: 'get_weather', input: { location: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.call_id, content: '{"celsius":21}' }] },
      ]);
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.response_body.output[0].content[0].text).toBe('Hello from mock');
    });

    it('streams text that the SDK stream helper assembles, and logs the assembled response', async () => {
      const stream = claude().responses.stream({ model: 'claude-sonnet-4-5', input: 'echo: one two three', user: 'bea' });
      let text = '';
      stream.on('response.output_text.delta', (event) => (text += event.delta));
      const final = await stream.finalResponse();
      expect(text).toBe('one two three');
      expect(final.output_text).toBe('one two three');
      expect(final.status).toBe('completed');

      await gateway.flushLogs();
      const logs = (await call(gateway, '/v1/logs?user=bea')).body.data;
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ operation: 'responses', provider: 'anthropic', is_stream: true, status_code: 200, completion_tokens: 3 });
      expect(logs[0].ttft_ms).toEqual(expect.any(Number));
      expect(logs[0].response_body).toMatchObject({ id: final.id, status: 'completed', usage: final.usage });
      expect(logs[0].cost_usd).toBeGreaterThan(0);
    });

    it("maps reasoning.effort to Claude's thinking and gives its thinking back as a reasoning item, plain and streamed", async () => {
      const response = await claude().responses.create({ model: 'claude-sonnet-4-5', input: 'Hi', reasoning: { effort: 'low' } });
      expect(upstream().body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
      expect(response.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: THINKING_TEXT }] });
      mock.reset();
      let summary = '';
      for await (const event of await claude().responses.create({ model: 'claude-sonnet-4-5', input: 'Hi', reasoning: { effort: 'low' }, stream: true })) {
        if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
      }
      expect(summary).toBe(THINKING_TEXT);
    });

    it('ends incomplete at max_output_tokens, with the reason', async () => {
      const data = await claude().responses.create({ model: 'claude-sonnet-4-5', input: 'echo: one two three four five', max_output_tokens: 2 });
      expect(data.status).toBe('incomplete');
      expect(data.incomplete_details).toEqual({ reason: 'max_output_tokens' });
      expect(data.output_text).toBe('one two');

      const events = await collect(
        await claude().responses.create({ model: 'claude-sonnet-4-5', input: 'echo: one two three four five', max_output_tokens: 2, stream: true }),
      );
      const last = events.at(-1) as OpenAI.Responses.ResponseIncompleteEvent;
      expect(last.type).toBe('response.incomplete');
      expect(last.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    });

    it('passes a provider error on in the OpenAI error shape', async () => {
      const response = await call(gateway, '/v1/responses', {
        headers: { 'x-gateway-virtual-key': 'anthropic-prod' },
        body: { model: 'mock-error-429', input: 'hi' },
      });
      expect(response.status).toBe(429);
      expect(response.body.error).toMatchObject({ type: 'rate_limit_error', message: expect.stringContaining('rate limit') });
    });
  });

  describe('to Gemini', () => {
    it('streams text as typed events with usage in response.completed', async () => {
      const events = await collect(await gemini().responses.create({ model: 'gemini-2.5-flash', input: 'echo: one two three', stream: true, user: 'cy' }));
      const types = events.map((event) => event.type);
      expect(types).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      const deltas = events.filter((event) => event.type === 'response.output_text.delta') as OpenAI.Responses.ResponseTextDeltaEvent[];
      expect(deltas.map((event) => event.delta).join('')).toBe('one two three');
      const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
      expect(completed.response.usage).toMatchObject({ output_tokens: 3 });
      expect(upstream().path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');

      await gateway.flushLogs();
      const logs = (await call(gateway, '/v1/logs?user=cy')).body.data;
      expect(logs[0]).toMatchObject({ operation: 'responses', provider: 'google', is_stream: true, completion_tokens: 3 });
      expect(logs[0].response_body.output[0].content[0].text).toBe('one two three');
    });

    it('calls a function and answers its output, non-streamed', async () => {
      const input: OpenAI.Responses.ResponseInput = [
        { role: 'developer', content: 'You report weather.' },
        { role: 'user', content: 'weather in Paris?' },
      ];
      const first = await gemini().responses.create({ model: 'gemini-2.5-flash', input, tools: [WEATHER], reasoning: { effort: 'low' } });
      const call = first.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
      expect(call).toMatchObject({ name: 'get_weather', arguments: '{"location":"Paris"}', status: 'completed' });
      expect(first.usage!.output_tokens_details.reasoning_tokens).toBe(5);
      expect(upstream().body).toMatchObject({
        systemInstruction: { parts: [{ text: 'You report weather.' }] },
        generationConfig: { thinkingConfig: { thinkingBudget: 1024 } },
      });

      mock.reset();
      const second = await gemini().responses.create({
        model: 'gemini-2.5-flash',
        input: [...input, call, { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
        tools: [WEATHER],
      });
      expect(second.output_text).toBe('Hello from mock');
      const contents = upstream().body.contents;
      expect(contents.at(-2).parts[0].functionCall).toMatchObject({ name: 'get_weather', args: { location: 'Paris' } });
      expect(contents.at(-1).parts[0].functionResponse).toMatchObject({ name: 'get_weather' });
    });
  });

  it('names what it leaves out in x-gateway-ignored-params and the log; a config with strict_params refuses it instead', async () => {
    const body = { model: 'claude-sonnet-4-5', input: 'hi', prompt_cache_key: 'session-1', tools: [{ type: 'web_search' }] };
    const lenient = await call(gateway, '/v1/responses', { headers: { 'x-gateway-virtual-key': 'anthropic-prod' }, body });
    expect(lenient.status).toBe(200);
    expect(lenient.headers.get('x-gateway-ignored-params')).toBe('prompt_cache_key,tools.web_search');
    mock.reset();

    const strict = JSON.stringify({ virtual_key: 'anthropic-prod', strict_params: true });
    const refused = await call(gateway, '/v1/responses', { headers: { 'x-gateway-config': strict }, body });
    expectError(refused, 400, {
      type: 'invalid_request_error',
      code: 'strict_params',
      param: 'prompt_cache_key',
      message: /^prompt_cache_key would be ignored/,
    });
    expect(mock.requests).toHaveLength(0);
  });

  describe('what the bridge cannot keep', () => {
    it.each([
      [
        'a built-in tool forced by tool_choice',
        { tools: [{ type: 'web_search_preview' }], tool_choice: { type: 'web_search_preview' } },
        'tool_choice.type',
        /web_search_preview/,
      ],
      ['a remote MCP server', { tools: [{ type: 'mcp', server_label: 'x', server_url: 'https://mcp.example.com' }] }, 'tools[0].type', /"mcp"/],
      ['previous_response_id', { previous_response_id: 'resp_123' }, 'previous_response_id', /previous_response_id/],
      ['background: true', { background: true }, 'background', /background/],
      ['a field the bridge does not know', { future_field: 1 }, 'future_field', /future_field needs a provider with the Responses API/],
      ['an item reference', { input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type', /item_reference/],
      ['a function call without call_id', { input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id', /call_id must be a string/],
      ['an unknown reasoning effort', { reasoning: { effort: 'extreme' } }, 'reasoning.effort', /reasoning\.effort must be one of/],
      ['an input part without text', { input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input[0].content[0].text', /must be a string/],
      ['no input', { input: undefined }, 'input', /input is required/],
      ['max_output_tokens that is not a count', { max_output_tokens: 'many' }, 'max_output_tokens', /positive integer/],
    ])('%s is a 400 naming it, nothing sent', async (_name, change, param, message) => {
      const response = await call(gateway, '/v1/responses', {
        headers: { 'x-gateway-virtual-key': 'anthropic-prod' },
        body: { model: 'claude-sonnet-4-5', input: 'hi', ...change },
      });
      expectError(response, 400, { type: 'invalid_request_error', param, message });
      expect(mock.requests).toHaveLength(0);
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'responses', status_code: 400 });
    });
  });

  describe('Codex, as recorded', () => {
    it('runs its tool loop against Claude (web search disabled in Codex), every item translated', async () => {
      const [first, second] = recorded('codex-claude-model-no-web-search-tool.json');
      const headers = { 'x-gateway-virtual-key': 'anthropic-prod' };
      const answer = await call(gateway, '/v1/responses', { headers, body: first.body });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toContain('text/event-stream');
      const events = sseEvents(answer.text);
      expect(events[0].type).toBe('response.created');
      expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'completed', output: [{ type: 'message' }] } });
      const sent = upstream().body;
      // Codex's developer messages are the system prompt; its namespace's functions are flattened and named after it.
      expect(sent.system).toContain('You are a coding agent running in the Codex CLI');
      expect(sent.messages.every((message: any) => message.role === 'user')).toBe(true);
      const toolNames = sent.tools.map((tool: any) => tool.name);
      expect(toolNames).toEqual(expect.arrayContaining(['exec_command', 'update_goal', 'multi_agent_v1__close_agent']));
      expect(toolNames).toHaveLength(
        first.body.tools.filter((t: any) => t.type === 'function').length + first.body.tools.find((t: any) => t.type === 'namespace').tools.length,
      );
      expect(sent.tool_choice).toEqual({ type: 'auto' });

      mock.reset();
      const followUp = await call(gateway, '/v1/responses', { headers, body: second.body });
      expect(followUp.status).toBe(200);
      expect(sseEvents(followUp.text).at(-1)?.type).toBe('response.completed');
      const messages = upstream().body.messages;
      // The reasoning item (encrypted for OpenAI) is dropped; the call and its output are a tool_use / tool_result pair.
      expect(messages.at(-2)).toEqual({
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'call_capture_1', name: 'exec_command', input: { cmd: 'echo fixture-ok' } }],
      });
      expect(messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_capture_1', content: expect.stringContaining('fixture-ok') });

      const log = await logOf(gateway, followUp.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ operation: 'responses', provider: 'anthropic', model: 'claude-sonnet-4-5', is_stream: true, status_code: 200 });
      expect(log.response_body.status).toBe('completed');
    });

    it('leaves out the web_search tool Codex offers by default, so Codex works with Claude as it is', async () => {
      const [first] = recorded('codex-claude-model-tool.json');
      expect(first.body.tools.some((tool: any) => tool.type === 'web_search')).toBe(true);
      const response = await call(gateway, '/v1/responses', { headers: { 'x-gateway-virtual-key': 'anthropic-prod' }, body: first.body });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-gateway-ignored-params')?.split(',')).toEqual(
        expect.arrayContaining(['tools.web_search', 'prompt_cache_key', 'client_metadata']),
      );
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.ignored_params).toEqual(expect.arrayContaining(['tools.web_search']));
      const sent = upstream().body;
      expect(sent.tools.length).toBe(
        first.body.tools.filter((tool: any) => tool.type !== 'web_search').length + nestedTools(first.body) - namespaces(first.body),
      );
      expect(sent.tools.every((tool: any) => typeof tool.name === 'string' && tool.input_schema)).toBe(true);
    });

    it('passes its body to OpenAI unchanged, an input item type the gateway does not know included', async () => {
      const [, second] = recorded('codex-tool.json');
      const body = structuredClone(second.body);
      body.input.splice(4, 0, {
        type: 'additional_tools',
        id: 'at_1',
        tools: [{ type: 'function', name: 'late_tool', parameters: { type: 'object', properties: {} } }],
      });
      await call(gateway, '/v1/responses', { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body });
      expect(upstream().path).toBe('/v1/responses');
      expect(upstream().body).toEqual(body);
    });
  });
});

/** How many function tools the namespace tools of a Responses body hold, and how many namespaces there are. */
function nestedTools(body: any): number {
  return body.tools.filter((tool: any) => tool.type === 'namespace').reduce((sum: number, tool: any) => sum + tool.tools.length, 0);
}
function namespaces(body: any): number {
  return body.tools.filter((tool: any) => tool.type === 'namespace').length;
}
