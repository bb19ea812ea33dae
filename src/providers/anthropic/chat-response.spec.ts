import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { finishReasonFromAnthropic, toChatCompletion, toOpenAIError } from './chat-response';

const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '__fixtures__', name), 'utf8'));

describe('Anthropic answers as OpenAI chat completions', () => {
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

  it('a message without text has null content, and thinking is left out', () => {
    const completion = toChatCompletion(
      { id: 'msg_2', content: [{ type: 'thinking', thinking: 'hmm', signature: 'x' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } },
      'claude-opus-4-5',
    );
    expect(completion.model).toBe('claude-opus-4-5');
    expect(completion.choices[0].message).toEqual({ role: 'assistant', content: null, refusal: null });
    expect(completion.choices[0].finish_reason).toBe('stop');
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, null],
  ])('stop reason %s is finish reason %s', (stop, finish) => {
    expect(finishReasonFromAnthropic(stop)).toBe(finish);
  });

  it.each([[null], ['text'], [{ id: 'msg_3' }]])('an answer without a content array (%j) is malformed', (answer) => {
    expect(() => toChatCompletion(answer as any, 'claude')).toThrow(expect.objectContaining({ status: 502, code: 'upstream_malformed_response' }));
  });

  it("Anthropic's error body becomes OpenAI's error shape, its type kept", () => {
    expect(toOpenAIError(529, fixture('error-overloaded.json'))).toEqual({ error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: null } });
    expect(toOpenAIError(502, '<html>Bad gateway</html>')).toEqual({ error: { message: '<html>Bad gateway</html>', type: 'upstream_error', param: null, code: null } });
    expect(toOpenAIError(500, null).error.message).toBe('Provider anthropic answered 500');
  });
});
