import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatCompletionChunk } from '../chat-format';
import { GeminiChatStreamDecoder } from './chat-stream';

/** Replays a recorded stream through a real SSE parser, as the relay does, in small pieces. */
function replay(
  fixture: string,
  decoder = new GeminiChatStreamDecoder('gemini-2.5-flash'),
): { chunks: ChatCompletionChunk[]; decoder: GeminiChatStreamDecoder } {
  const chunks: ChatCompletionChunk[] = [];
  const parser = createParser({ onEvent: (event) => chunks.push(...decoder.onEvent(event)) });
  const text = readFileSync(join(__dirname, '__fixtures__', fixture), 'utf8');
  for (let offset = 0; offset < text.length; offset += 97) parser.feed(text.slice(offset, offset + 97));
  return { chunks, decoder };
}

const deltas = (chunks: ChatCompletionChunk[]) => chunks.filter((chunk) => chunk.choices.length).map((chunk) => chunk.choices[0]);

describe('GeminiChatStreamDecoder', () => {
  it('a text stream: role chunk, text deltas, finish chunk, then usage', () => {
    const { chunks, decoder } = replay('text.chunks.txt');
    expect(deltas(chunks)).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: 'The capital of France' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: ' is Paris, known for the Eiffel Tower' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: '.' }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' },
    ]);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: 'p5VAaMeGIMn_z7IPoLq-0Qs', object: 'chat.completion.chunk', model: 'gemini-2.5-flash' });
      expect(Math.abs(chunk.created - Date.now() / 1000)).toBeLessThan(5);
    }
    expect(decoder.isComplete()).toBe(true);
  });

  it('thought summaries (includeThoughts) stream as reasoning_content deltas before the answer', () => {
    const { chunks } = replay('thoughts.chunks.txt');
    expect(deltas(chunks).map((choice) => choice.delta)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: '**Considering the capital**\n\nThe user asks for the capital of France.' },
      { content: 'The capital of France is Paris.' },
      {},
    ]);
    expect(chunks.at(-1)!.usage?.completion_tokens_details).toEqual({ reasoning_tokens: 111 });
  });

  it('the last chunk carries the final usage totals, thinking counted as output', () => {
    const { chunks } = replay('text.chunks.txt');
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      prompt_tokens: 9,
      completion_tokens: 14 + 251,
      total_tokens: 274,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 251 },
    });
    expect(chunks.filter((chunk) => chunk.usage)).toHaveLength(1);
  });

  it('is not complete before a finish reason', () => {
    const decoder = new GeminiChatStreamDecoder('gemini-2.5-flash');
    const first = readFileSync(join(__dirname, '__fixtures__', 'text.chunks.txt'), 'utf8').split('\r\n\r\n')[0];
    decoder.onEvent({ event: undefined, id: undefined, data: first.slice('data: '.length) });
    expect(decoder.isComplete()).toBe(false);
  });

  it('function calls: whole calls with a running index and call ids, finished as tool_calls', () => {
    const { chunks, decoder } = replay('function-call.chunks.txt');
    const calls = deltas(chunks).flatMap((choice) => choice.delta.tool_calls ?? []);
    expect(calls.map((call: any) => [call.index, call.type, call.function.name, JSON.parse(call.function.arguments)])).toEqual([
      [0, 'function', 'get_weather', { city: 'Paris', unit: 'celsius' }],
      [1, 'function', 'get_weather', { city: 'Tokyo', unit: 'celsius' }],
      [2, 'function', 'get_time', { timezone: 'Asia/Tokyo' }],
    ]);
    for (const call of calls) expect(call.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(new Set(calls.map((call: any) => call.id)).size).toBe(3);
    expect(deltas(chunks)[1].delta).toEqual({ content: 'Let me look both up.' });
    expect(deltas(chunks).at(-1)).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' });
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 71, completion_tokens: 58 + 96, total_tokens: 225 });
    expect(decoder.isComplete()).toBe(true);
  });

  it('a blocked prompt: one empty choice finished by content_filter, then usage', () => {
    const { chunks, decoder } = replay('blocked.chunks.txt');
    expect(chunks.map((chunk) => chunk.choices[0] ?? chunk.usage)).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'content_filter' },
      expect.objectContaining({ prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 }),
    ]);
    expect(decoder.isComplete()).toBe(true);
  });

  it('an error event ends the stream with a 502 upstream_error carrying Gemini status and message', () => {
    let caught: unknown;
    try {
      replay('error.chunks.txt');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect(caught).toMatchObject({ status: 502, type: 'upstream_error', code: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' });
  });

  it('data that is not a JSON object is a malformed upstream answer', () => {
    const decoder = new GeminiChatStreamDecoder('gemini-2.5-flash');
    for (const data of ['{"candidates": [', '[1,2]', 'null']) {
      expect(() => decoder.onEvent({ event: undefined, id: undefined, data })).toThrow(
        expect.objectContaining({ status: 502, code: 'upstream_malformed_response' }),
      );
    }
  });

  it('maps MAX_TOKENS and SAFETY, keeps choices apart by candidate index, and passes logprobs', () => {
    const decoder = new GeminiChatStreamDecoder('gemini-2.0-flash');
    const event = (value: unknown) => decoder.onEvent({ event: undefined, id: undefined, data: JSON.stringify(value) });
    const first = event({
      candidates: [
        {
          index: 0,
          content: { parts: [{ text: 'a' }] },
          logprobsResult: { chosenCandidates: [{ token: 'a', logProbability: -0.5 }], topCandidates: [{ candidates: [{ token: 'a', logProbability: -0.5 }] }] },
        },
        { index: 1, content: { parts: [{ text: 'b' }] }, finishReason: 'SAFETY' },
      ],
    });
    expect(first.map((chunk) => [chunk.choices[0].index, chunk.choices[0].delta, chunk.choices[0].finish_reason])).toEqual([
      [0, { role: 'assistant', content: '' }, null],
      [0, { content: 'a' }, null],
      [1, { role: 'assistant', content: '' }, null],
      [1, { content: 'b' }, null],
      [1, {}, 'content_filter'],
    ]);
    expect(first[1].choices[0].logprobs).toEqual({
      content: [{ token: 'a', logprob: -0.5, bytes: [97], top_logprobs: [{ token: 'a', logprob: -0.5, bytes: [97] }] }],
    });
    expect(decoder.isComplete()).toBe(false);
    const last = event({
      candidates: [{ index: 0, content: { parts: [{ text: '' }] }, finishReason: 'MAX_TOKENS' }],
      usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 3 },
    });
    expect(last.map((chunk) => chunk.choices[0]?.finish_reason ?? chunk.usage)).toEqual(['length', expect.objectContaining({ total_tokens: 5 })]);
    expect(decoder.isComplete()).toBe(true);
    expect(last[0].model).toBe('gemini-2.0-flash');
    expect(last[0].id).toMatch(/^chatcmpl-/);
  });
});
