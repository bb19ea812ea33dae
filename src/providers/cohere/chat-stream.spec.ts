import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatCompletionChunk } from '../chat-format';
import { CohereChatStreamDecoder } from './chat-stream';

/** Replays a recorded stream through a real SSE parser, as the relay does, in small pieces. */
function replay(fixture: string): { chunks: ChatCompletionChunk[]; decoder: CohereChatStreamDecoder } {
  const decoder = new CohereChatStreamDecoder('command-a-03-2025');
  const chunks: ChatCompletionChunk[] = [];
  const parser = createParser({ onEvent: (event) => chunks.push(...decoder.onEvent(event)) });
  const text = readFileSync(join(__dirname, '__fixtures__', fixture), 'utf8');
  for (let offset = 0; offset < text.length; offset += 61) parser.feed(text.slice(offset, offset + 61));
  return { chunks, decoder };
}

const deltas = (chunks: ChatCompletionChunk[]) => chunks.filter((chunk) => chunk.choices.length).map((chunk) => chunk.choices[0]);

describe('CohereChatStreamDecoder', () => {
  it('a text stream: role chunk, text deltas, finish chunk, then the billed usage', () => {
    const { chunks, decoder } = replay('text.chunks.txt');
    expect(deltas(chunks)).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: 'The capital' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: ' of France is Paris' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: '.' }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' },
    ]);
    for (const chunk of chunks)
      expect(chunk).toMatchObject({ id: '29f14a5a-11de-4cae-9800-25e4747408ea', object: 'chat.completion.chunk', model: 'command-a-03-2025' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 8, completion_tokens: 7, total_tokens: 15 } });
    expect(decoder.isComplete()).toBe(true);
  });

  it('tool calls: the plan as content, each call opened with id and name, arguments in pieces, finish tool_calls', () => {
    const { chunks } = replay('tool-call.chunks.txt');
    expect(deltas(chunks).map((choice) => [choice.delta, choice.finish_reason])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'I will search for the weather' }, null],
      [{ content: ' in Madrid and Brasilia.' }, null],
      [{ tool_calls: [{ index: 0, id: 'get_weather_p0dage9q1nv4', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '{\n    "location": "' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: 'Madrid"\n}' } }] }, null],
      [{ tool_calls: [{ index: 1, id: 'get_weather_ay6nmvjgp9vn', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, null],
      [{ tool_calls: [{ index: 1, function: { arguments: '{\n    "location": "Brasilia"\n}' } }] }, null],
      [{}, 'tool_calls'],
    ]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 37, completion_tokens: 28 });
  });

  it('is not complete before message-end, and a malformed event is a 502', () => {
    const decoder = new CohereChatStreamDecoder('command-a-03-2025');
    decoder.onEvent({ event: 'message-start', data: '{"id":"x","type":"message-start"}', id: undefined });
    expect(decoder.isComplete()).toBe(false);
    expect(() => decoder.onEvent({ event: undefined, data: '{"type": "content-delta", this is not JSON', id: undefined })).toThrow(GatewayError);
    expect(() =>
      decoder.onEvent({
        event: undefined,
        data: '{"type":"tool-call-delta","delta":{"message":{"tool_calls":{"function":{"arguments":"{"}}}}}',
        id: undefined,
      }),
    ).toThrow(/before any tool-call-start/);
  });
});
