import { toAnthropicRequest } from './chat-request';

const USER = { role: 'user', content: 'Hi' };
const PIXEL = 'data:image/png;base64,iVBORw0KGgo=';
const WEATHER = { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { location: { type: 'string' } } } } };

describe('OpenAI chat bodies as Anthropic Messages requests', () => {
  it('moves system and developer messages to the top-level system, defaults max_tokens, maps user and stop', () => {
    const request = toAnthropicRequest({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] }, USER],
      user: 'alice',
      stop: 'END',
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(request).toEqual({
      model: 'claude-sonnet-4-5',
      system: 'Be brief.\n\nUse French.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      max_tokens: 4096,
      metadata: { user_id: 'alice' },
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
    });
  });

  it('takes max_completion_tokens over max_tokens', () => {
    expect(toAnthropicRequest({ model: 'c', messages: [USER], max_tokens: 10, max_completion_tokens: 20 }).max_tokens).toBe(20);
    expect(toAnthropicRequest({ model: 'c', messages: [USER], max_tokens: 10 }).max_tokens).toBe(10);
  });

  it('translates images: data URLs as base64 sources, http URLs as url sources', () => {
    const request = toAnthropicRequest({
      model: 'c',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What?' }, { type: 'image_url', image_url: { url: PIXEL } }, { type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }],
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
      tools: [WEATHER, { type: 'function', function: { name: 'now' } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
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

  it('reasoning_effort is a thinking budget with room left for the answer; none leaves thinking off', () => {
    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'medium' })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 4096 }, max_tokens: 8192 });
    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'high', max_tokens: 20000 }).max_tokens).toBe(20000);
    expect(toAnthropicRequest({ model: 'c', messages: [USER], reasoning_effort: 'none' }).thinking).toBeUndefined();
  });

  it('skips null parameters (OpenAI defaults) and accepts n: 1 and a text response_format', () => {
    expect(toAnthropicRequest({ model: 'c', messages: [USER], n: 1, seed: null, response_format: { type: 'text' } })).toEqual({
      model: 'c',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      max_tokens: 4096,
    });
  });

  it.each([
    ['n', { n: 2 }, 'n'],
    ['logprobs', { logprobs: true }, 'logprobs'],
    ['top_logprobs', { top_logprobs: 2 }, 'top_logprobs'],
    ['frequency_penalty', { frequency_penalty: 0.5 }, 'frequency_penalty'],
    ['presence_penalty', { presence_penalty: 0.5 }, 'presence_penalty'],
    ['logit_bias', { logit_bias: { 1: 1 } }, 'logit_bias'],
    ['seed', { seed: 7 }, 'seed'],
    ['a json_schema response_format', { response_format: { type: 'json_schema', json_schema: {} } }, 'response_format.type'],
    ['audio', { modalities: ['audio'] }, 'modalities'],
    ['an unknown field', { frobnicate: true }, 'frobnicate'],
    ['a temperature above 1', { temperature: 1.5 }, 'temperature'],
    ['a non-function tool', { tools: [{ type: 'custom', custom: {} }] }, 'tools[0].type'],
    ['an audio input', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }, 'messages[0].content[0].type'],
  ])('refuses %s with a 400 naming the field and the provider', (_name, extra, param) => {
    expect(() => toAnthropicRequest({ model: 'c', messages: [USER], ...extra })).toThrow(
      expect.objectContaining({ status: 400, param, message: expect.stringContaining('anthropic') }),
    );
  });

  it.each([
    ['no model', { model: '' }, 'model'],
    ['no messages', { messages: [] }, 'messages'],
    ['an unknown role', { messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    ['tool arguments that are not JSON', { messages: [USER, { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{' } }] }] }, 'messages[1].tool_calls[0].function.arguments'],
    ['a tool message without tool_call_id', { messages: [USER, { role: 'tool', content: 'x' }] }, 'messages[1].tool_call_id'],
    ['an image URL of another scheme', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x' } }] }] }, 'messages[0].content[0].image_url.url'],
    ['max_tokens of zero', { max_tokens: 0 }, 'max_tokens'],
  ])('%s is a 400 naming the field', (_name, change, param) => {
    expect(() => toAnthropicRequest({ model: 'c', messages: [USER], ...change })).toThrow(expect.objectContaining({ status: 400, param }));
  });
});
