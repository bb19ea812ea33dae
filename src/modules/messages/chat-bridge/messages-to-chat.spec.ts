import { messagesToChatBody } from './messages-to-chat';

const HELLO = [{ role: 'user', content: 'Hi' }];

describe('Messages requests as OpenAI chat bodies', () => {
  it('maps system, limits, sampling, stop sequences, the end user, and asks a stream for its usage', () => {
    const chat = messagesToChatBody(
      {
        model: 'gpt-4o-mini',
        max_tokens: 64,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Use French.' }],
        messages: HELLO,
        temperature: 0.5,
        top_p: 0.9,
        stop_sequences: ['END'],
        metadata: { user_id: 'bob' },
        stream: true,
      },
      'openai',
    );
    expect(chat).toEqual({
      model: 'gpt-4o-mini',
      max_tokens: 64,
      temperature: 0.5,
      top_p: 0.9,
      stop: ['END'],
      user: 'bob',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.\n\nUse French.' },
        { role: 'user', content: 'Hi' },
      ],
    });
  });

  it('turns tool_use into tool calls and tool_result blocks into tool messages placed before the rest of the turn', () => {
    const chat = messagesToChatBody(
      {
        model: 'm',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Let me look', signature: 'sig' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'And hurry.' },
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18°C' }] },
              { type: 'tool_result', tool_use_id: 'toolu_2', content: 'no such city', is_error: true },
            ],
          },
        ],
      },
      'openai',
    );
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: no such city' },
      { role: 'user', content: 'And hurry.' },
    ]);
  });

  it('maps images, tools and tool_choice', () => {
    const chat = messagesToChatBody(
      {
        model: 'm',
        max_tokens: 10,
        tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } }, { type: 'custom', name: 'now', input_schema: { type: 'object' } }],
        tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
              { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
            ],
          },
        ],
      },
      'google',
    );
    expect(chat.messages[0].content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
    ]);
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'now', parameters: { type: 'object' } } },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(chat.parallel_tool_calls).toBe(false);
  });

  it.each([
    [{ type: 'auto' }, 'auto'],
    [{ type: 'any' }, 'required'],
    [{ type: 'none' }, 'none'],
  ])('tool_choice %j is %j', (choice, expected) => {
    expect(messagesToChatBody({ model: 'm', max_tokens: 1, messages: HELLO, tool_choice: choice }, 'openai').tool_choice).toBe(expected);
  });

  it('accepts thinking when it is disabled', () => {
    expect(messagesToChatBody({ model: 'm', max_tokens: 1, messages: HELLO, thinking: { type: 'disabled' } }, 'openai')).not.toHaveProperty('thinking');
  });

  it.each([
    ['mcp_servers', { mcp_servers: [{ type: 'url', url: 'https://a', name: 'a' }] }, 'mcp_servers', /MCP connector; provider openai has none/],
    ['top_k', { top_k: 5 }, 'top_k', /openai/],
    ['extended thinking', { thinking: { type: 'enabled', budget_tokens: 1024 } }, 'thinking', /thinking/],
    ['a server tool', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0].type', /server tool/],
    ['a document block', { messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }, 'messages[0].content[0].type', /document/],
    ['an unknown field', { container: 'c' }, 'container', /container/],
    ['an image in an assistant turn', { messages: [HELLO[0], { role: 'assistant', content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }] }] }, 'messages[1].content[0].type', /assistant/],
  ])('refuses %s with a 400 naming the field', (_name, change, param, message) => {
    expect(() => messagesToChatBody({ model: 'm', max_tokens: 1, messages: HELLO, ...change }, 'openai')).toThrow(expect.objectContaining({ status: 400, param, message: expect.stringMatching(message) }));
  });
});
