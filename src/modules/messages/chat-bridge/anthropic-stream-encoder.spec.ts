import { createParser } from 'eventsource-parser';
import type { ChatCompletionChunk, ChatDelta, ChatToolCallDelta, ChatUsage } from '../../../providers/chat-format';
import { OpenAIChatStreamDecoder } from '../../../providers/openai/chat-stream-decoder';
import { AnthropicMessageAssembler } from '../anthropic-message-assembler';
import { AnthropicStreamEncoder } from './anthropic-stream-encoder';

// Chunks as OpenAI streams them with stream_options.include_usage: `usage: null` on every chunk but the last.
const envelope = {
  id: 'chatcmpl-BxQ4pL2',
  object: 'chat.completion.chunk' as const,
  created: 1753000000,
  model: 'gpt-4o-mini-2024-07-18',
  service_tier: 'default',
  system_fingerprint: 'fp_34a54ae93c',
  usage: null,
};
const chunk = (delta: ChatDelta, finish_reason: string | null = null): ChatCompletionChunk => ({
  ...envelope,
  choices: [{ index: 0, delta, logprobs: null, finish_reason }],
});
const usageChunk = (usage: ChatUsage): ChatCompletionChunk => ({ ...envelope, choices: [], usage });
const USAGE = {
  prompt_tokens: 19,
  completion_tokens: 10,
  total_tokens: 29,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};
const ROLE = chunk({ role: 'assistant', content: '', refusal: null });
const toolStart = (index: number, id: string, name: string) => chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
const args = (index: number, fragment: string) => chunk({ tool_calls: [{ index, function: { arguments: fragment } }] });

/**
 * Streams the chunks the way the relay does: as OpenAI's SSE wire text (ending `[DONE]`),
 * cut in small pieces, through the OpenAI decoder; the encoder finishes when the decoder
 * is complete. Returns the frames' text and the encoder.
 */
function stream(chunks: ChatCompletionChunk[], model = 'gpt-4o-mini', thinking = false): { wire: string; encoder: AnthropicStreamEncoder } {
  const encoder = new AnthropicStreamEncoder(model, thinking);
  const decoder = new OpenAIChatStreamDecoder();
  const frames: string[] = [];
  const parser = createParser({
    onEvent: (event) => {
      for (const decoded of decoder.onEvent(event)) frames.push(...encoder.onChunk(decoded));
      if (decoder.isComplete()) frames.push(...encoder.finish());
    },
  });
  const upstream = [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'].join('');
  for (let offset = 0; offset < upstream.length; offset += 61) parser.feed(upstream.slice(offset, offset + 61));
  return { wire: frames.join(''), encoder };
}

/** The events of Anthropic SSE text, parsed as a client does; each event name must be its data's type. */
function events(wire: string): Record<string, any>[] {
  const out: Record<string, any>[] = [];
  const parser = createParser({
    onEvent: (event) => {
      const data = JSON.parse(event.data);
      expect(event.event).toBe(data.type);
      out.push(data);
    },
  });
  parser.feed(wire);
  return out;
}

/** What an Anthropic client assembles from the events. */
function assembled(wire: string): Record<string, unknown> {
  const assembler = new AnthropicMessageAssembler();
  for (const event of events(wire)) assembler.add(event);
  return assembler.message();
}

const MESSAGE_START = {
  type: 'message_start',
  message: {
    id: 'msg_BxQ4pL2',
    type: 'message',
    role: 'assistant',
    model: 'gpt-4o-mini-2024-07-18',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0 },
  },
};

