import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toChatCompletion, toOpenAIError } from './chat-response';
import { finishReasonFromAnthropic } from './finish-reason';

const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '__fixtures__', name), 'utf8'));

describe('Anthropic answers as OpenAI chat completions', () => {
  it('a text answer: its text as the content, finish reason stop, usage in OpenAI shape', () => {
    const before = Math.floor(Date.now() / 1000);
    const completion = toChatCompletion(
      {
        id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: [
          { type: 'text', text: 'Hi! ' },
          { type: 'text', text: 'My name is Claude.' },
        ],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 2095, output_tokens: 503 },
      },
      'claude-sonnet-4-5',
    );
    expect(completion).toEqual({
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'claude-sonnet-4-5-20250929',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi! My name is Claude.', refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 2095, completion_tokens: 503, total_tokens: 2598, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } },
    });
    expect(completion.created).toBeGreaterThanOrEqual(before);
  });

  it('text and tool_use blocks become content and tool calls; usage counts cache reads and writes in the prompt', () => {
    const completion = toChatCompletion(fixture('message-tool-use.json'), 'claude-sonnet-4-5');
    expect(completion).toMatchObject({ id: 'msg_01Aq9w938a90dw8q', object: 'chat.completion', model: 'claude-sonnet-4-5-20250929' });
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: "I'll check the weather in Paris.",
          refusal: null,
          tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ]);
    expect(completion.usage).toEqual({
      prompt_tokens: 2095 + 3000 + 100,
      completion_tokens: 503,
      total_tokens: 2095 + 3000 + 100 + 503,
      prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 100 },
    });
  });

  it('a message without text has null content, thinking is its reasoning_content (no signature, nothing of redacted thinking), and the requested model stands in for a missing one', () => {
    const completion = toChatCompletion(
      {
        id: 'msg_2',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'x' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'thinking', thinking: 'so', signature: 'y' },
        ],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 2 },
      },
      'claude-opus-4-5',
    );
    expect(completion.model).toBe('claude-opus-4-5');
    expect(completion.choices[0].message).toEqual({ role: 'assistant', content: null, refusal: null, reasoning_content: 'hmm\n\nso' });
    expect(completion.choices[0].finish_reason).toBe('stop');
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, null],
  ])('stop reason %s is finish reason %s', (stop, finish) => {
    expect(finishReasonFromAnthropic(stop)).toBe(finish);
  });

  it.each([[null], ['text'], [{ id: 'msg_3' }], [{ id: 'msg_3', content: 'Hi' }]])('an answer without a content array (%j) is malformed', (answer) => {
    expect(() => toChatCompletion(answer as any, 'claude')).toThrow(expect.objectContaining({ status: 502, code: 'upstream_malformed_response' }));
  });

  it("Anthropic's error body becomes OpenAI's error shape, its type kept", () => {
    expect(toOpenAIError(529, fixture('error-overloaded.json'))).toEqual({
      error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: null },
    });
    expect(toOpenAIError(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } })).toEqual({
      error: { message: 'invalid x-api-key', type: 'authentication_error', param: null, code: null },
    });
  });

  it('any other error body gives its text, else the status, as an upstream_error', () => {
    expect(toOpenAIError(502, '<html>Bad gateway</html>')).toEqual({
      error: { message: '<html>Bad gateway</html>', type: 'upstream_error', param: null, code: null },
    });
    expect(toOpenAIError(503, { message: 'upstream connect error' }).error).toEqual({
      message: 'upstream connect error',
      type: 'upstream_error',
      param: null,
      code: null,
    });
    expect(toOpenAIError(500, null).error).toEqual({ message: 'Provider anthropic answered 500', type: 'upstream_error', param: null, code: null });
    expect(toOpenAIError(500, '').error.message).toBe('Provider anthropic answered 500');
  });
});
