import type { ChatCompletionChunk } from '../../../providers/chat-format';
import { GeminiStreamEncoder } from './gemini-stream-encoder';

const chunk = (delta: Record<string, unknown>, extra: Partial<ChatCompletionChunk> = {}, finish: string | null = null): ChatCompletionChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini-2024',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});
const data = (frames: string[]) =>
  frames.map((frame) => {
    expect(frame).toMatch(/^data: .*\r\n\r\n$/s);
    return JSON.parse(frame.slice(6));
  });

describe('GeminiStreamEncoder', () => {
  it('writes each text delta as a chunk and ends with the finish reason and usage', () => {
    const encoder = new GeminiStreamEncoder('gpt-4o-mini', false);
    const frames = [
      ...encoder.onChunk(chunk({ role: 'assistant', content: '' })),
      ...encoder.onChunk(chunk({ content: 'Hel' })),
      ...encoder.onChunk(chunk({ content: 'lo' }, {}, 'stop')),
      ...encoder.onChunk({ ...chunk({}), choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }),
      ...encoder.finish(),
    ];
    const chunks = data(frames);
    expect(chunks).toHaveLength(3);
    expect(chunks[0]).toEqual({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }],
      modelVersion: 'gpt-4o-mini-2024',
      responseId: 'chatcmpl-1',
    });
    expect(chunks[2]).toEqual({
      candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP', index: 0 }],
      modelVersion: 'gpt-4o-mini-2024',
      responseId: 'chatcmpl-1',
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
    });
    expect(encoder.answer()).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hello' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
    });
  });

  it('holds tool calls until the end and sends them whole, arguments as an object', () => {
    const encoder = new GeminiStreamEncoder('gpt-4o-mini', false);
    const frames = [
      ...encoder.onChunk(chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"loc' } }] })),
      ...encoder.onChunk(chunk({ tool_calls: [{ index: 0, function: { arguments: 'ation":"Paris"}' } }] }, {}, 'tool_calls')),
    ];
    expect(frames).toEqual([]);
    const [last] = data(encoder.finish());
    expect(last.candidates[0]).toEqual({
      content: { role: 'model', parts: [{ functionCall: { id: 'call_1', name: 'get_weather', args: { location: 'Paris' } } }] },
      finishReason: 'STOP',
      index: 0,
    });
  });

  it('sends reasoning as thought parts only when the client asked for thoughts, and MAX_TOKENS for length', () => {
    const asked = new GeminiStreamEncoder('m', true);
    expect(data(asked.onChunk(chunk({ reasoning_content: 'hmm' })))[0].candidates[0].content.parts).toEqual([{ text: 'hmm', thought: true }]);
    const unasked = new GeminiStreamEncoder('m', false);
    expect(unasked.onChunk(chunk({ reasoning_content: 'hmm' }))).toEqual([]);
    unasked.onChunk(chunk({ content: 'cut' }, {}, 'length'));
    expect(data(unasked.finish())[0].candidates[0].finishReason).toBe('MAX_TOKENS');
  });
});
