/**
 * Self-test of the mock upstream: the official `openai` SDK must accept everything it sends.
 */
import OpenAI from 'openai';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream';

const USAGE_DETAILS = {
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};
const WEATHER_TOOL: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe('mock upstream (OpenAI wire format)', () => {
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    client = new OpenAI({ baseURL: mock.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
  });
  afterAll(() => mock.close());
  beforeEach(() => mock.reset());

  it('answers a chat completion in OpenAI shape with deterministic usage', async () => {
    // "Hi there" = 8 chars -> 2 prompt tokens; "Hello from mock" = 3 words.
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi there' }],
    });
    expect(completion).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello from mock', refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, ...USAGE_DETAILS },
      service_tier: 'default',
      system_fingerprint: expect.stringMatching(/^fp_/),
    });
    expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(5);
  });

  it('echoes, reports cached / reasoning tokens and honours n', async () => {
    const echo = await client.chat.completions.create({
      model: 'mock-cached',
      messages: [
        { role: 'system', content: 'You are terse.' }, // 14 chars
        { role: 'user', content: 'echo: one two three four' }, // 24 chars -> 38/4 -> 10
      ],
      n: 2,
    });
    expect(echo.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, 'one two three four'],
      [1, 'one two three four'],
    ]);
    expect(echo.usage).toMatchObject({
      prompt_tokens: 10,
      completion_tokens: 8,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 5 },
    });

    const reasoning = await client.chat.completions.create({
      model: 'o3-mini',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(reasoning.usage).toMatchObject({
      prompt_tokens: 1,
      completion_tokens: 8,
      completion_tokens_details: { reasoning_tokens: 5 },
    });
  });

  it('streams one chunk per word, without a usage chunk by default', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks).toHaveLength(5); // role, 3 words, finish
    expect(chunks[0].choices[0]).toEqual({
      index: 0,
      delta: { role: 'assistant', content: '', refusal: null },
      logprobs: null,
      finish_reason: null,
    });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello from mock');
    expect(chunks[4].choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ object: 'chat.completion.chunk', id: chunks[0].id, model: 'gpt-4o-mini' });
      expect('usage' in chunk).toBe(false);
    }
  });

  it('streams a usage chunk with stream_options.include_usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'echo: a b' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, ...USAGE_DETAILS });
    for (const chunk of chunks.slice(0, -1)) expect(chunk.usage).toBeNull();
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('a b');
  });

  it('writes raw SSE events ending with data: [DONE]', async () => {
    const response = await fetch(mock.url + '/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const text = await response.text();
    const events = text.split('\n\n');
    expect(events.pop()).toBe('');
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(events[events.length - 1]).toBe('data: [DONE]');
  });

  it('answers with a tool call, streamed and not', async () => {
    const params = {
      model: 'gpt-4o',
      messages: [{ role: 'user' as const, content: "What's the weather like?" }],
      tools: [WEATHER_TOOL],
    };
    const completion = await client.chat.completions.create(params);
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.content).toBeNull();
    expect(completion.choices[0].message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^call_/),
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
      },
    ]);

    // The SDK's stream helper assembles the deltas and validates the chunk sequence.
    const stream = client.chat.completions.stream({ ...params, stream_options: { include_usage: true } });
    const final = await stream.finalChatCompletion();
    const call = final.choices[0].message.tool_calls![0];
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Paris' });
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.usage?.completion_tokens).toBe(5);

    // After the tool result the model answers in text.
    const followUp = await client.chat.completions.create({
      ...params,
      messages: [...params.messages, final.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18°C' }],
    });
    expect(followUp.choices[0].message.content).toBe('Hello from mock');
  });

  describe('tool script (a user message starting with "tools:")', () => {
    type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
    const DOCS_TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = ['docs__search_docs', 'docs__add'].map((name) => ({
      type: 'function',
      function: { name, parameters: { type: 'object', properties: {} } },
    }));
    const SCRIPT = 'tools: docs__search_docs {"query":"refunds"} ; docs__add {"a":1,"b":2} | docs__add {"a":3,"b":4}';
    const functionCalls = (message: OpenAI.Chat.Completions.ChatCompletionMessage) =>
      (message.tool_calls ?? []) as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];

    /** Runs the script to its end, `ask` answering each round; the results the "tools" give are fixed texts. */
    async function runScript(ask: (messages: Message[]) => Promise<OpenAI.Chat.Completions.ChatCompletion>) {
      const messages: Message[] = [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: 'earlier answer' },
        { role: 'user', content: SCRIPT },
      ];
      const first = await ask(messages);
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      const firstCalls = functionCalls(first.choices[0].message);
      expect(firstCalls.map((call) => [call.type, call.function.name, JSON.parse(call.function.arguments)])).toEqual([
        ['function', 'docs__search_docs', { query: 'refunds' }],
        ['function', 'docs__add', { a: 1, b: 2 }],
      ]);
      expect(firstCalls.map((call) => call.id)).toEqual([expect.stringMatching(/^call_\w+0$/), expect.stringMatching(/^call_\w+0p1$/)]);
      messages.push(first.choices[0].message);
      // One result as a string, one as text parts.
      messages.push({ role: 'tool', tool_call_id: firstCalls[0].id, content: 'Refunds take 5 days' });
      messages.push({ role: 'tool', tool_call_id: firstCalls[1].id, content: [{ type: 'text', text: '3' }] });

      const second = await ask(messages);
      const secondCalls = functionCalls(second.choices[0].message);
      expect(second.choices[0].finish_reason).toBe('tool_calls');
      expect(secondCalls.map((call) => [call.function.name, call.function.arguments])).toEqual([['docs__add', '{"a":3,"b":4}']]);
      messages.push(second.choices[0].message, { role: 'tool', tool_call_id: secondCalls[0].id, content: '7' });

      const last = await ask(messages);
      expect(last.choices[0].finish_reason).toBe('stop');
      expect(last.choices[0].message.content).toBe('results: Refunds take 5 days / 3 / 7');
      expect(last.choices[0].message.tool_calls).toBeUndefined();
      return { first, second, last };
    }

    it('calls the tools round after round, then lists the results', async () => {
      const { first, second, last } = await runScript((messages) => client.chat.completions.create({ model: 'gpt-4o', messages, tools: DOCS_TOOLS }));
      // Argument fragments: {" query ":" refunds "} = 5, {" a ": 1 ," b ": 2 } = 9.
      expect(first.usage?.completion_tokens).toBe(14);
      expect(second.usage?.completion_tokens).toBe(9);
      expect(last.usage?.completion_tokens).toBe(9); // words of "results: Refunds take 5 days / 3 / 7"
    });

    it('streams the calls one after another, as the SDK assembles them', async () => {
      await runScript((messages) => client.chat.completions.stream({ model: 'gpt-4o', messages, tools: DOCS_TOOLS }).finalChatCompletion());

      const raw = await fetch(mock.url + '/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: SCRIPT }], tools: DOCS_TOOLS }),
      });
      const chunks = (await raw.text())
        .split('\n\n')
        .filter((event) => event.startsWith('data: {'))
        .map((event) => JSON.parse(event.slice(6)));
      const deltas = chunks.map((chunk) => chunk.choices[0].delta);
      expect(deltas[0]).toEqual({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'docs__search_docs', arguments: '' } }],
        refusal: null,
      });
      expect(deltas[6]).toEqual({
        tool_calls: [{ index: 1, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'docs__add', arguments: '' } }],
      });
      expect(
        deltas
          .slice(1, 6)
          .map((delta) => delta.tool_calls[0].function.arguments)
          .join(''),
      ).toBe('{"query":"refunds"}');
      expect(deltas.at(-1)).toEqual({});
      expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
    });

    it('answers "no tool <name>" for a tool the request does not offer, and leaves other messages alone', async () => {
      const ask = (content: string, extra: Partial<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming> = {}) =>
        client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content }], tools: DOCS_TOOLS, ...extra });
      const unknown = await ask('tools: docs__add {"a":1} ; docs__delete_all {}');
      expect(unknown.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'no tool docs__delete_all' } });
      const none = await ask('tools: docs__add {"a":1}', { tool_choice: 'none' });
      expect(none.choices[0].message.content).toBe('no tool docs__add');
      const bad = await ask('tools: docs__add {"a":');
      expect(bad.choices[0].message.content).toMatch(/^bad tool script: /);
      // A separator inside the JSON is part of the arguments; no arguments are {}.
      const inside = await ask('tools: docs__search_docs {"query":"a | b ; c"} ; docs__add');
      expect(functionCalls(inside.choices[0].message).map((call) => call.function.arguments)).toEqual(['{"query":"a | b ; c"}', '{}']);
      // Without the trigger at the start, nothing changes.
      const plain = await ask('please tools: docs__add {}');
      expect(plain.choices[0].message.content).toBe('Hello from mock');
    });
  });

  it('raises the SDK errors selected by mock-error-<status>', async () => {
    const error = await client.chat.completions.create({ model: 'mock-error-429', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error).toMatchObject({ status: 429, type: 'requests', code: 'rate_limit_exceeded' });
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('1');

    await expect(client.chat.completions.create({ model: 'mock-error-500', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      status: 500,
      type: 'server_error',
    });
    await expect(client.chat.completions.create({ model: 'mock-error-401', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
  });

  it('records requests with their Authorization header', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      query: {},
      headers: { authorization: 'Bearer sk-test' },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(mock.requests[0].aborted).toBeUndefined();
  });

  it('serves the Azure OpenAI deployment path', async () => {
    const response = await fetch(mock.url + '/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': 'azure-key' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'echo: from azure' }] }),
    });
    expect(response.status).toBe(200);
    const body: any = await response.json();
    expect(body).toMatchObject({ object: 'chat.completion', model: 'my-gpt4o' });
    expect(body.choices[0].message.content).toBe('from azure');
    expect(mock.requests[0]).toMatchObject({
      path: '/openai/deployments/my-gpt4o/chat/completions',
      query: { 'api-version': '2024-10-21' },
      headers: { 'api-key': 'azure-key' },
    });
  });

  it('lists models and rejects bad JSON and unknown routes with OpenAI errors', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('gpt-4o-mini');

    const badJson = await fetch(mock.url + '/v1/chat/completions', { method: 'POST', body: '{nope' });
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as any).error).toMatchObject({ type: 'invalid_request_error', param: null });

    const unknown = await fetch(mock.url + '/v1/unknown');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error.message).toBe('Invalid URL (GET /v1/unknown)');
  });

  it('cuts a stream, sends invalid JSON and hangs on request', async () => {
    const cut = await client.chat.completions.create({
      model: 'mock-stream-cut',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    const received: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of cut) received.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    ).rejects.toThrow();
    expect(received).toEqual(['', 'Hello', ' from']);
    expect(mock.requests[0].aborted).toBeUndefined(); // the mock cut it, the client did not abort

    await expect(client.chat.completions.create({ model: 'mock-invalid-json', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toThrow();

    await expect(
      client.chat.completions.create({ model: 'mock-hang', messages: [{ role: 'user', content: 'Hi' }] }, { timeout: 200 }),
      // APIConnectionTimeoutError outside Jest; inside Jest's VM realm the SDK can't recognise
      // Node's AbortError (instanceof Error fails across realms) and reports its parent class.
    ).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    await waitFor(() => mock.requests[2]?.aborted === true);
  });

  it('paces mock-slow-<ms> and notices a client abort mid-stream', async () => {
    const started = Date.now();
    await client.chat.completions.create({ model: 'mock-slow-150', messages: [{ role: 'user', content: 'Hi' }] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);

    const stream = await client.chat.completions.create({
      model: 'mock-slow-50',
      messages: [{ role: 'user', content: 'echo: one two three four five six seven eight' }],
      stream: true,
    });
    let count = 0;
    for await (const _chunk of stream) {
      if (++count === 2) break; // leaving the loop aborts the request
    }
    await waitFor(() => mock.requests[1]?.aborted === true);
  });

  describe('failure switches for routing tests', () => {
    const ask = (model: string, content = 'Hi', stream = false) =>
      fetch(mock.url + '/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, stream, messages: [{ role: 'user', content }] }),
      });

    it('mock-flaky-<n>-<status> fails n times per model and last user message, until reset()', async () => {
      const statuses = async (model: string, content: string, times: number) => {
        const seen: number[] = [];
        for (let i = 0; i < times; i++) seen.push((await ask(model, content)).status);
        return seen;
      };
      expect(await statuses('mock-flaky-2-503', 'first', 4)).toEqual([503, 503, 200, 200]);
      expect(await statuses('mock-flaky-2-503', 'second', 1)).toEqual([503]); // another message: its own counter
      expect(await statuses('mock-flaky-1-429', 'first', 2)).toEqual([429, 200]); // another model too

      const failure = await ask('mock-flaky-1-500', 'body');
      expect(await failure.json()).toEqual({ error: { message: 'Mock error 500', type: 'server_error', param: null, code: 'server_error' } });
      const success: any = await (await ask('mock-flaky-1-500', 'body')).json();
      expect(success.choices[0].message.content).toBe('Hello from mock');

      mock.reset();
      expect(await statuses('mock-flaky-2-503', 'first', 3)).toEqual([503, 503, 200]);
    });

    it('mock-flaky streams once it succeeds', async () => {
      await expect(
        client.chat.completions.create({ model: 'mock-flaky-1-502', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
      ).rejects.toMatchObject({ status: 502 });
      const stream = await client.chat.completions.create({ model: 'mock-flaky-1-502', messages: [{ role: 'user', content: 'Hi' }], stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe('Hello from mock');
    });

    it('mock-retry-after-<ms> is a 429 with retry-after-ms and retry-after in whole seconds', async () => {
      for (const [ms, seconds] of [
        ['300', '1'],
        ['5000', '5'],
        ['2500', '3'],
      ]) {
        const response = await ask(`mock-retry-after-${ms}`);
        expect(response.status).toBe(429);
        expect(response.headers.get('retry-after-ms')).toBe(ms);
        expect(response.headers.get('retry-after')).toBe(seconds);
        expect(((await response.json()) as any).error).toMatchObject({ code: 'rate_limit_exceeded' });
      }
      const again = await ask('mock-retry-after-300');
      expect(again.status).toBe(429); // always, not only the first time
    });

    it('mock-drop destroys the socket before any response, streamed or not', async () => {
      await expect(ask('mock-drop')).rejects.toThrow(/fetch failed/);
      await expect(ask('mock-drop', 'Hi', true)).rejects.toThrow(/fetch failed/);
      await expect(client.chat.completions.create({ model: 'mock-drop', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(
        OpenAI.APIConnectionError,
      );
      expect(mock.requests).toHaveLength(3);
      expect(mock.requests.map((r) => r.aborted)).toEqual([undefined, undefined, undefined]); // the mock's doing, not the client's
    });

    it('mock-stream-empty sends the SSE headers, then cuts before the first event; non-streamed it drops', async () => {
      const response = await ask('mock-stream-empty', 'Hi', true);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      await expect(response.text()).rejects.toThrow(/terminated/);

      const stream = await client.chat.completions.create({ model: 'mock-stream-empty', messages: [{ role: 'user', content: 'Hi' }], stream: true });
      const received: unknown[] = [];
      await expect(
        (async () => {
          for await (const chunk of stream) received.push(chunk);
        })(),
      ).rejects.toThrow();
      expect(received).toEqual([]);

      await expect(ask('mock-stream-empty')).rejects.toThrow(/fetch failed/);
      expect(mock.requests.map((r) => r.aborted)).toEqual([undefined, undefined, undefined]);
    });
  });

  it('does not record with record: false', async () => {
    const bare = await startMockUpstream({ record: false });
    try {
      const response = await fetch(bare.url + '/v1/chat/completions', {
        method: 'POST',
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(((await response.json()) as any).choices[0].message.content).toBe('Hello from mock');
      expect(bare.requests).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});
