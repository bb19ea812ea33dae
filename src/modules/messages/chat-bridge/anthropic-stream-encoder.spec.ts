import { createParser } from 'eventsource-parser';
import { AnthropicMessageAssembler } from '../anthropic-message-assembler';
import { AnthropicStreamEncoder } from './anthropic-stream-encoder';

const base = { id: 'chatcmpl-xyz', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18' };
const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason }] });
const usageChunk = { ...base, choices: [], usage: { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37, prompt_tokens_details: { cached_tokens: 10 } } };

/** The events of the frames, parsed as an SSE client does; the event name must match the data's type. */
function events(frames: string[]): Record<string, any>[] {
  const out: Record<string, any>[] = [];
  const parser = createParser({
    onEvent: (event) => {
      const data = JSON.parse(event.data);
      expect(event.event).toBe(data.type);
      out.push(data);
    },
  });
  parser.feed(frames.join(''));
  return out;
}

function encode(chunks: Record<string, any>[]) {
  const encoder = new AnthropicStreamEncoder('gpt-4o-mini');
  const frames = chunks.flatMap((c) => encoder.onChunk(c));
  frames.push(...encoder.finish());
  return { encoder, events: events(frames) };
}

describe('AnthropicStreamEncoder', () => {
  it('a text stream: message_start, one text block with a delta per chunk, message_delta with usage, message_stop', () => {
    const { events: out, encoder } = encode([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ' there' }), chunk({}, 'stop'), usageChunk]);
    expect(out).toEqual([
      {
        type: 'message_start',
        message: { id: 'msg_xyz', type: 'message', role: 'assistant', model: 'gpt-4o-mini-2024-07-18', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' there' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { input_tokens: 20, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 10 },
      },
      { type: 'message_stop' },
    ]);
    expect(encoder.message()).toMatchObject({ id: 'msg_xyz', content: [{ type: 'text', text: 'Hello there' }], stop_reason: 'end_turn', usage: { input_tokens: 20, output_tokens: 7 } });
  });

  it('text then two tool calls: a block each, argument fragments as input_json_delta', () => {
    const { events: out, encoder } = encode([
      chunk({ role: 'assistant', content: 'Checking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(out.map((e) => [e.type, e.index ?? null, e.content_block?.type ?? e.delta?.type ?? null])).toEqual([
      ['message_start', null, null],
      ['content_block_start', 0, 'text'],
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
    expect(out[4].content_block).toEqual({ type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} });
    expect(out.at(-2)!.delta.stop_reason).toBe('tool_use');
    expect(encoder.message().content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
    ]);
  });

  it('its events assemble, as an Anthropic client would, into the message it reports', () => {
    const encoder = new AnthropicStreamEncoder('gpt-4o-mini');
    const frames = [chunk({ content: 'Hi' }), chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{"a":1}' } }] }), chunk({}, 'length'), usageChunk].flatMap((c) =>
      encoder.onChunk(c),
    );
    frames.push(...encoder.finish());
    const assembler = new AnthropicMessageAssembler();
    for (const event of events(frames)) assembler.add(event);
    expect(assembler.message()).toEqual(encoder.message());
    expect(encoder.message().stop_reason).toBe('max_tokens');
  });

  it('a stream with no chunk still opens with message_start, and ends with end_turn', () => {
    const encoder = new AnthropicStreamEncoder('gpt-4o-mini');
    const out = events(encoder.finish());
    expect(out.map((e) => e.type)).toEqual(['message_start', 'message_delta', 'message_stop']);
    expect(out[0].message.model).toBe('gpt-4o-mini');
    expect(out[1].delta.stop_reason).toBe('end_turn');
  });
});
