import { AnthropicMessageAssembler } from './anthropic-message-assembler';

/** Events as Anthropic streams them (data of each SSE event). */
const EVENTS = [
  {
    type: 'message_start',
    message: {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 12, cache_read_input_tokens: 200, cache_creation_input_tokens: 50, output_tokens: 1 },
    },
  },
  {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'echo', server_name: 'search', input: { text: 'ping' } },
  },
  { type: 'content_block_stop', index: 0 },
  {
    type: 'content_block_start',
    index: 1,
    content_block: { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: 'pong' }] },
  },
  { type: 'content_block_stop', index: 1 },
  { type: 'ping' },
  { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'It ' } },
  { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'said pong.' } },
  { type: 'content_block_stop', index: 2 },
  { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } },
  { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"loc' } },
  { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: 'ation": "Paris"}' } },
  { type: 'content_block_stop', index: 3 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 31 } },
  { type: 'message_stop' },
];

describe('AnthropicMessageAssembler', () => {
  it('rebuilds the message: MCP blocks as they came, text joined, tool input parsed, usage merged', () => {
    const assembler = new AnthropicMessageAssembler();
    const content = EVENTS.map((event) => assembler.add(event));
    expect(content.indexOf(true)).toBe(1); // the first block is the first content
    expect(assembler.message()).toEqual({
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      stop_reason: 'tool_use',
      stop_sequence: null,
      content: [
        EVENTS[1].content_block,
        EVENTS[3].content_block,
        { type: 'text', text: 'It said pong.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
      ],
      usage: { input_tokens: 12, cache_read_input_tokens: 200, cache_creation_input_tokens: 50, output_tokens: 31 },
    });
  });

  it('keeps the raw text of tool input cut off mid-stream', () => {
    const assembler = new AnthropicMessageAssembler();
    for (const event of EVENTS.slice(0, 12)) assembler.add(event);
    assembler.add({ type: 'content_block_stop', index: 3 });
    expect((assembler.message().content as any[])[3].input).toBe('{"loc');
  });
});
