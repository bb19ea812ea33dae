import { addUsage, summariseEvent, usageOfResponseDone } from './realtime-events';

describe('realtime events for the log', () => {
  const audio = Buffer.alloc(3000, 7).toString('base64');

  it('replaces audio payloads by their size and keeps text, transcript deltas included', () => {
    expect(summariseEvent({ type: 'input_audio_buffer.append', event_id: 'e1', audio })).toEqual({
      type: 'input_audio_buffer.append',
      event_id: 'e1',
      audio_bytes: 3000,
    });
    expect(summariseEvent({ type: 'response.audio.delta', item_id: 'i', delta: audio })).toEqual({
      type: 'response.audio.delta',
      item_id: 'i',
      delta_bytes: 3000,
    });
    expect(summariseEvent({ type: 'response.output_audio.delta', delta: audio })).toEqual({ type: 'response.output_audio.delta', delta_bytes: 3000 });
    expect(summariseEvent({ type: 'response.audio_transcript.delta', delta: 'Hello' })).toEqual({ type: 'response.audio_transcript.delta', delta: 'Hello' });
    expect(
      summariseEvent({
        type: 'conversation.item.create',
        item: {
          type: 'message',
          content: [
            { type: 'input_audio', audio },
            { type: 'input_text', text: 'hi' },
          ],
        },
      }),
    ).toEqual({
      type: 'conversation.item.create',
      item: {
        type: 'message',
        content: [
          { type: 'input_audio', audio_bytes: 3000 },
          { type: 'input_text', text: 'hi' },
        ],
      },
    });
  });

  it('reads response.done usage with its text and audio parts, and sums sessions', () => {
    const done = {
      type: 'response.done',
      response: {
        usage: {
          total_tokens: 620,
          input_tokens: 300,
          output_tokens: 320,
          input_token_details: { cached_tokens: 50, text_tokens: 100, audio_tokens: 200, cached_tokens_details: { text_tokens: 0, audio_tokens: 50 } },
          output_token_details: { text_tokens: 20, audio_tokens: 300 },
        },
      },
    };
    const one = usageOfResponseDone(done)!;
    expect(one).toMatchObject({
      promptTokens: 300,
      completionTokens: 320,
      totalTokens: 620,
      cachedTokens: 50,
      audioPromptTokens: 200,
      cachedAudioTokens: 50,
      audioCompletionTokens: 300,
    });
    expect(addUsage(addUsage(null, one), one)).toMatchObject({ promptTokens: 600, completionTokens: 640, cachedAudioTokens: 100, audioCompletionTokens: 600 });
    expect(usageOfResponseDone({ type: 'response.done', response: {} })).toBeNull();
  });
});
