/**
 * Self-test of the mock upstream's Responses API (test/support/mock-openai-responses.ts): the
 * official `openai` SDK, pointed straight at the mock, must parse everything it sends.
 */
import OpenAI from 'openai';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream';

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  parameters: { type: 'object', properties: { location: { type: 'string' } } },
  strict: false,
};

const json = (reply: globalThis.Response): Promise<any> => reply.json();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mock upstream (OpenAI Responses API)', () => {
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    client = new OpenAI({ baseURL: mock.url + '/v1', apiKey: 'sk-x', maxRetries: 0 });
  });
  afterAll(() => mock.close());
  beforeEach(() => mock.reset());

  async function collect(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>): Promise<OpenAI.Responses.ResponseStreamEvent[]> {
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    return events;
  }

  it('answers a response in OpenAI shape with deterministic usage', async () => {
    // "Be brief." (9) + "Hi there" (8) = 17 chars -> 5 input tokens; "Hello from mock" = 3 words.
    const response = await client.responses.create({ model: 'gpt-4o-mini', instructions: 'Be brief.', input: 'Hi there', metadata: { k: 'v' }, user: 'u1' });
    expect(response.output_text).toBe('Hello from mock');
    expect(response).toMatchObject({
      id: expect.stringMatching(/^resp_[0-9a-f]{48}$/),
      object: 'response',
      created_at: expect.any(Number),
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      model: 'gpt-4o-mini',
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
      temperature: 1,
      top_p: 1,
      truncation: 'disabled',
      store: true,
      metadata: { k: 'v' },
      user: 'u1',
      text: { format: { type: 'text' } },
      reasoning: { effort: null, summary: null },
      usage: {
        input_tokens: 5,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 3,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 8,
      },
    });
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Hello from mock', annotations: [], logprobs: [] }],
      },
    ]);
    // output_text is computed by the SDK, never sent.
    const raw = await fetch(mock.url + '/v1/responses', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-x', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', input: 'Hi' }),
    });
    expect(raw.headers.get('x-request-id')).toMatch(/^req_/);
    expect(Object.keys(await json(raw))).not.toContain('output_text');
  });

  it('echoes "echo:" input, counts message arrays and lists the input items', async () => {
    const response = await client.responses.create({
      model: 'mock-cached',
      input: [
        { role: 'developer', content: 'Answer.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'echo: one two three' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
          ],
        },
      ],
    });
    expect(response.output_text).toBe('one two three');
    // "Answer." (7) + "echo: one two three" (19) = 26 chars -> 7 tokens, cached floor(7 / 2).
    expect(response.usage).toMatchObject({ input_tokens: 7, input_tokens_details: { cached_tokens: 3 }, output_tokens: 3 });

    const page = await client.responses.inputItems.list(response.id, { order: 'asc' });
    expect(page.data).toEqual([
      { id: expect.stringMatching(/^msg_/), type: 'message', role: 'developer', status: 'completed', content: [{ type: 'input_text', text: 'Answer.' }] },
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'user',
        status: 'completed',
        content: [
          { type: 'input_text', text: 'echo: one two three' },
          { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low', file_id: null },
        ],
      },
    ]);
    const desc = await client.responses.inputItems.list(response.id, { limit: 1 });
    expect(desc.data.map((item) => (item as any).role)).toEqual(['user']);
    expect(desc.has_more).toBe(true);
    const all: string[] = [];
    for await (const item of client.responses.inputItems.list(response.id, { limit: 1 })) all.push((item as any).role);
    expect(all).toEqual(['user', 'developer']);
  });

  it('reasons first when asked to', async () => {
    const response = await client.responses.create({ model: 'o3-mini', input: 'Hi', reasoning: { effort: 'low' } });
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.output[0]).toEqual({ id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [] });
    expect(response.reasoning).toEqual({ effort: 'low', summary: null });
    expect(response.usage).toMatchObject({ output_tokens: 8, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 9 });
  });

  it('calls the first function tool about the weather, not with tool_choice none', async () => {
    const response = await client.responses.create({ model: 'gpt-4o', input: 'What is the weather in Paris?', tools: [WEATHER_TOOL] });
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        call_id: expect.stringMatching(/^call_/),
        name: 'get_weather',
        arguments: '{"location":"Paris"}',
      },
    ]);
    expect(response.output_text).toBe('');
    expect(response.tools).toEqual([WEATHER_TOOL]);
    expect(response.usage?.output_tokens).toBe(5);

    const none = await client.responses.create({ model: 'gpt-4o', input: 'weather?', tools: [WEATHER_TOOL], tool_choice: 'none' });
    expect(none.output_text).toBe('Hello from mock');
    const call = response.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const after = await client.responses.create({
      model: 'gpt-4o',
      input: [
        { role: 'user', content: 'weather?' },
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(after.output_text).toBe('Hello from mock');
  });

  describe('tool script (a user message starting with "tools:")', () => {
    const DOCS_TOOLS = ['docs__search_docs', 'docs__add'].map((name) => ({ ...WEATHER_TOOL, name }));
    const SCRIPT = 'tools: docs__search_docs {"query":"refunds"} ; docs__add {"a":1,"b":2} | docs__add {"a":3,"b":4}';
    type Call = OpenAI.Responses.ResponseFunctionToolCall;
    const echoed = ({ type, call_id, name, arguments: args }: Call): Call => ({ type, call_id, name, arguments: args });

    async function runScript(ask: (input: OpenAI.Responses.ResponseInputItem[]) => Promise<OpenAI.Responses.Response>): Promise<void> {
      const input: OpenAI.Responses.ResponseInputItem[] = [
        { role: 'user', content: 'earlier' },
        { role: 'assistant', content: 'answer' },
        { role: 'user', content: [{ type: 'input_text', text: SCRIPT }] },
      ];
      const first = await ask(input);
      // toMatchObject: the SDK's stream helper adds parsed_arguments.
      expect(first.output).toMatchObject([
        {
          id: expect.stringMatching(/^fc_/),
          type: 'function_call',
          status: 'completed',
          arguments: '{"query":"refunds"}',
          call_id: expect.stringMatching(/^call_/),
          name: 'docs__search_docs',
        },
        {
          id: expect.stringMatching(/^fc_/),
          type: 'function_call',
          status: 'completed',
          arguments: '{"a":1,"b":2}',
          call_id: expect.stringMatching(/^call_/),
          name: 'docs__add',
        },
      ]);
      expect(first.usage?.output_tokens).toBe(14); // argument fragments, 5 + 9
      const [search, add] = first.output as Call[];
      input.push(
        echoed(search),
        echoed(add),
        { type: 'function_call_output', call_id: search.call_id, output: 'Refunds take 5 days' },
        { type: 'function_call_output', call_id: add.call_id, output: '3' },
      );
      const second = await ask(input);
      expect((second.output as Call[]).map((item) => [item.type, item.name, item.arguments])).toEqual([['function_call', 'docs__add', '{"a":3,"b":4}']]);
      const again = second.output[0] as Call;
      input.push(echoed(again), { type: 'function_call_output', call_id: again.call_id, output: '7' });
      const last = await ask(input);
      expect(last.output.map((item) => item.type)).toEqual(['message']);
      expect(last.output_text).toBe('results: Refunds take 5 days / 3 / 7');
    }

    it('calls the functions round after round, then lists the outputs', async () => {
      await runScript((input) => client.responses.create({ model: 'gpt-4o', input, tools: DOCS_TOOLS }));
    });

    it('streams one function_call item per call, as the SDK assembles them', async () => {
      await runScript((input) => client.responses.stream({ model: 'gpt-4o', input, tools: DOCS_TOOLS }).finalResponse());
      const events = await collect(await client.responses.create({ model: 'gpt-4o', input: SCRIPT, tools: DOCS_TOOLS, stream: true }));
      const added = events.filter((event): event is OpenAI.Responses.ResponseOutputItemAddedEvent => event.type === 'response.output_item.added');
      expect(added.map((event) => [event.output_index, (event.item as Call).name, (event.item as Call).arguments])).toEqual([
        [0, 'docs__search_docs', ''],
        [1, 'docs__add', ''],
      ]);
      const deltas = (index: number) =>
        events.flatMap((event) => (event.type === 'response.function_call_arguments.delta' && event.output_index === index ? [event.delta] : [])).join('');
      expect([deltas(0), deltas(1)]).toEqual(['{"query":"refunds"}', '{"a":1,"b":2}']);
    });

    it('reads the earlier rounds from the previous_response_id chain, as OpenAI keeps them', async () => {
      const first = await client.responses.create({ model: 'gpt-4o', input: SCRIPT, tools: DOCS_TOOLS });
      const [search, add] = first.output as Call[];
      const outputs = (pairs: [Call, string][]) => pairs.map(([call, output]) => ({ type: 'function_call_output' as const, call_id: call.call_id, output }));
      const second = await client.responses.create({
        model: 'gpt-4o',
        previous_response_id: first.id,
        input: outputs([
          [search, 'Refunds take 5 days'],
          [add, '3'],
        ]),
        tools: DOCS_TOOLS,
      });
      expect((second.output as Call[]).map((item) => [item.name, item.arguments])).toEqual([['docs__add', '{"a":3,"b":4}']]);
      const last = await client.responses.create({
        model: 'gpt-4o',
        previous_response_id: second.id,
        input: outputs([[second.output[0] as Call, '7']]),
        tools: DOCS_TOOLS,
      });
      expect(last.output_text).toBe('results: Refunds take 5 days / 3 / 7');
    });

    it('answers "no tool <name>" for a function not offered (or tool_choice none)', async () => {
      const unknown = await client.responses.create({ model: 'gpt-4o', input: 'tools: docs__nope {}', tools: DOCS_TOOLS });
      expect(unknown.output_text).toBe('no tool docs__nope');
      const none = await client.responses.create({ model: 'gpt-4o', input: 'tools: docs__add {}', tools: DOCS_TOOLS, tool_choice: 'none' });
      expect(none.output_text).toBe('no tool docs__add');
    });
  });

  it('searches the web and files, with citations', async () => {
    const response = await client.responses.create({
      model: 'gpt-4o',
      input: 'news',
      tools: [{ type: 'web_search_preview' }, { type: 'file_search', vector_store_ids: ['vs_1'] }],
    });
    expect(response.output.map((item) => item.type)).toEqual(['web_search_call', 'file_search_call', 'message']);
    expect(response.output[0]).toEqual({
      id: expect.stringMatching(/^ws_/),
      type: 'web_search_call',
      status: 'completed',
      action: { type: 'search', query: 'news' },
    });
    expect(response.output[1]).toEqual({ id: expect.stringMatching(/^fs_/), type: 'file_search_call', status: 'completed', queries: ['news'], results: null });
    const text = (response.output[2] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    expect(text.annotations).toEqual([
      { type: 'url_citation', start_index: 0, end_index: 15, url: expect.stringMatching(/^https:\/\/example\.com\//), title: expect.any(String) },
      { type: 'file_citation', index: 15, file_id: expect.stringMatching(/^file-/), filename: expect.any(String) },
    ]);
  });

  it('calls MCP servers, Unauthorized without headers, and does not echo their secrets', async () => {
    const response = await client.responses.create({
      model: 'gpt-4o',
      input: 'ping',
      tools: [
        {
          type: 'mcp',
          server_label: 'good',
          server_url: 'https://mcp.example.com/secret/path?token=1',
          headers: { Authorization: 'Bearer s3cret' },
          require_approval: 'never',
        },
        { type: 'mcp', server_label: 'bare', server_url: 'https://other.example.com/mcp', require_approval: 'never' },
      ],
    });
    expect(response.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'mcp_list_tools', 'mcp_call', 'mcp_call', 'message']);
    expect(response.output[0]).toEqual({
      id: expect.stringMatching(/^mcpl_/),
      type: 'mcp_list_tools',
      server_label: 'good',
      tools: [{ name: 'echo', input_schema: expect.objectContaining({ type: 'object' }), annotations: null, description: expect.any(String) }],
    });
    expect(response.output[2]).toMatchObject({
      id: expect.stringMatching(/^mcp_/),
      type: 'mcp_call',
      server_label: 'good',
      name: 'echo',
      arguments: '{"text":"ping"}',
      output: 'echo from good',
      error: null,
    });
    expect(response.output[3]).toMatchObject({ type: 'mcp_call', server_label: 'bare', output: null, error: 'Unauthorized' });
    expect(response.tools).toEqual([
      { type: 'mcp', server_label: 'good', server_url: 'https://mcp.example.com', headers: null, require_approval: 'never' },
      { type: 'mcp', server_label: 'bare', server_url: 'https://other.example.com', headers: null, require_approval: 'never' },
    ]);
    expect(JSON.stringify(response)).not.toContain('s3cret');
  });

  it('streams the exact event sequence with increasing sequence numbers and no [DONE]', async () => {
    const events = await collect(await client.responses.create({ model: 'gpt-4o', input: 'Hi', stream: true }));
    expect(events.map((event) => event.type)).toEqual([
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
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
    expect(created.response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    const deltas = events.filter((event): event is OpenAI.Responses.ResponseTextDeltaEvent => event.type === 'response.output_text.delta');
    expect(deltas.map((event) => event.delta).join('')).toBe('Hello from mock');
    const added = events[2] as OpenAI.Responses.ResponseOutputItemAddedEvent;
    expect(deltas[0]).toEqual({
      type: 'response.output_text.delta',
      sequence_number: 4,
      item_id: added.item.id,
      output_index: 0,
      content_index: 0,
      delta: 'Hello',
      logprobs: [],
    });
    const completed = events[events.length - 1] as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response).toMatchObject({ id: created.response.id, status: 'completed', usage: { input_tokens: 1, output_tokens: 3, total_tokens: 4 } });

    const raw = await fetch(mock.url + '/v1/responses', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-x', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', input: 'Hi', stream: true }),
    });
    expect(raw.headers.get('content-type')).toBe('text/event-stream');
    const text = await raw.text();
    expect(text.startsWith('event: response.created\ndata: {')).toBe(true);
    expect(text.endsWith('\n\n')).toBe(true);
    expect(text).not.toContain('[DONE]');
  });

  it('streams tool items through the SDK helper to a final response', async () => {
    const stream = client.responses.stream({ model: 'gpt-4o', input: 'weather?', tools: [WEATHER_TOOL], reasoning: { effort: 'low' } });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const final = await stream.finalResponse();
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    expect((final.output[1] as OpenAI.Responses.ResponseFunctionToolCall).arguments).toBe('{"location":"Paris"}');
    expect(final.usage?.output_tokens).toBe(10);
    expect(types.filter((type) => type === 'response.function_call_arguments.delta')).toHaveLength(5);
    expect(types).toContain('response.function_call_arguments.done');

    const mcp = client.responses.stream({
      model: 'gpt-4o',
      input: 'news',
      tools: [
        { type: 'mcp', server_label: 'srv', server_url: 'https://mcp.example.com/x', headers: { a: 'b' }, require_approval: 'never' },
        { type: 'web_search_preview' },
      ],
    });
    const events = await collect(mcp);
    const final2 = await mcp.finalResponse();
    expect(final2.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'web_search_call', 'mcp_call', 'message']);
    expect(final2.output_text).toBe('Hello from mock');
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining([
        'response.mcp_list_tools.completed',
        'response.web_search_call.searching',
        'response.mcp_call.in_progress',
        'response.mcp_call_arguments.delta',
        'response.mcp_call_arguments.done',
        'response.mcp_call.completed',
        'response.output_text.annotation.added',
      ]),
    );
    const message = final2.output[3] as OpenAI.Responses.ResponseOutputMessage;
    expect((message.content[0] as OpenAI.Responses.ResponseOutputText).annotations[0]).toMatchObject({ type: 'url_citation' });
  });

  it('retrieves and deletes stored responses, not store: false ones', async () => {
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Hi' });
    const again = await client.responses.retrieve(response.id);
    expect(again).toEqual(response);
    const replay = await collect(await client.responses.retrieve(response.id, { stream: true, starting_after: 8 }));
    expect(replay.map((event) => [event.sequence_number, event.type])).toEqual([
      [9, 'response.output_item.done'],
      [10, 'response.completed'],
    ]);
    await client.responses.delete(response.id);
    const raw = await fetch(`${mock.url}/v1/responses/${response.id}`, { method: 'DELETE', headers: { authorization: 'Bearer sk-x' } });
    expect(raw.status).toBe(404);
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });

    const created = await fetch(mock.url + '/v1/responses', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-x', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', input: 'Hi' }),
    }).then(json);
    const deleted = await fetch(`${mock.url}/v1/responses/${created.id}`, { method: 'DELETE', headers: { authorization: 'Bearer sk-x' } });
    expect(await json(deleted)).toEqual({ id: created.id, object: 'response.deleted', deleted: true });

    const unstored = await client.responses.create({ model: 'gpt-4o', input: 'Hi', store: false });
    expect((unstored as any).store).toBe(false);
    await expect(client.responses.retrieve(unstored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.create({ model: 'gpt-4o', input: 'Hi', previous_response_id: unstored.id })).rejects.toMatchObject({
      status: 400,
      param: 'previous_response_id',
    });
    const next = await client.responses.create({ model: 'gpt-4o', input: 'Hi', previous_response_id: again.id }).catch((e) => e);
    expect(next).toMatchObject({ status: 400 }); // deleted above
  });

  it('runs background responses, cancels them, and refuses to cancel synchronous ones', async () => {
    const sync = await client.responses.create({ model: 'gpt-4o', input: 'Hi' });
    await expect(client.responses.cancel(sync.id)).rejects.toMatchObject({ status: 400 });

    const queued = await client.responses.create({ model: 'gpt-4o', input: 'Hi', background: true });
    expect(queued).toMatchObject({ status: 'queued', background: true, output: [] });
    await sleep(20);
    const done = await client.responses.retrieve(queued.id);
    expect(done).toMatchObject({ status: 'completed', output_text: 'Hello from mock' });

    const hanging = await client.responses.create({ model: 'mock-hang', input: 'Hi', background: true });
    const cancelled = await client.responses.cancel(hanging.id);
    expect(cancelled).toMatchObject({ id: hanging.id, status: 'cancelled' });
    expect((await client.responses.retrieve(hanging.id)).status).toBe('cancelled');
    expect((await client.responses.cancel(done.id)).status).toBe('completed');
  });

  it('answers errors as the SDK expects them', async () => {
    await expect(client.responses.create({ model: 'mock-error-429', input: 'Hi' })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await expect(client.responses.create({ model: 'mock-error-500', input: 'Hi' })).rejects.toMatchObject({ status: 500 });
    await expect(client.responses.create({ model: 'gpt-4o' } as any)).rejects.toMatchObject({
      status: 400,
      param: 'input',
      code: 'missing_required_parameter',
    });
    await expect(client.responses.create({ model: 'gpt-4o', input: [{ role: 'user', content: [{ type: 'text', text: 'x' } as any] }] })).rejects.toMatchObject({
      status: 400,
      param: 'input[0].content[0].type',
      code: 'invalid_value',
    });
    await expect(client.responses.create({ model: 'gpt-4o', input: 'x', temperature: 3 })).rejects.toMatchObject({ status: 400, param: 'temperature' });
    await expect(client.responses.create({ model: 'gpt-4o', input: 'x', tools: [{ type: 'function' } as any] })).rejects.toMatchObject({
      param: 'tools[0].name',
    });
    const badHeader = { type: 'mcp', server_label: 's', server_url: 'https://s.example.com', headers: { a: 1 } };
    await expect(client.responses.create({ model: 'gpt-4o', input: 'x', tools: [badHeader as any] })).rejects.toMatchObject({
      param: 'tools[0].headers.a',
      code: 'invalid_type',
    });
    await expect(client.responses.create({ model: 'gpt-4o', input: 'x', bogus: 1 } as any)).rejects.toMatchObject({
      param: 'bogus',
      code: 'unknown_parameter',
    });
    await expect(client.responses.create({ model: 'mock-drop', input: 'Hi' })).rejects.toBeInstanceOf(OpenAI.APIConnectionError);

    await expect(client.responses.create({ model: 'mock-flaky-1-503', input: 'flaky' })).rejects.toMatchObject({ status: 503 });
    expect((await client.responses.create({ model: 'mock-flaky-1-503', input: 'flaky' })).output_text).toBe('Hello from mock');

    const noKey = await fetch(mock.url + '/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"gpt-4o","input":"x"}',
    });
    expect(noKey.status).toBe(401);
    expect((await json(noKey)).error).toMatchObject({ type: 'invalid_request_error' });
  });

  it('serves the Azure paths with api-key', async () => {
    const post = (path: string, headers: Record<string, string>) =>
      fetch(mock.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"model":"my-deployment","input":"Hi"}' });
    expect((await post('/openai/responses', { 'api-key': 'k' })).status).toBe(404);
    expect((await post('/openai/responses?api-version=2025-04-01-preview', {})).status).toBe(401);
    const azure = await post('/openai/responses?api-version=2025-04-01-preview', { 'api-key': 'k' });
    expect(azure.status).toBe(200);
    const body = await json(azure);
    expect(body).toMatchObject({ object: 'response', model: 'my-deployment', status: 'completed' });
    const got = await fetch(`${mock.url}/openai/responses/${body.id}?api-version=2025-04-01-preview`, { headers: { 'api-key': 'k' } });
    expect((await json(got)).id).toBe(body.id);
    expect((await post('/openai/v1/responses', { 'api-key': 'k' })).status).toBe(200);
    expect((await post('/responses', { authorization: 'Bearer k' })).status).toBe(200);
  });

  it('cuts, breaks and fails streams on request', async () => {
    const cut: string[] = [];
    const cutError = await (async () => {
      for await (const event of await client.responses.create({ model: 'mock-stream-cut', input: 'Hi', stream: true })) cut.push(event.type);
    })().catch((error) => error);
    expect(String(cutError)).toMatch(/terminated|closed|socket/i); // undici's TypeError: terminated
    expect(cut).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
    ]);
    await sleep(20);
    expect(mock.requests[0].aborted).toBeUndefined();

    const malformed: string[] = [];
    const quiet = new OpenAI({ baseURL: mock.url + '/v1', apiKey: 'sk-x', maxRetries: 0, logLevel: 'off' });
    const malformedError = await (async () => {
      for await (const event of await quiet.responses.create({ model: 'mock-malformed-chunk', input: 'Hi', stream: true })) malformed.push(event.type);
    })().catch((error) => error);
    expect(malformedError?.name).toBe('SyntaxError');
    expect(malformed).toEqual(['response.created']);

    const failed = await collect(await client.responses.create({ model: 'mock-stream-failed', input: 'Hi', stream: true }));
    expect(failed.map((event) => event.type)).toEqual(['response.created', 'response.in_progress', 'response.failed']);
    const last = failed[2] as OpenAI.Responses.ResponseFailedEvent;
    expect(last.response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: expect.any(String) } });
  });
});
