import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toChatCompletion, toOpenAIError } from './chat-response';

const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '__fixtures__', name), 'utf8'));

describe('toChatCompletion', () => {
  it('a text answer: thought parts as reasoning_content, usage with thinking and cache', () => {
    const completion = toChatCompletion(fixture('generate-content.json'), 'gemini-2.5-flash-latest');
    expect(completion).toEqual({
      id: 'kZlAaOLPGNfTz7IP4v6e6Qs',
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'gemini-2.5-flash',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'The capital of France is Paris.',
            refusal: null,
            reasoning_content: '**Answering the question**\n\nThe user wants a capital city.',
          },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 7 + 204,
        total_tokens: 220,
        prompt_tokens_details: { cached_tokens: 3 },
        completion_tokens_details: { reasoning_tokens: 204 },
      },
    });
    expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(5);
  });

  it('function calls become tool calls with ids and JSON arguments, finished as tool_calls', () => {
    const completion = toChatCompletion(fixture('generate-content-function-call.json'), 'gemini-2.5-flash');
    const [choice] = completion.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_[0-9a-f]{24}$/), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' } },
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
    expect(completion.usage).toMatchObject({ prompt_tokens: 71, completion_tokens: 30, total_tokens: 101, completion_tokens_details: { reasoning_tokens: 0 } });
  });

  it('a blocked prompt: one choice without content, finished by content_filter', () => {
    const completion = toChatCompletion(fixture('generate-content-blocked.json'), 'gemini-2.5-flash');
    expect(completion.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: null, refusal: null }, logprobs: null, finish_reason: 'content_filter' },
    ]);
    expect(completion.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 });
  });

  it('one choice per candidate with its finish reason; generated id, requested model and summed total when absent', () => {
    const completion = toChatCompletion(
      {
        candidates: [
          { content: { parts: [{ text: 'a' }] }, finishReason: 'MAX_TOKENS' },
          { index: 1, content: { parts: [] }, finishReason: 'RECITATION' },
          { index: 2, finishReason: 'OTHER' },
          { index: 3, content: { parts: [{ text: 'x' }] }, finishReason: 'SPII' },
        ],
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 6 },
      },
      'gemini-2.0-flash',
    );
    expect(completion.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(completion.model).toBe('gemini-2.0-flash');
    expect(completion.choices.map((choice: any) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
      [0, 'a', 'length'],
      [1, null, 'content_filter'],
      [2, null, 'stop'],
      [3, 'x', 'content_filter'],
    ]);
    expect(completion.usage?.total_tokens).toBe(10);
  });

  it('no usageMetadata, no usage (rather than a free call)', () => {
    expect(toChatCompletion({ candidates: [{ content: { parts: [{ text: 'a' }] }, finishReason: 'STOP' }] }, 'm')).not.toHaveProperty('usage');
  });

  it('logprobs in OpenAI shape when Gemini returns them', () => {
    const completion = toChatCompletion(
      {
        candidates: [
          {
            content: { parts: [{ text: 'Hi' }] },
            finishReason: 'STOP',
            logprobsResult: {
              chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }],
              topCandidates: [
                {
                  candidates: [
                    { token: 'Hi', logProbability: -0.1 },
                    { token: 'Hey', logProbability: -2.3 },
                  ],
                },
              ],
            },
          },
        ],
      },
      'm',
    );
    expect(completion.choices[0].logprobs).toEqual({
      content: [
        {
          token: 'Hi',
          logprob: -0.1,
          bytes: [72, 105],
          top_logprobs: [
            { token: 'Hi', logprob: -0.1, bytes: [72, 105] },
            { token: 'Hey', logprob: -2.3, bytes: [72, 101, 121] },
          ],
        },
      ],
    });
  });
});

describe('toOpenAIError', () => {
  const gemini = (code: number, status: string, message = 'm') => ({ error: { code, message, status } });

  it('maps Google statuses to OpenAI error types, keeping the message and the status as code', () => {
    expect(toOpenAIError(400, gemini(400, 'INVALID_ARGUMENT', 'Invalid value at temperature'))).toEqual({
      error: { message: 'Invalid value at temperature', type: 'invalid_request_error', param: null, code: 'INVALID_ARGUMENT' },
    });
    expect(toOpenAIError(429, gemini(429, 'RESOURCE_EXHAUSTED')).error.type).toBe('rate_limit_error');
    expect(toOpenAIError(403, gemini(403, 'PERMISSION_DENIED')).error.type).toBe('authentication_error');
    expect(toOpenAIError(401, gemini(401, 'UNAUTHENTICATED')).error.type).toBe('authentication_error');
    expect(toOpenAIError(404, gemini(404, 'NOT_FOUND')).error).toMatchObject({ type: 'invalid_request_error', code: 'NOT_FOUND' });
    expect(toOpenAIError(503, gemini(503, 'UNAVAILABLE')).error).toMatchObject({ type: 'api_error', code: 'UNAVAILABLE' });
  });

  it('a bad API key (400 with reason API_KEY_INVALID) is an authentication error', () => {
    expect(toOpenAIError(400, fixture('error-invalid-key.json'))).toEqual({
      error: { message: 'API key not valid. Please pass a valid API key.', type: 'authentication_error', param: null, code: 'INVALID_ARGUMENT' },
    });
  });

  it('an error wrapped in an array, as the stream endpoint may send it', () => {
    expect(toOpenAIError(500, [gemini(500, 'INTERNAL', 'boom')]).error).toEqual({ message: 'boom', type: 'api_error', param: null, code: 'INTERNAL' });
  });

  it('another shape gets a generic message', () => {
    expect(toOpenAIError(502, '<html>Bad Gateway</html>')).toEqual({
      error: { message: 'Provider google answered 502', type: 'api_error', param: null, code: null },
    });
    expect(toOpenAIError(418, { message: 'x' }).error.type).toBe('invalid_request_error');
  });
});
