import { ChatStreamAssembler } from '../chat/chat-stream-assembler';
import { AnthropicMessageAssembler } from '../messages/anthropic-message-assembler';
import { CHAT_TOOLS } from '../chat/chat-dialect';
import { MESSAGES_TOOLS } from '../messages/messages-dialect';
import { RESPONSES_TOOLS } from '../responses/responses-dialect';
import { modelToolName, resultText, type OfferedTool } from './tool-dialects';

const TOOL: OfferedTool = {
  name: 'docs__search',
  server: 'docs',
  tool: 'search',
  description: 'Search the docs',
  inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
};

/** The data of each SSE frame, parsed (`[DONE]` left out). */
const dataOf = (frames: string[]) =>
  frames
    .map((frame) =>
      frame
        .split('\n')
        .find((line) => line.startsWith('data: '))!
        .slice(6),
    )
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data) as Record<string, unknown>);

describe('chat completions tool dialect', () => {
  const answer = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-x',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'docs__search', arguments: '{"query":"refunds"}' } },
            { id: 'call_2', type: 'function', function: { name: 'client_tool', arguments: '{not json' } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  };

  it('adds the tools after the client own, in the function shape', () => {
    const body = CHAT_TOOLS.withTools({ tools: [{ type: 'function', function: { name: 'client_tool', parameters: {} } }] }, [TOOL]);
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'client_tool', parameters: {} } },
      { type: 'function', function: { name: 'docs__search', description: 'Search the docs', parameters: TOOL.inputSchema } },
    ]);
    expect(CHAT_TOOLS.clientToolNames({ tools: [{ type: 'function', function: { name: 'client_tool' } }] })).toEqual(['client_tool']);
  });

  it('reads the calls, with arguments that are not JSON named as such', () => {
    const calls = CHAT_TOOLS.toolCalls(answer);
    expect(calls[0]).toEqual({ id: 'call_1', name: 'docs__search', arguments: { query: 'refunds' } });
    expect(calls[1].argumentsError).toContain('not valid JSON');
  });

  it('continues with the assistant turn and one tool message per result', () => {
    const next = CHAT_TOOLS.continued({ messages: [{ role: 'user', content: 'hi' }] }, answer, [
      { call: CHAT_TOOLS.toolCalls(answer)[0], text: 'found it', isError: false },
    ]);
    expect(next.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: answer.choices[0].message.tool_calls },
      { role: 'tool', tool_call_id: 'call_1', content: 'found it' },
    ]);
  });

  it('leaves MCP calls out and renders the answer as chunks the assembler rebuilds', () => {
    const without = CHAT_TOOLS.withoutCalls(answer, new Set(['call_1'])) as typeof answer;
    expect(without.choices[0].message.tool_calls.map((call) => call.id)).toEqual(['call_2']);
    const assembler = new ChatStreamAssembler();
    const frames = CHAT_TOOLS.frames(without, { stream_options: { include_usage: true } });
    expect(frames[frames.length - 1]).toBe('data: [DONE]\n\n');
    for (const chunk of dataOf(frames)) assembler.add(chunk);
    const rebuilt = assembler.result() as typeof answer;
    expect(rebuilt.choices[0].message.tool_calls).toEqual([
      expect.objectContaining({ id: 'call_2', function: { name: 'client_tool', arguments: '{not json' } }),
    ]);
    expect(rebuilt.choices[0].finish_reason).toBe('tool_calls');
    expect(assembler.usage?.totalTokens).toBe(7);
    // No usage chunk unless the client asked for one.
    expect(dataOf(CHAT_TOOLS.frames(without, {})).some((chunk) => chunk.usage)).toBe(false);
  });
});

