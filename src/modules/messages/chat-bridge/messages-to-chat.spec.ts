import { GatewayError } from '../../../common/errors/gateway-error';
import { IgnoredParams } from '../../../providers/ignored-params';
import { messagesToChatBody, wantsThinking } from './messages-to-chat';

const HELLO = [{ role: 'user', content: 'Hi' }];
const request = (fields: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', max_tokens: 16, messages: HELLO, ...fields });
const messagesOf = (messages: unknown[], provider = 'openai') => messagesToChatBody(request({ messages }), provider).messages;

/** The GatewayError thrown by the translation, for its status, type, param and message. */
function refusal(fields: Record<string, unknown>, provider = 'openai'): GatewayError {
  try {
    messagesToChatBody(request(fields), provider);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('messagesToChatBody', () => {
  describe('request fields', () => {
    it('maps model, max_tokens, sampling, stop sequences, the end user and the system prompt', () => {
      const chat = messagesToChatBody(
        {
          model: 'gpt-4o-mini',
          max_tokens: 64,
          system: 'Be brief.',
          messages: [{ role: 'user', content: 'echo: bridged answer' }],
          temperature: 0.5,
          top_p: 0.9,
          stop_sequences: ['END', '###'],
          metadata: { user_id: 'bob' },
        },
        'openai',
      );
      expect(chat).toEqual({
        model: 'gpt-4o-mini',
        max_completion_tokens: 64,
        temperature: 0.5,
        top_p: 0.9,
        stop: ['END', '###'],
        user: 'bob',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'echo: bridged answer' },
        ],
      });
    });

    it('asks a stream for its usage; a request that does not stream says so and asks nothing more', () => {
      expect(messagesToChatBody(request({ stream: true }), 'openai')).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      const plain = messagesToChatBody(request({ stream: false }), 'openai');
      expect(plain.stream).toBe(false);
      expect(plain).not.toHaveProperty('stream_options');
    });

    it('joins system text blocks as paragraphs, without their cache_control', () => {
      const chat = messagesToChatBody(
        request({
          system: [
            { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'Answer in French.' },
          ],
        }),
        'openai',
      );
      expect(chat.messages[0]).toEqual({ role: 'system', content: 'Be brief.\n\nAnswer in French.' });
    });

    it('sends no system message for an empty system prompt, and no stop for an empty list', () => {
      for (const system of ['', []]) expect(messagesToChatBody(request({ system }), 'openai').messages).toEqual([{ role: 'user', content: 'Hi' }]);
      expect(messagesToChatBody(request({ stop_sequences: [] }), 'openai')).not.toHaveProperty('stop');
    });

    it('sends no user without a user_id, and skips null fields as absent', () => {
      const chat = messagesToChatBody(request({ metadata: {}, temperature: null, top_k: null, system: null }), 'openai');
      expect(chat).toEqual({ model: 'gpt-4o-mini', max_completion_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
    });

    it("sends OpenAI's own models max_completion_tokens (their reasoning models refuse max_tokens), other providers max_tokens", () => {
      expect(messagesToChatBody(request(), 'azure-openai')).toMatchObject({ max_completion_tokens: 16 });
      expect(messagesToChatBody(request(), 'google')).toMatchObject({ max_tokens: 16 });
      expect(messagesToChatBody(request(), 'groq')).not.toHaveProperty('max_completion_tokens');
    });

    it('drops what changes nothing for a chat provider and names it: cache_control, service_tier, context_management; thinking turned off and no MCP servers ask nothing', () => {
      const ignored = new IgnoredParams();
      const chat = messagesToChatBody(
        request({
          cache_control: { type: 'ephemeral' },
          service_tier: 'standard_only',
          context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
          thinking: { type: 'disabled' },
          mcp_servers: [],
        }),
        'google',
        ignored,
      );
      expect(chat).toEqual({ model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
      expect(ignored.list()).toEqual(['cache_control', 'service_tier', 'context_management']);
    });

    it('with strict_params, an ignored field is a 400 naming it', () => {
      const tool = { name: 'f', input_schema: { type: 'object' }, eager_input_streaming: true };
      expect(() => messagesToChatBody(request({ tools: [tool, tool] }), 'openai', new IgnoredParams(true))).toThrow(
        expect.objectContaining({
          status: 400,
          param: 'tools[0].eager_input_streaming',
          code: 'strict_params',
          message: expect.stringContaining('strict_params'),
        }),
      );
      const ignored = new IgnoredParams();
      const chat = messagesToChatBody(request({ tools: [tool, tool] }), 'openai', ignored);
      expect(chat.tools).toEqual([tool, tool].map(() => ({ type: 'function', function: { name: 'f', parameters: { type: 'object' } } })));
      expect(ignored.list()).toEqual(['tools[].eager_input_streaming']);
    });

    it('drops cache_control from every place it may be marked, and names each place once', () => {
      const ignored = new IgnoredParams();
      const chat = messagesToChatBody(
        {
          model: 'm',
          max_tokens: 1,
          cache_control: { type: 'ephemeral' },
          system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }],
          tools: [{ name: 'f', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral', ttl: '1h' } }],
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'Q', cache_control: { type: 'ephemeral' } }] },
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {}, cache_control: { type: 'ephemeral' } }] },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 't', content: 'r', cache_control: { type: 'ephemeral' } },
                { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' }, cache_control: { type: 'ephemeral' } },
              ],
            },
          ],
        },
        'openai',
        ignored,
      );
      expect(JSON.stringify(chat)).not.toContain('cache_control');
      expect(chat.messages).toHaveLength(5);
      expect(ignored.list()).toEqual(['cache_control', 'system[].cache_control', 'messages[].content[].cache_control', 'tools[].cache_control']);
    });
  });

  describe('thinking', () => {
    it.each([
      [1024, 'low'],
      [4095, 'low'],
      [4096, 'medium'],
      [16383, 'medium'],
      [16384, 'high'],
      [31999, 'high'],
      [128000, 'high'],
    ])('a budget of %i tokens is reasoning_effort %s', (budget, effort) => {
      expect(messagesToChatBody(request({ thinking: { type: 'enabled', budget_tokens: budget } }), 'openai').reasoning_effort).toBe(effort);
    });

    it('disabled and adaptive thinking send no level; output_config.effort is one, a budget wins over it', () => {
      expect(messagesToChatBody(request({ thinking: { type: 'disabled' } }), 'openai')).not.toHaveProperty('reasoning_effort');
      expect(messagesToChatBody(request({ thinking: { type: 'adaptive' } }), 'openai')).not.toHaveProperty('reasoning_effort');
      expect(messagesToChatBody(request({ output_config: { effort: 'low' } }), 'openai').reasoning_effort).toBe('low');
      expect(
        messagesToChatBody(request({ thinking: { type: 'enabled', budget_tokens: 20000 }, output_config: { effort: 'low' } }), 'openai').reasoning_effort,
      ).toBe('high');
    });

    it('the client wants thinking blocks back when thinking is enabled or adaptive', () => {
      expect(wantsThinking({ thinking: { type: 'enabled', budget_tokens: 1024 } })).toBe(true);
      expect(wantsThinking({ thinking: { type: 'adaptive' } })).toBe(true);
      expect(wantsThinking({ thinking: { type: 'disabled' } })).toBe(false);
      expect(wantsThinking({ thinking: { type: 'adaptive', display: 'omitted' } })).toBe(false);
      expect(wantsThinking({})).toBe(false);
    });

    it.each([
      [{ thinking: 'on' }, 'thinking'],
      [{ thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
      [{ thinking: { type: 'enabled', budget_tokens: '1024' } }, 'thinking.budget_tokens'],
      [{ thinking: { type: 'sometimes' } }, 'thinking.type'],
      [{ output_config: { effort: 'max' } }, 'output_config.effort'],
    ])('%j is a 400 naming %s', (fields, param) => {
      expect(refusal(fields)).toMatchObject({ status: 400, param });
    });
  });

  it('a deferred tool is left out and named; the end user past 64 characters goes as its SHA-256', () => {
    const ignored = new IgnoredParams();
    const userId = JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: '1cadc7bc-15d0-40b9-bee3-541c535dba01' });
    const chat = messagesToChatBody(
      request({
        metadata: { user_id: userId },
        tools: [
          { name: 'Bash', input_schema: { type: 'object' } },
          { name: 'DeferredToolPlaceholder', input_schema: { type: 'object' }, defer_loading: true },
        ],
      }),
      'openai',
      ignored,
    );
    expect(chat.tools).toEqual([{ type: 'function', function: { name: 'Bash', parameters: { type: 'object' } } }]);
    expect(chat.user).toMatch(/^[0-9a-f]{64}$/);
    expect(messagesToChatBody(request({ metadata: { user_id: userId } }), 'openai').user).toBe(chat.user);
    expect(ignored.list()).toEqual(['tools[].defer_loading']);
  });

  describe('mid-conversation system messages', () => {
    it('stay system messages at their place, text blocks joined', () => {
      const messages = messagesOf([
        HELLO[0],
        { role: 'assistant', content: 'Hello' },
        { role: 'system', content: [{ type: 'text', text: '<system-reminder>Plan mode is on.</system-reminder>' }] },
        { role: 'system', content: 'Second note.' },
        { role: 'user', content: 'Go on' },
      ]);
      expect(messages).toEqual([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
        { role: 'system', content: '<system-reminder>Plan mode is on.</system-reminder>' },
        { role: 'system', content: 'Second note.' },
        { role: 'user', content: 'Go on' },
      ]);
    });

    it.each([
      [[{ role: 'system', content: [{ type: 'image', source: {} }] }], 'messages[0].content[0]'],
      [[{ role: 'system', content: 5 }], 'messages[0].content'],
      [[{ role: 'narrator', content: 'x' }], 'messages[0].role'],
      [[null], 'messages[0]'],
      [[{ role: 'user', content: [null] }], 'messages[0].content[0].type'],
      [[{ role: 'user', content: 7 }], 'messages[0].content'],
      [[{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: 'x' }] }], 'messages[0].content[0].input'],
    ])('%j is a 400 naming %s', (messages, param) => {
      expect(refusal({ messages })).toMatchObject({ status: 400, param });
    });
  });

  describe('user turns', () => {
    it('a string, or a lone text block, is plain string content', () => {
      expect(messagesOf([{ role: 'user', content: 'echo: bridged answer' }])).toEqual([{ role: 'user', content: 'echo: bridged answer' }]);
      expect(messagesOf([{ role: 'user', content: [{ type: 'text', text: 'echo: bridged answer' }] }])).toEqual([
        { role: 'user', content: 'echo: bridged answer' },
      ]);
    });

    it('several blocks are content parts: text, base64 images as data URLs, URL images as they are', () => {
      const messages = messagesOf([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://x.test/a.jpg' } },
            { type: 'text', text: 'And this?' },
          ],
        },
      ]);
      expect(messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://x.test/a.jpg' } },
            { type: 'text', text: 'And this?' },
          ],
        },
      ]);
    });

    it('a lone image stays a content part', () => {
      expect(messagesOf([{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } }] }])).toEqual([
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] },
      ]);
    });

    it('tool results become tool messages, before the rest of the turn, whatever their place in it', () => {
      const messages = messagesOf([
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Be quick.' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: '18°C' },
                { type: 'text', text: 'sunny' },
              ],
            },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: '21°C' },
          ],
        },
      ]);
      expect(messages.slice(2)).toEqual([
        { role: 'tool', tool_call_id: 'toolu_1', content: '18°C\n\nsunny' },
        { role: 'tool', tool_call_id: 'toolu_2', content: '21°C' },
        { role: 'user', content: 'Be quick.' },
      ]);
    });

    it('a turn of tool results only is tool messages only; a result without content is empty text', () => {
      expect(messagesOf([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }] }])).toEqual([
        { role: 'tool', tool_call_id: 'toolu_1', content: '' },
      ]);
    });

    it('a failed tool call (is_error) says so in its text, chat having no flag for it', () => {
      expect(messagesOf([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'no such city', is_error: true }] }])).toEqual([
        { role: 'tool', tool_call_id: 't', content: 'Error: no such city' },
      ]);
      expect(messagesOf([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'fine', is_error: false }] }])[0].content).toBe('fine');
    });
  });

  describe('assistant turns', () => {
    it('text and tool_use blocks are one message: content and tool calls with JSON arguments', () => {
      const messages = messagesOf([
        HELLO[0],
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris', units: ['c'] } },
            { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
          ],
        },
      ]);
      expect(messages[1]).toEqual({
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris","units":["c"]}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '{}' } },
        ],
      });
    });

    it('tool calls alone have null content', () => {
      expect(messagesOf([HELLO[0], { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }] }])[1]).toEqual({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      });
    });

    it('string content stays a string; text blocks are joined as they are (Anthropic splits an answer around citations)', () => {
      expect(messagesOf([HELLO[0], { role: 'assistant', content: 'Hello!' }])[1]).toEqual({ role: 'assistant', content: 'Hello!' });
      const split = [
        { type: 'text', text: 'The grass is ' },
        { type: 'text', text: 'green', citations: [{ type: 'char_location', cited_text: 'green' }] },
        { type: 'text', text: '.' },
      ];
      expect(messagesOf([HELLO[0], { role: 'assistant', content: split }])[1]).toEqual({ role: 'assistant', content: 'The grass is green.' });
    });

    it('drops thinking and redacted thinking, and a turn left empty by that', () => {
      const messages = messagesOf([
        HELLO[0],
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Let me look', signature: 'sig' },
            { type: 'redacted_thinking', data: 'abc' },
            { type: 'text', text: 'Hello.' },
          ],
        },
        { role: 'user', content: 'Again' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm', signature: 'sig' }] },
        { role: 'user', content: 'Well?' },
      ]);
      expect(messages).toEqual([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'Again' },
        { role: 'user', content: 'Well?' },
      ]);
    });
  });

  describe('tools', () => {
    it('custom tools are function tools, with a description only when they have one', () => {
      const schema = { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] };
      const chat = messagesToChatBody(
        request({
          tools: [
            { name: 'get_weather', description: 'Weather by city', input_schema: schema },
            { type: 'custom', name: 'now', input_schema: { type: 'object' }, strict: true },
          ],
        }),
        'openai',
      );
      expect(chat.tools).toEqual([
        { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: schema } },
        { type: 'function', function: { name: 'now', parameters: { type: 'object' }, strict: true } },
      ]);
      expect(chat).not.toHaveProperty('tool_choice');
      expect(chat).not.toHaveProperty('parallel_tool_calls');
    });

    it.each([
      [{ type: 'auto' }, { tool_choice: 'auto' }],
      [{ type: 'any' }, { tool_choice: 'required' }],
      [{ type: 'none' }, { tool_choice: 'none' }],
      [{ type: 'tool', name: 'f' }, { tool_choice: { type: 'function', function: { name: 'f' } } }],
      [
        { type: 'auto', disable_parallel_tool_use: true },
        { tool_choice: 'auto', parallel_tool_calls: false },
      ],
      [
        { type: 'any', disable_parallel_tool_use: true },
        { tool_choice: 'required', parallel_tool_calls: false },
      ],
      [
        { type: 'tool', name: 'f', disable_parallel_tool_use: true },
        { tool_choice: { type: 'function', function: { name: 'f' } }, parallel_tool_calls: false },
      ],
      [{ type: 'auto', disable_parallel_tool_use: false }, { tool_choice: 'auto' }],
      [{ type: 'none', disable_parallel_tool_use: true }, { tool_choice: 'none' }],
    ])('tool_choice %j is %j', (choice, expected) => {
      const chat = messagesToChatBody(request({ tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: choice }), 'openai');
      const { tool_choice, parallel_tool_calls } = chat;
      expect({ tool_choice, ...(parallel_tool_calls !== undefined ? { parallel_tool_calls } : {}) }).toEqual(expected);
    });

    it('sends no tools, tool_choice or parallel_tool_calls without tools (OpenAI refuses them)', () => {
      const chat = messagesToChatBody(request({ tools: [], tool_choice: { type: 'auto', disable_parallel_tool_use: true } }), 'openai');
      expect(chat).toEqual({ model: 'gpt-4o-mini', max_completion_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
    });
  });

  describe('refusals: 400 naming the field and the provider', () => {
    it('mcp_servers needs the MCP connector', () => {
      const error = refusal({ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'a' }] });
      expect(error).toMatchObject({
        status: 400,
        type: 'invalid_request_error',
        param: 'mcp_servers',
        message: "mcp_servers needs a provider with Anthropic's MCP connector; provider openai has none",
      });
    });

    it.each([
      ['top_k', { top_k: 5 }, 'top_k', 'top_k'],
      ['a container', { container: 'container_abc' }, 'container', 'container'],
      ['structured output', { output_config: { format: { type: 'json_schema', schema: {} } } }, 'output_config.format', 'output_config.format'],
      ['an unknown field', { frequency_penalty: 1 }, 'frequency_penalty', 'frequency_penalty'],
      [
        'the web search server tool',
        { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] },
        'tools[0].type',
        'the server tool "web_search_20250305" (tools[0].type)',
      ],
      [
        'the bash server tool',
        {
          tools: [
            { name: 'f', input_schema: {} },
            { type: 'bash_20250124', name: 'bash' },
          ],
        },
        'tools[1].type',
        'the server tool "bash_20250124" (tools[1].type)',
      ],
      [
        'the text editor server tool',
        { tools: [{ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }] },
        'tools[0].type',
        'text_editor_20250728',
      ],
      [
        'a tool field chat has no place for',
        { tools: [{ name: 'f', input_schema: {}, input_examples: [{}] }] },
        'tools[0].input_examples',
        'tools[0].input_examples',
      ],
      [
        'a document block',
        {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Sum up' },
                { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } },
              ],
            },
          ],
        },
        'messages[0].content[1].type',
        'the block type "document" in a user turn (messages[0].content[1].type)',
      ],
      [
        'a search_result block',
        { messages: [{ role: 'user', content: [{ type: 'search_result', source: 'https://x', title: 't', content: [{ type: 'text', text: 'r' }] }] }] },
        'messages[0].content[0].type',
        'the block type "search_result" in a user turn',
      ],
      [
        'an image from the Files API',
        { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] },
        'messages[0].content[0].source.type',
        'the image source type "file" (messages[0].content[0].source.type)',
      ],
      [
        'an image in a tool result',
        {
          messages: [
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }] }] },
          ],
        },
        'messages[0].content[0].content[0].type',
        'the block type "image" in a tool result (messages[0].content[0].content[0].type)',
      ],
      [
        'a tool_use block in a user turn',
        { messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }] },
        'messages[0].content[0].type',
        'the block type "tool_use" in a user turn',
      ],
      [
        'a thinking block in a user turn',
        { messages: [{ role: 'user', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }] },
        'messages[0].content[0].type',
        'the block type "thinking" in a user turn',
      ],
      [
        'a tool_result block in an assistant turn',
        { messages: [HELLO[0], { role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }] },
        'messages[1].content[0].type',
        'the block type "tool_result" in an assistant turn',
      ],
      [
        'an image in an assistant turn',
        { messages: [HELLO[0], { role: 'assistant', content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }] }] },
        'messages[1].content[0].type',
        'the block type "image" in an assistant turn',
      ],
      [
        'a server tool call in an assistant turn',
        { messages: [HELLO[0], { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }] }] },
        'messages[1].content[0].type',
        'the block type "server_tool_use" in an assistant turn',
      ],
    ])('%s', (_name, fields, param, what) => {
      const error = refusal(fields, 'google');
      expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', param });
      expect(error.message).toContain(what);
      expect(error.message).toContain("needs a provider that speaks Anthropic's Messages API; provider google is reached through chat completions");
    });
  });

  describe('malformed parts: 400 naming the field', () => {
    it.each([
      ['a system block that is not text', { system: [{ type: 'image', source: {} }] }, 'system[0]'],
      ['a text block without text', { messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text'],
      ['a tool without a name', { tools: [{ input_schema: { type: 'object' } }] }, 'tools[0].name'],
      ['a tool without an input schema', { tools: [{ name: 'f' }] }, 'tools[0].input_schema'],
      ['a tool that is not an object', { tools: ['f'] }, 'tools[0]'],
      ['tool_choice of an unknown type', { tools: [{ name: 'f', input_schema: {} }], tool_choice: { type: 'some' } }, 'tool_choice.type'],
      ['tool_choice tool without a name', { tools: [{ name: 'f', input_schema: {} }], tool_choice: { type: 'tool' } }, 'tool_choice.name'],
      [
        'a tool result without tool_use_id',
        { messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] },
        'messages[0].content[0].tool_use_id',
      ],
      [
        'a tool result with object content',
        { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: { text: 'x' } }] }] },
        'messages[0].content[0].content',
      ],
      [
        'a tool_use without an id',
        { messages: [HELLO[0], { role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] }] },
        'messages[1].content[0]',
      ],
      [
        'a base64 image without data',
        { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }] }] },
        'messages[0].content[0].source',
      ],
      [
        'a URL image without a URL',
        { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url' } }] }] },
        'messages[0].content[0].source.url',
      ],
    ])('%s', (_name, fields, param) => {
      expect(refusal(fields)).toMatchObject({ status: 400, type: 'invalid_request_error', param });
    });
  });
});