describe('AnthropicStreamEncoder', () => {
  it('a text stream: message_start, one text block with a delta per chunk, message_delta with the usage, message_stop', () => {
    const { wire, encoder } = stream([
      ROLE,
      chunk({ content: 'Hello' }),
      chunk({ content: '!' }),
      chunk({ content: ' How can I help?' }),
      chunk({}, 'stop'),
      usageChunk(USAGE),
    ]);
    expect(events(wire)).toEqual([
      MESSAGE_START,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '!' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' How can I help?' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { input_tokens: 19, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 10 },
      },
      { type: 'message_stop' },
    ]);
    expect(encoder.message()).toEqual({
      id: 'msg_BxQ4pL2',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-mini-2024-07-18',
      content: [{ type: 'text', text: 'Hello! How can I help?' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 19, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 10 },
    });
    expect(assembled(wire)).toEqual(encoder.message());
  });

  it('writes frames as Anthropic does: a named event, one data line of JSON, a blank line', () => {
    const { wire } = stream([ROLE, chunk({ content: 'Hi' }), chunk({}, 'stop'), usageChunk(USAGE)]);
    expect(wire.split('\n\n').slice(1, 4)).toEqual([
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}',
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}',
    ]);
    expect(wire.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
  });

  it('a tool call stream: a tool_use block with empty input, then each argument fragment as input_json_delta', () => {
    const { wire, encoder } = stream([
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', type: 'function', function: { name: 'get_weather', arguments: '' } }],
        refusal: null,
      }),
      args(0, '{"'),
      args(0, 'location'),
      args(0, '":"'),
      args(0, 'Paris'),
      args(0, '"}'),
      chunk({}, 'tool_calls'),
      usageChunk({ ...USAGE, prompt_tokens: 82, completion_tokens: 16, total_tokens: 98 }),
    ]);
    expect(events(wire)).toEqual([
      MESSAGE_START,
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'location' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '":"' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'Paris' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"}' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 82, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 16 },
      },
      { type: 'message_stop' },
    ]);
    expect(encoder.message().content).toEqual([{ type: 'tool_use', id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', input: { location: 'Paris' } }]);
    expect(assembled(wire)).toEqual(encoder.message());
  });

  it('text then two parallel tool calls: a block each, closed before the next opens, counted from 0', () => {
    const { wire, encoder } = stream([
      ROLE,
      chunk({ content: 'Checking ' }),
      chunk({ content: 'both.' }),
      toolStart(0, 'call_a', 'get_weather'),
      args(0, '{"location": "Par'),
      args(0, 'is"}'),
      toolStart(1, 'call_b', 'get_weather'),
      args(1, '{"location": "Rome"}'),
      chunk({}, 'tool_calls'),
      usageChunk(USAGE),
    ]);
    const out = events(wire);
    expect(out.map((e) => [e.type, e.index ?? null, e.content_block?.type ?? e.delta?.type ?? null])).toEqual([
      ['message_start', null, null],
      ['content_block_start', 0, 'text'],
      ['content_block_delta', 0, 'text_delta'],
      ['content_block_delta', 0, 'text_delta'],
      ['content_block_stop', 0, null],
      ['content_block_start', 1, 'tool_use'],
      ['content_block_delta', 1, 'input_json_delta'],
      ['content_block_delta', 1, 'input_json_delta'],
      ['content_block_stop', 1, null],
      ['content_block_start', 2, 'tool_use'],
      ['content_block_delta', 2, 'input_json_delta'],
      ['content_block_stop', 2, null],
      ['message_delta', null, null],
      ['message_stop', null, null],
    ]);
    expect(out[9].content_block).toEqual({ type: 'tool_use', id: 'call_b', name: 'get_weather', input: {} });
    expect(encoder.message()).toMatchObject({
      content: [
        { type: 'text', text: 'Checking both.' },
        { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { location: 'Paris' } },
        { type: 'tool_use', id: 'call_b', name: 'get_weather', input: { location: 'Rome' } },
      ],
      stop_reason: 'tool_use',
    });
    expect(assembled(wire)).toEqual(encoder.message());
  });

  it('a whole tool call in one delta, and text after a tool call in a block of its own', () => {
    const { wire, encoder } = stream([
      ROLE,
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'now', arguments: '{}' } }] }),
      chunk({ content: 'Done.' }),
      chunk({}, 'stop'),
    ]);
    expect(
      events(wire)
        .filter((e) => e.type === 'content_block_start')
        .map((e) => [e.index, e.content_block.type]),
    ).toEqual([
      [0, 'tool_use'],
      [1, 'text'],
    ]);
    expect(encoder.message().content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'now', input: {} },
      { type: 'text', text: 'Done.' },
    ]);
    // Tool calls ended with `stop` (some OpenAI-compatible servers) still ask the client to run them.
    expect(encoder.message().stop_reason).toBe('tool_use');
    expect(assembled(wire)).toEqual(encoder.message());
  });

  it('tool calls from a server that leaves index out are told apart by their ids', () => {
    const noIndex = (call: Omit<ChatToolCallDelta, 'index'>) => call as ChatToolCallDelta;
    const { encoder } = stream([
      chunk({ tool_calls: [noIndex({ id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":' } })] }),
      chunk({ tool_calls: [noIndex({ function: { arguments: '1}' } })] }),
      chunk({ tool_calls: [noIndex({ id: 'call_2', type: 'function', function: { name: 'b', arguments: '{}' } })] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(encoder.message().content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'a', input: { x: 1 } },
      { type: 'tool_use', id: 'call_2', name: 'b', input: {} },
    ]);
  });

  it('a tool call without an id gets one in Anthropic style', () => {
    const { encoder } = stream([chunk({ tool_calls: [{ index: 0, function: { name: 'a', arguments: '{}' } }] }), chunk({}, 'tool_calls')]);
    expect(encoder.message()).toMatchObject({ content: [{ id: expect.stringMatching(/^toolu_[0-9a-f]{24}$/) }] });
  });

  it('a usage chunk with cache reads: input_tokens leave them out, message_delta carries all counts', () => {
    const usage = { ...USAGE, prompt_tokens: 2100, completion_tokens: 40, total_tokens: 2140, prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 } };
    const { wire, encoder } = stream([ROLE, chunk({ content: 'ok' }), chunk({}, 'stop'), usageChunk(usage)]);
    const counts = { input_tokens: 180, cache_creation_input_tokens: 0, cache_read_input_tokens: 1920, output_tokens: 40 };
    expect(events(wire).find((e) => e.type === 'message_delta')!.usage).toEqual(counts);
    expect(encoder.message().usage).toEqual(counts);
  });

  it('takes usage from whichever chunk carries it, the last one winning (servers that send it with the finish)', () => {
    const { encoder } = stream([
      chunk({ content: 'ok' }),
      {
        ...chunk({}, 'stop'),
        usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 5 } },
      },
    ]);
    expect(encoder.message().usage).toEqual({ input_tokens: 2, cache_creation_input_tokens: 5, cache_read_input_tokens: 0, output_tokens: 2 });
  });

  it('without a usage chunk, the counts are zero', () => {
    const { encoder } = stream([chunk({ content: 'ok' }), chunk({}, 'stop')]);
    expect(encoder.message().usage).toEqual({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 });
  });

  it.each([
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    [null, 'end_turn'],
  ])('finish reason %s ends the message with %s', (finish, stop) => {
    const { wire } = stream([chunk({ content: 'cut' }), chunk({}, finish)]);
    expect(events(wire).find((e) => e.type === 'message_delta')!.delta).toEqual({ stop_reason: stop, stop_sequence: null });
  });

  it('a refusal streams as text and ends the message as a refusal', () => {
    const { wire, encoder } = stream([
      chunk({ role: 'assistant', content: null, refusal: '' }),
      chunk({ refusal: "I'm sorry," }),
      chunk({ refusal: " I can't help." }),
      chunk({}, 'stop'),
    ]);
    expect(encoder.message()).toMatchObject({ content: [{ type: 'text', text: "I'm sorry, I can't help." }], stop_reason: 'refusal' });
    expect(assembled(wire)).toEqual(encoder.message());
  });

  it('with thinking asked for, reasoning text (reasoning_content or reasoning) streams as a thinking block of thinking_deltas before the text', () => {
    const { wire, encoder } = stream(
      [ROLE, chunk({ reasoning_content: 'Let me ' }), chunk({ reasoning: 'think.' }), chunk({ content: 'Hi' }), chunk({}, 'stop')],
      'deepseek-reasoner',
      true,
    );
    const all = events(wire);
    expect(all.filter((e) => e.type === 'content_block_start' || e.type === 'content_block_delta' || e.type === 'content_block_stop')).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 1 },
    ]);
    expect(encoder.message().content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: '' },
      { type: 'text', text: 'Hi' },
    ]);
    expect(assembled(wire)).toEqual(encoder.message());
  });

  it('without thinking asked for, ignores reasoning text streamed apart and empty deltas: no block for them', () => {
    const { wire } = stream([ROLE, chunk({ reasoning_content: 'Thinking…' }), chunk({ content: '' }), chunk({ content: 'Hi' }), chunk({}, 'stop')]);
    expect(events(wire).filter((e) => e.type === 'content_block_start')).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ]);
  });

  it('a stream with no chunk still opens with message_start, under the requested model', () => {
    const encoder = new AnthropicStreamEncoder('gpt-4o-mini');
    const out = events(encoder.finish().join(''));
    expect(out.map((e) => e.type)).toEqual(['message_start', 'message_delta', 'message_stop']);
    expect(out[0].message).toMatchObject({ id: expect.stringMatching(/^msg_[0-9a-f]{24}$/), model: 'gpt-4o-mini', content: [] });
    expect(out[1].delta.stop_reason).toBe('end_turn');
    expect(encoder.message()).toMatchObject({ model: 'gpt-4o-mini', content: [], stop_reason: 'end_turn' });
  });

  it('uses the requested model when the chunks name none', () => {
    const nameless = { id: 'chatcmpl-1', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'stop' }] } as unknown as ChatCompletionChunk;
    const { encoder } = stream([nameless], 'my-model');
    expect(encoder.message()).toMatchObject({ id: 'msg_1', model: 'my-model' });
  });

  it('emits message_start once, on the first chunk, even a usage-only one', () => {
    const encoder = new AnthropicStreamEncoder('m');
    expect(events(encoder.onChunk(usageChunk(USAGE)).join('')).map((e) => e.type)).toEqual(['message_start']);
    expect(encoder.onChunk(ROLE)).toEqual([]);
  });

  it('finishes once: nothing after the end', () => {
    const encoder = new AnthropicStreamEncoder('m');
    encoder.onChunk(chunk({ content: 'x' }));
    expect(encoder.finish()).toHaveLength(3);
    expect(encoder.finish()).toEqual([]);
    expect(encoder.onChunk(chunk({ content: 'late' }))).toEqual([]);
    expect(encoder.message().content).toEqual([{ type: 'text', text: 'x' }]);
  });

  it('message() mid-stream is the message so far', () => {
    const encoder = new AnthropicStreamEncoder('m');
    encoder.onChunk(ROLE);
    encoder.onChunk(chunk({ content: 'Hel' }));
    expect(encoder.message()).toMatchObject({ id: 'msg_BxQ4pL2', content: [{ type: 'text', text: 'Hel' }], stop_reason: null });
  });
});
