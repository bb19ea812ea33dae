import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatCompletionChunk } from '../chat-format';
import { AnthropicChatStreamDecoder } from './chat-stream';

/** Replays a recorded stream through a real SSE parser, as the relay does, in small pieces. */
function replay(fixture: string, decoder = new AnthropicChatStreamDecoder('claude-sonnet-4-5')) {
  const chunks: ChatCompletionChunk[] = [];
  const parser = createParser({ onEvent: (event) => chunks.push(...decoder.onEvent(event)) });
  const text = readFileSync(join(__dirname, '__fixtures__', fixture), 'utf8');
  for (let offset = 0; offset < text.length; offset += 89) parser.feed(text.slice(offset, offset + 89));
  return { chunks, decoder };
}

const choices = (chunks: ChatCompletionChunk[]) => chunks.filter((chunk) => chunk.choices.length).map((chunk) => chunk.choices[0]);
const event = (data: unknown) => ({ event: undefined, id: undefined, data: typeof data === 'string' ? data : JSON.stringify(data) });
const START = event({
  type: 'message_start',
  message: { id: 'msg_1', model: 'claude-haiku-4-5-20251001', usage: { input_tokens: 3, cache_read_input_tokens: 100, output_tokens: 1 } },
});

describe('AnthropicChatStreamDecoder', () => {
  it('a text stream: role chunk, text deltas, finish chunk, then usage with the cache reads; pings make nothing', () => {
    const { chunks, decoder } = replay('text.chunks.txt');
    expect(choices(chunks)).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null },
      { index: 0, delta: { content: 'Hello' }, finish_reason: null, logprobs: null },
      { index: 0, delta: { content: '! How can I help?' }, finish_reason: null, logprobs: null },
      { index: 0, delta: {}, finish_reason: 'stop', logprobs: null },
    ]);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        object: 'chat.completion.chunk',
        created: chunks[0].created,
        model: 'claude-sonnet-4-5-20250929',
      });
    }
    expect(chunks).toHaveLength(5);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 1812, completion_tokens: 15, total_tokens: 1827, prompt_tokens_details: { cached_tokens: 1800, cache_write_tokens: 0 } },
    });
    expect(decoder.isComplete()).toBe(true);
  });

  it('a tool call after text: its start with id and name, then the argument fragments, finish reason tool_calls', () => {
    const { chunks } = replay('tool-use.chunks.txt');
    const calls = choices(chunks).flatMap((choice) => choice.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(calls.slice(1)).toEqual([
      { index: 0, function: { arguments: '' } },
      { index: 0, function: { arguments: '{"location":' } },
      { index: 0, function: { arguments: ' "San Francisco, CA"}' } },
    ]);
    expect(JSON.parse(calls.map((call) => call.function?.arguments).join(''))).toEqual({ location: 'San Francisco, CA' });
    expect(
      choices(chunks)
        .map((choice) => choice.delta.content)
        .filter(Boolean),
    ).toEqual(['Let me check the weather.']);
    expect(choices(chunks).at(-1)!.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 472, completion_tokens: 89 });
  });

  it('parallel tool calls are numbered 0, 1 in order, whatever their block index', () => {
    const { chunks } = replay('parallel-tool-use.chunks.txt');
    const calls = choices(chunks).flatMap((choice) => choice.delta.tool_calls ?? []);
    expect(calls.filter((call) => call.id).map((call) => [call.index, call.id])).toEqual([
      [0, 'toolu_01KFbKqPYSuAKujiL6mTfzYA'],
      [1, 'toolu_01QcXm4uvxUVVfKf8SQ8bbyR'],
    ]);
    const args = (index: number) =>
      JSON.parse(
        calls
          .filter((call) => call.index === index)
          .map((call) => call.function?.arguments)
          .join(''),
      );
    expect([args(0), args(1)]).toEqual([{ location: 'Paris' }, { location: 'Rome' }]);
    expect(chunks[0].model).toBe('claude-haiku-4-5-20251001');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 849, completion_tokens: 74 });
  });

  it('streams thinking as reasoning_content apart from the text, counts it as output, takes the final counts of message_delta, and maps max_tokens to length', () => {
    const { chunks } = replay('thinking.chunks.txt');
    expect(
      choices(chunks)
        .map((choice) => choice.delta.content)
        .filter(Boolean),
    ).toEqual(['27 * 453 = 12,231']);
    expect(
      choices(chunks)
        .map((choice) => choice.delta.reasoning_content)
        .filter(Boolean),
    ).toEqual(['27 * 453 = 12231']);
    expect(JSON.stringify(chunks)).not.toContain('signature');
    expect(choices(chunks).at(-1)!.finish_reason).toBe('length');
    expect(chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 1064,
      completion_tokens: 120,
      total_tokens: 1184,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 1024 },
    });
  });

  it('keeps the counts of message_start where message_delta reports them as null', () => {
    const decoder = new AnthropicChatStreamDecoder('claude-haiku-4-5');
    decoder.onEvent(START);
    decoder.onEvent(
      event({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: { input_tokens: null, cache_read_input_tokens: null, cache_creation_input_tokens: 20, output_tokens: 9, server_tool_use: null },
      }),
    );
    expect(decoder.onEvent(event({ type: 'message_stop' }))[0].usage).toEqual({
      prompt_tokens: 123,
      completion_tokens: 9,
      total_tokens: 132,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
    });
  });

  it('a text block that starts with text sends it', () => {
    const decoder = new AnthropicChatStreamDecoder('claude-haiku-4-5');
    decoder.onEvent(START);
    expect(decoder.onEvent(event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi' } }))).toEqual([
      {
        id: 'msg_1',
        object: 'chat.completion.chunk',
        created: expect.any(Number),
        model: 'claude-haiku-4-5-20251001',
        choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null, logprobs: null }],
      },
    ]);
  });

  it("Anthropic's error event ends the stream with its type as the error code: 529 when overloaded", () => {
    let thrown: unknown;
    try {
      replay('error.chunks.txt');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect(thrown).toMatchObject({ status: 529, type: 'upstream_error', code: 'overloaded_error', message: 'Overloaded' });
  });

  it('any other error event is a 502 with its type as the code', () => {
    const decoder = new AnthropicChatStreamDecoder('claude-haiku-4-5');
    expect(() => decoder.onEvent(event({ type: 'error', error: { type: 'api_error', message: 'Internal server error' } }))).toThrow(
      expect.objectContaining({ status: 502, type: 'upstream_error', code: 'api_error', message: 'Internal server error' }),
    );
  });

  it('is not complete before message_stop', () => {
    const decoder = new AnthropicChatStreamDecoder('claude-sonnet-4-5');
    decoder.onEvent(START);
    decoder.onEvent(event({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }));
    expect(decoder.isComplete()).toBe(false);
  });

  it.each([
    ['not JSON', '{"type":"content_block_delta", nope', /not JSON/],
    ['not an object', '[1]', /not a JSON object/],
    ['without a type', '{"index":0}', /without a type/],
    ['of tool input for a text block', '{"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":"{"}}', /not a tool call/],
  ])('an event %s is a malformed upstream answer', (_name, data, message) => {
    const decoder = new AnthropicChatStreamDecoder('claude-sonnet-4-5');
    expect(() => decoder.onEvent(event(data))).toThrow(message);
    expect(() => decoder.onEvent(event(data))).toThrow(expect.objectContaining({ status: 502, code: 'upstream_malformed_response' }));
  });

  it('ignores event types it does not know, as Anthropic asks clients to', () => {
    const decoder = new AnthropicChatStreamDecoder('claude-sonnet-4-5');
    expect(decoder.onEvent({ event: 'future_event', data: '{"type":"future_event"}', id: undefined })).toEqual([]);
  });
});