describe('messages tool dialect', () => {
  const answer = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: [
      { type: 'thinking', thinking: 'let me look', signature: 'sig' },
      { type: 'text', text: 'Looking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'docs__search', input: { query: 'refunds' } },
      { type: 'tool_use', id: 'toolu_2', name: 'client_tool', input: {} },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 9 },
  };

  it('offers tools with input_schema and reads tool_use blocks', () => {
    expect(MESSAGES_TOOLS.withTools({}, [TOOL]).tools).toEqual([{ name: 'docs__search', description: 'Search the docs', input_schema: TOOL.inputSchema }]);
    expect(MESSAGES_TOOLS.toolCalls(answer).map((call) => [call.id, call.name, call.arguments])).toEqual([
      ['toolu_1', 'docs__search', { query: 'refunds' }],
      ['toolu_2', 'client_tool', {}],
    ]);
  });

  it('continues with the whole assistant turn (thinking kept) and tool_result blocks, errors flagged', () => {
    const [call] = MESSAGES_TOOLS.toolCalls(answer);
    const next = MESSAGES_TOOLS.continued({ messages: [{ role: 'user', content: 'hi' }] }, answer, [{ call, text: 'Error: down', isError: true }]);
    expect(next.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: answer.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Error: down', is_error: true }] },
    ]);
  });

  it('renders the answer as events the assembler rebuilds', () => {
    const without = MESSAGES_TOOLS.withoutCalls(answer, new Set(['toolu_1']));
    const assembler = new AnthropicMessageAssembler();
    for (const event of dataOf(MESSAGES_TOOLS.frames(without, {}))) assembler.add(event);
    expect(assembler.message()).toMatchObject({
      id: 'msg_1',
      content: [answer.content[0], answer.content[1], answer.content[3]],
      stop_reason: 'tool_use',
    });
  });
});

describe('responses tool dialect', () => {
  const answer = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    output: [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Looking.', annotations: [] }] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'docs__search', arguments: '{"query":"refunds"}', status: 'completed' },
    ],
  };

  it('offers function tools, reads function_call items, continues with the items and their outputs', () => {
    expect(RESPONSES_TOOLS.withTools({}, [TOOL]).tools).toEqual([
      { type: 'function', name: 'docs__search', description: 'Search the docs', parameters: TOOL.inputSchema, strict: false },
    ]);
    const calls = RESPONSES_TOOLS.toolCalls(answer);
    expect(calls).toEqual([{ id: 'call_1', name: 'docs__search', arguments: { query: 'refunds' } }]);
    const next = RESPONSES_TOOLS.continued({ input: 'hi' }, answer, [{ call: calls[0], text: 'found', isError: false }]);
    expect(next.input).toEqual([
      { type: 'message', role: 'user', content: 'hi' },
      answer.output[1],
      answer.output[2],
      { type: 'function_call_output', call_id: 'call_1', output: 'found' },
    ]);
  });

  it('renders typed events ending with response.completed, numbered in order', () => {
    const events = dataOf(RESPONSES_TOOLS.frames(answer, {}));
    expect(events[0].type).toBe('response.created');
    expect(events[events.length - 1]).toMatchObject({ type: 'response.completed', response: answer });
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta)).toEqual(['Looking.']);
    expect(events.find((event) => event.type === 'response.function_call_arguments.done')).toMatchObject({ arguments: '{"query":"refunds"}', output_index: 2 });
  });
});

describe('MCP tool names and results', () => {
  it('names a tool {slug}__{tool} in the characters every vendor accepts, hashing what is too long', () => {
    expect(modelToolName('internal-docs', 'search.docs')).toBe('internal-docs__search_docs');
    const long = modelToolName('a'.repeat(40), 'b'.repeat(40));
    expect(long).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(long).not.toBe(modelToolName('a'.repeat(40), `${'b'.repeat(39)}c`));
  });

  it('reads text blocks, names other blocks, falls back to structured content', () => {
    expect(
      resultText({
        content: [
          { type: 'text', text: 'one' },
          { type: 'image', data: 'x', mimeType: 'image/png' },
        ],
      }),
    ).toBe('one\n[image image/png]');
    expect(resultText({ content: [], structuredContent: { sum: 3 } })).toBe('{"sum":3}');
  });
});
