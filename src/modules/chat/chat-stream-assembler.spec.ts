import { ChatStreamAssembler } from './chat-stream-assembler';

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, delta, finish_reason: null }],
  ...extra,
});

describe('ChatStreamAssembler', () => {
  it('assembles content, finish reason and usage, and reports which chunks carried content', () => {
    const assembler = new ChatStreamAssembler();
    expect(assembler.add(chunk({ role: 'assistant', content: '' }))).toBe(false);
    expect(assembler.add(chunk({ content: 'Hel' }))).toBe(true);
    expect(assembler.add(chunk({ content: 'lo' }))).toBe(true);
    assembler.add({ ...chunk({}), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    assembler.add({
      ...chunk({}),
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, prompt_tokens_details: { cached_tokens: 3 } },
    });

    expect(assembler.result()).toMatchObject({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
    });
    expect(assembler.usage).toEqual({ promptTokens: 7, completionTokens: 2, totalTokens: 9, cachedTokens: 3, cacheWriteTokens: 0, reasoningTokens: 0 });
  });

  it('joins streamed tool call fragments by index', () => {
    const assembler = new ChatStreamAssembler();
    assembler.add(
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
    );
    assembler.add(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] }));
    assembler.add(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    const message = (assembler.result().choices as any[])[0].message;
    expect(message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }]);
    expect(JSON.parse(message.tool_calls[0].function.arguments)).toEqual({ location: 'Paris' });
  });

  it('keeps choices apart when n > 1', () => {
    const assembler = new ChatStreamAssembler();
    assembler.add({
      choices: [
        { index: 1, delta: { content: 'B' } },
        { index: 0, delta: { content: 'A' } },
      ],
    });
    expect((assembler.result().choices as any[]).map((c) => c.message.content)).toEqual(['A', 'B']);
  });
});
