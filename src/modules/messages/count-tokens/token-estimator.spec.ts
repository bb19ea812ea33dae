import { blockTokens, estimateInputTokens, IMAGE_TOKENS, MESSAGE_OVERHEAD, REPLY_PRIMING, textTokens, TOOL_OVERHEAD } from './token-estimator';

describe('token estimator', () => {
  it('counts text with o200k_base (the tokenizer of GPT-4o and later)', () => {
    // Known o200k_base counts: "Hello, world!" is Hello / , / world / ! .
    expect(textTokens('Hello, world!')).toBe(4);
    expect(textTokens('')).toBe(0);
    expect(textTokens('lorem ipsum dolor sit amet '.repeat(100))).toBeGreaterThan(400);
  });

  it('counts special-token text as text instead of refusing it', () => {
    expect(textTokens('hi <|endoftext|> there')).toBeGreaterThan(3);
  });

  it('adds the per-message overhead and the reply priming around the text', () => {
    const hello = textTokens('Say hello');
    expect(estimateInputTokens({ messages: [{ role: 'user', content: 'Say hello' }] })).toBe(REPLY_PRIMING + MESSAGE_OVERHEAD + hello);
    const two = estimateInputTokens({
      messages: [
        { role: 'user', content: 'Say hello' },
        { role: 'assistant', content: [{ type: 'text', text: 'Say hello' }] },
      ],
    });
    expect(two).toBe(REPLY_PRIMING + 2 * (MESSAGE_OVERHEAD + hello));
  });

  it('counts the system prompt (string or text blocks) as one more message', () => {
    const base = estimateInputTokens({ messages: [{ role: 'user', content: 'x' }] });
    const system = textTokens('You are terse.');
    expect(estimateInputTokens({ system: 'You are terse.', messages: [{ role: 'user', content: 'x' }] })).toBe(base + MESSAGE_OVERHEAD + system);
    expect(
      estimateInputTokens({
        system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).toBe(base + MESSAGE_OVERHEAD + system);
  });

  it('counts tool definitions as their JSON plus a per-tool overhead, without cache_control hints', () => {
    const tool = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };
    const base = estimateInputTokens({ messages: [] });
    expect(estimateInputTokens({ messages: [], tools: [tool] })).toBe(base + TOOL_OVERHEAD + textTokens(JSON.stringify(tool)));
    expect(estimateInputTokens({ messages: [], tools: [{ ...tool, cache_control: { type: 'ephemeral' } }] })).toBe(
      base + TOOL_OVERHEAD + textTokens(JSON.stringify(tool)),
    );
  });

  it('counts tool calls and results, images at a flat rate, and no earlier thinking', () => {
    expect(blockTokens({ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } })).toBe(
      textTokens('get_weather') + textTokens('{"city":"Paris"}'),
    );
    expect(blockTokens({ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Sunny' }] })).toBe(textTokens('Sunny'));
    expect(blockTokens({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' })).toBe(textTokens('Sunny'));
    expect(blockTokens({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } })).toBe(IMAGE_TOKENS);
    expect(blockTokens({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A plain document' } })).toBe(
      textTokens('A plain document'),
    );
    expect(blockTokens({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } })).toBe(IMAGE_TOKENS);
    expect(blockTokens({ type: 'thinking', thinking: 'Long private reasoning', signature: 'sig' })).toBe(0);
  });

  it('counts what it does not know as JSON and never throws on odd shapes', () => {
    const unknown = { type: 'future_block', payload: 'something new' };
    expect(blockTokens(unknown)).toBe(textTokens(JSON.stringify(unknown)));
    expect(() =>
      estimateInputTokens({ messages: [null, 5, 'text', { role: 'user' }, { content: { weird: true } }], system: 42, tools: [null, 'x'] }),
    ).not.toThrow();
    expect(estimateInputTokens({ messages: [null, 5] })).toBe(REPLY_PRIMING + 2 * MESSAGE_OVERHEAD + textTokens('5'));
  });
});
