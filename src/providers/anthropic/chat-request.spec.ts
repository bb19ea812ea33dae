import { IgnoredParams } from '../ignored-params';
import { toAnthropicRequest } from './chat-request';

const USER = { role: 'user', content: 'Hi' };
const HI = { role: 'user', content: [{ type: 'text', text: 'Hi' }] };
const PIXEL = 'data:image/png;base64,iVBORw0KGgo=';
const WEATHER = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
};

describe('OpenAI chat bodies as Anthropic Messages requests', () => {
  it("ignores what only tunes OpenAI's delivery or caching, and strict on a tool, naming each; strict_params refuses them", () => {
    const ignored = new IgnoredParams();
    const body = {
      model: 'claude-sonnet-4-5',
      messages: [USER],
      prompt_cache_key: 'session-1',
      service_tier: 'flex',
      store: true,
      metadata: { a: 'b' },
      tools: [{ ...WEATHER, function: { ...WEATHER.function, strict: true } }],
    };
    const request = toAnthropicRequest(body, ignored);
    expect(request).toEqual({
      model: 'claude-sonnet-4-5',
      messages: [HI],
      max_tokens: 4096,
      tools: [{ name: 'get_weather', description: 'Weather by city', input_schema: WEATHER.function.parameters }],
    });
    expect(ignored.list()).toEqual(['prompt_cache_key', 'service_tier', 'store', 'metadata', 'tools[].function.strict']);
    expect(() => toAnthropicRequest(body, new IgnoredParams(true))).toThrow(
      expect.objectContaining({ status: 400, param: 'prompt_cache_key', code: 'strict_params' }),
    );
  });

  it('reasoning_effort as a thinking budget, max_tokens made room for it; xhigh too', () => {
    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'xhigh' })).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 32768 },
      max_tokens: 32768 + 4096,
    });
    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'minimal' })).not.toHaveProperty('thinking');
  });

  it('moves system messages to the top-level system, defaults max_tokens, maps user, stop, sampling and stream', () => {
    const request = toAnthropicRequest({
      model: 'claude-3-7-sonnet-latest',
      messages: [{ role: 'system', content: 'Be brief.' }, USER],
      user: 'alice',
      stop: 'END',
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(request).toEqual({
      model: 'claude-3-7-sonnet-latest',
      system: 'Be brief.',
      messages: [HI],
      max_tokens: 4096,
      metadata: { user_id: 'alice' },
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
    });
  });

  it('keeps temperature and names top_p as ignored for the Claude models that refuse both', () => {
    const ignored = new IgnoredParams();
    const request = toAnthropicRequest({ model: 'claude-sonnet-4-5', messages: [USER], temperature: 1, top_p: 0.95 }, ignored);
    expect(request).toMatchObject({ temperature: 1 });
    expect(request).not.toHaveProperty('top_p');
    expect(ignored.list()).toEqual(['top_p']);
    expect(toAnthropicRequest({ model: 'claude-opus-4-1', messages: [USER], top_p: 0.9 })).toMatchObject({ top_p: 0.9 });
    expect(toAnthropicRequest({ model: 'claude-3-5-haiku-latest', messages: [USER], temperature: 1, top_p: 0.9 })).toMatchObject({
      temperature: 1,
      top_p: 0.9,
    });
  });

  it("puts a message's own cache_control on the last block it becomes (system, user, assistant and tool turns)", () => {
    const mark = { type: 'ephemeral' };
    const request = toAnthropicRequest({
      model: 'c',
      messages: [
        { role: 'system', content: 'Long rules', cache_control: mark },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
          cache_control: { type: 'ephemeral', ttl: '1h' },
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }], cache_control: mark },
        { role: 'tool', tool_call_id: 'c1', content: 'done', cache_control: mark },
      ],
    });
    expect(request.system).toEqual([{ type: 'text', text: 'Long rules', cache_control: mark }]);
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b', cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'f', input: {}, cache_control: mark }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'done', cache_control: mark }] },
    ]);
    expect(() => toAnthropicRequest({ model: 'c', messages: [{ ...USER, cache_control: { type: 'forever' } }] })).toThrow(
      expect.objectContaining({ status: 400, param: 'messages[0].cache_control' }),
    );
  });

  it('joins string system and developer messages with blank lines; content parts make text blocks, cache_control kept', () => {
    const strings = toAnthropicRequest({
      model: 'c',
      messages: [{ role: 'system', content: 'Be brief.' }, USER, { role: 'developer', content: 'Use French.' }],
    });
    expect(strings.system).toBe('Be brief.\n\nUse French.');
    const parts = toAnthropicRequest({
      model: 'c',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Long rules', cache_control: { type: 'ephemeral' } }] },
        USER,
      ],
    });
    expect(parts.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Long rules', cache_control: { type: 'ephemeral' } },
    ]);
    expect(toAnthropicRequest({ model: 'c', messages: [{ role: 'system', content: '' }, USER] })).not.toHaveProperty('system');
  });

  it('takes max_completion_tokens over max_tokens; stop arrays pass as they are', () => {
    expect(toAnthropicRequest({ model: 'c', messages: [USER], max_tokens: 10, max_completion_tokens: 20 }).max_tokens).toBe(20);
    expect(toAnthropicRequest({ model: 'c', messages: [USER], max_tokens: 10 }).max_tokens).toBe(10);
    expect(toAnthropicRequest({ model: 'c', messages: [USER], stop: ['a', 'b'] }).stop_sequences).toEqual(['a', 'b']);
  });

  it('translates images: data URLs as base64 sources, http URLs as url sources', () => {
    const request = toAnthropicRequest({
      model: 'c',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What?' },
            { type: 'image_url', image_url: { url: PIXEL } },
            { type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'low' } },
          ],
        },
      ],
    });
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
        ],
      },
    ]);
  });

  it('translates tools, tool_choice, tool calls and tool results; tool results and the next user message merge into one turn', () => {
    const request = toAnthropicRequest({
      model: 'c',
      tools: [WEATHER, { type: 'function', function: { name: 'now', strict: true } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '25°C' }] },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(request.tools).toEqual([
      { name: 'get_weather', description: 'Weather by city', input_schema: WEATHER.function.parameters },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(request.tool_choice).toEqual({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true });
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { location: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18°C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '25°C' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['required', { type: 'any' }],
    ['none', { type: 'none' }],
  ])('tool_choice %s is %j', (choice, expected) => {
    expect(toAnthropicRequest({ model: 'c', messages: [USER], tools: [WEATHER], tool_choice: choice }).tool_choice).toEqual(expected);
  });

  it('parallel_tool_calls: false alone disables parallel use on the default auto choice, and means nothing without tools', () => {
    expect(toAnthropicRequest({ model: 'c', messages: [USER], tools: [WEATHER], parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(toAnthropicRequest({ model: 'c', messages: [USER], tools: [WEATHER], parallel_tool_calls: true })).not.toHaveProperty('tool_choice');
    expect(toAnthropicRequest({ model: 'c', messages: [USER], parallel_tool_calls: false })).not.toHaveProperty('tool_choice');
  });

  it('merges consecutive messages of one role, and an assistant message with nothing to say is no turn', () => {
    const request = toAnthropicRequest({
      model: 'c',
      messages: [
        USER,
        { role: 'assistant', content: '' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Still there?' },
            { type: 'text', text: '' },
          ],
        },
        { role: 'assistant', content: 'Yes', refusal: null },
      ],
    });
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'text', text: 'Still there?' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Yes' }] },
    ]);
  });

  it('reasoning_effort is a thinking budget with room left for the answer; none and minimal leave thinking off', () => {
    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'low' })).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 1024 },
      max_tokens: 5120,
    });
    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'medium' })).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 4096 },
      max_tokens: 8192,
    });
    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'high', max_tokens: 20000 })).toMatchObject({
      thinking: { budget_tokens: 16384 },
      max_tokens: 20000,
    });
    for (const effort of ['none', 'minimal']) {
      const request = toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: effort });
      expect(request).not.toHaveProperty('thinking');
      expect(request.max_tokens).toBe(4096);
    }
  });

  it("reasoning_effort under the rules of extended thinking: off while a tool call is pending, a budget cut to fit the client's max_tokens, off below the smallest", () => {
    const toolTurn = [
      USER,
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ];
    const ignored = new IgnoredParams();
    expect(toAnthropicRequest({ model: 'c', messages: toolTurn, reasoning_effort: 'high' }, ignored)).not.toHaveProperty('thinking');
    expect(ignored.list()).toEqual(['reasoning_effort']);
    expect(() => toAnthropicRequest({ model: 'c', messages: toolTurn, reasoning_effort: 'high' }, new IgnoredParams(true))).toThrow(
      /reasoning_effort would be ignored/,
    );
    // A finished tool round followed by a plain answer is no pending call.
    const answered = [...toolTurn, { role: 'assistant', content: 'Done.' }, USER];
    expect(toAnthropicRequest({ model: 'c', messages: answered, reasoning_effort: 'low' })).toMatchObject({ thinking: { budget_tokens: 1024 } });

    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'high', max_tokens: 4000 })).toMatchObject({
      thinking: { budget_tokens: 2000 },
      max_tokens: 4000,
    });
    const small = new IgnoredParams();
    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'low', max_tokens: 1024 }, small)).not.toHaveProperty('thinking');
    expect(small.list()).toEqual(['reasoning_effort']);
  });

  it.each([
    [{ temperature: 0.2 }, 'temperature'],
    [{ top_p: 0.5 }, 'top_p'],
    [{ tool_choice: 'required', tools: [{ type: 'function', function: { name: 'f' } }] }, 'tool_choice'],
  ])('refuses what extended thinking does not go with: %j', (fields, param) => {
    expect(() => toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'low', ...fields })).toThrow(expect.objectContaining({ param }));
    expect(() => toAnthropicRequest({ model: 'c', messages: [USER], ...fields })).not.toThrow();
  });

  it('skips null parameters (OpenAI defaults) and accepts the defaults SDKs send: n 1, zero penalties, logprobs false, text output', () => {
    const request = toAnthropicRequest({
      model: 'c',
      messages: [USER],
      n: 1,
      seed: null,
      logprobs: false,
      frequency_penalty: 0,
      presence_penalty: 0,
      modalities: ['text'],
      response_format: { type: 'text' },
      stream: false,
    });
    expect(request).toEqual({ model: 'c', messages: [HI], max_tokens: 4096 });
  });

  it.each([
    ['n above 1', { n: 2 }, 'n'],
    ['logprobs', { logprobs: true }, 'logprobs'],
    ['top_logprobs', { top_logprobs: 2 }, 'top_logprobs'],
    ['frequency_penalty', { frequency_penalty: 0.5 }, 'frequency_penalty'],
    ['presence_penalty', { presence_penalty: -0.5 }, 'presence_penalty'],
    ['logit_bias', { logit_bias: { 1: 1 } }, 'logit_bias'],
    ['seed', { seed: 7 }, 'seed'],
    ['a json_object response_format', { response_format: { type: 'json_object' } }, 'response_format.type'],
    ['a json_schema response_format', { response_format: { type: 'json_schema', json_schema: {} } }, 'response_format.type'],
    ['audio output', { modalities: ['text', 'audio'] }, 'modalities'],
    ['audio settings', { audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
    ['an unknown field', { frobnicate: true }, 'frobnicate'],
    ['a temperature above 1', { temperature: 1.5 }, 'temperature'],
    ['a non-function tool', { tools: [{ type: 'custom', custom: {} }] }, 'tools[0].type'],
    ['a tool_choice of another kind', { tools: [WEATHER], tool_choice: { type: 'allowed_tools' } }, 'tool_choice'],
    ['an audio input', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }, 'messages[0].content[0].type'],
    ['a file input', { messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }] }, 'messages[0].content[0].type'],
    [
      'an image in a system message',
      { messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: PIXEL } }] }, USER] },
      'messages[0].content[0].type',
    ],
    ['a named participant', { messages: [{ role: 'user', content: 'Hi', name: 'bob' }] }, 'messages[0].name'],
    ['the function role', { messages: [USER, { role: 'function', name: 'f', content: 'x' }] }, 'messages[1].role'],
  ])('refuses %s with a 400 naming the field and the provider', (_name, extra, param) => {
    expect(() => toAnthropicRequest({ model: 'c', messages: [USER], ...extra })).toThrow(
      expect.objectContaining({ status: 400, type: 'invalid_request_error', param, message: expect.stringContaining('Provider anthropic does not support') }),
    );
  });

  it.each([
    ['no model', { model: '' }, 'model'],
    ['a model that is not a string', { model: 7 }, 'model'],
    ['no messages', { messages: [] }, 'messages'],
    ['messages that are not an array', { messages: 'Hi' }, 'messages'],
    ['only a system message', { messages: [{ role: 'system', content: 'Be brief.' }] }, 'messages'],
    ['an unknown role', { messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    ['content of another type', { messages: [{ role: 'user', content: 7 }] }, 'messages[0].content'],
    [
      'tool arguments that are not JSON',
      { messages: [USER, { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{' } }] }] },
      'messages[1].tool_calls[0].function.arguments',
    ],
    [
      'tool arguments that are not an object',
      { messages: [USER, { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }] }] },
      'messages[1].tool_calls[0].function.arguments',
    ],
    [
      'a tool call without id',
      { messages: [USER, { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }] },
      'messages[1].tool_calls[0].id',
    ],
    ['a tool message without tool_call_id', { messages: [USER, { role: 'tool', content: 'x' }] }, 'messages[1].tool_call_id'],
    [
      'an image URL of another scheme',
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x' } }] }] },
      'messages[0].content[0].image_url.url',
    ],
    ['max_tokens of zero', { max_tokens: 0 }, 'max_tokens'],
    ['a max_completion_tokens that is not an integer', { max_completion_tokens: 1.5 }, 'max_completion_tokens'],
    ['a temperature that is not a number', { temperature: '0.5' }, 'temperature'],
    ['a stop that is not text', { stop: [1] }, 'stop'],
    ['a user that is not a string', { user: 7 }, 'user'],
    ['an unknown reasoning effort', { reasoning_effort: 'max' }, 'reasoning_effort'],
    ['a tool without a name', { tools: [{ type: 'function', function: {} }] }, 'tools[0].function.name'],
  ])('%s is a 400 naming the field', (_name, change, param) => {
    expect(() => toAnthropicRequest({ model: 'c', messages: [USER], ...change })).toThrow(expect.objectContaining({ status: 400, param }));
  });
});
