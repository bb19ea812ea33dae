import { chatCompletionToMessage, openAIErrorToAnthropic, stopReasonFromOpenAI } from './chat-to-messages';

describe('OpenAI answers as Anthropic messages', () => {
  it('a text answer: one text block, end_turn, usage without the cached tokens in input_tokens', () => {
    const message = chatCompletionToMessage(
      {
        id: 'chatcmpl-abc123',
        object: 'chat.completion',
        model: 'gpt-4o-mini-2024-07-18',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105, prompt_tokens_details: { cached_tokens: 60 } },
      },
      'gpt-4o-mini',
    );
    expect(message).toEqual({
      id: 'msg_abc123',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-mini-2024-07-18',
      content: [{ type: 'text', text: 'Hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 60 },
    });
  });

  it('tool calls become tool_use blocks with their input parsed; arguments that are not JSON are kept as text', () => {
    const message = chatCompletionToMessage(
      {
        choices: [
          {
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
                { id: 'call_2', type: 'function', function: { name: 'broken', arguments: '{"loc' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      'gpt-4o',
    );
    expect(message.model).toBe('gpt-4o');
    expect(message.id).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'broken', input: { _raw_arguments: '{"loc' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toEqual({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });

  it('keeps cache writes apart (a translated Anthropic answer)', () => {
    const message = chatCompletionToMessage(
      { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }], usage: { prompt_tokens: 260, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 50 } } },
      'm',
    );
    expect(message.usage).toEqual({ input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 50, cache_read_input_tokens: 200 });
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
    [null, null],
  ])('finish reason %s is stop reason %s', (finish, stop) => {
    expect(stopReasonFromOpenAI(finish)).toBe(stop);
  });

  it.each([
    [429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, 'rate_limit_error', 'Rate limit reached'],
    [401, { error: { message: 'Incorrect API key', type: 'invalid_request_error' } }, 'authentication_error', 'Incorrect API key'],
    [404, { error: { message: 'No model', type: 'not_found' } }, 'not_found_error', 'No model'],
    [503, { error: { message: 'Busy', type: 'server_error' } }, 'overloaded_error', 'Busy'],
    [500, '<html>oops</html>', 'api_error', '<html>oops</html>'],
    [502, null, 'api_error', 'The provider answered 502'],
  ])('a %i error becomes an Anthropic error body', (status, body, type, message) => {
    expect(openAIErrorToAnthropic(body, status)).toEqual({ type: 'error', error: { type, message } });
  });
});
