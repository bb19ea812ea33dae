import type { ChatCompletion, ChatUsage } from '../../../providers/chat-format';
import { anthropicUsageFromOpenAI, chatCompletionToMessage, openAIErrorToAnthropic, stopReasonFromOpenAI, toolInput } from './chat-to-messages';

/** A chat.completion as OpenAI sends it, with the first choice's message and finish reason. */
const completion = (message: Record<string, unknown>, finish_reason: string | null = 'stop', extra: Record<string, unknown> = {}): ChatCompletion => ({
  id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
  object: 'chat.completion',
  created: 1741570283,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', refusal: null, annotations: [], ...message }, logprobs: null, finish_reason }],
  usage: {
    prompt_tokens: 1117,
    completion_tokens: 46,
    total_tokens: 1163,
    prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
  service_tier: 'default',
  system_fingerprint: 'fp_06737a9306',
  ...extra,
});

describe('chatCompletionToMessage', () => {
  it('a text answer: exactly one text block, end_turn, the completion id and the served model, cached tokens apart', () => {
    expect(chatCompletionToMessage(completion({ content: 'bridged answer' }), 'gpt-4o-mini')).toEqual({
      id: 'msg_B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-mini-2024-07-18',
      content: [{ type: 'text', text: 'bridged answer' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 93, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024, output_tokens: 46 },
    });
  });

  it('tool calls follow the text as tool_use blocks, their arguments parsed', () => {
    const message = chatCompletionToMessage(
      completion(
        {
          content: 'Let me check.',
          tool_calls: [
            { id: 'call_Xk2', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris","units":["c"]}' } },
            { id: 'call_Yz9', type: 'function', function: { name: 'now', arguments: '{}' } },
          ],
        },
        'tool_calls',
      ),
      'gpt-4o-mini',
    );
    expect(message.content).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'call_Xk2', name: 'get_weather', input: { location: 'Paris', units: ['c'] } },
      { type: 'tool_use', id: 'call_Yz9', name: 'now', input: {} },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('reasoning text becomes a leading thinking block when the client asked for thinking, and nothing otherwise', () => {
    const answer = completion({ content: 'Paris.', reasoning_content: 'The capital of France.' });
    expect(chatCompletionToMessage(answer, 'deepseek-reasoner', true).content).toEqual([
      { type: 'thinking', thinking: 'The capital of France.', signature: '' },
      { type: 'text', text: 'Paris.' },
    ]);
    expect(chatCompletionToMessage(answer, 'deepseek-reasoner').content).toEqual([{ type: 'text', text: 'Paris.' }]);
    expect(chatCompletionToMessage(completion({ content: 'Paris.', reasoning: 'Capital.' }), 'm', true).content[0]).toEqual({
      type: 'thinking',
      thinking: 'Capital.',
      signature: '',
    });
  });

  it('tool calls alone (content null) have no text block', () => {
    const message = chatCompletionToMessage(
      completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, 'tool_calls'),
      'm',
    );
    expect(message.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } }]);
  });

  it('a tool call without an id gets one in Anthropic style', () => {
    const message = chatCompletionToMessage(
      completion({ content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls'),
      'm',
    );
    expect(message.content[0].id).toMatch(/^toolu_[0-9a-f]{24}$/);
  });

  it('tool calls ended with stop (some OpenAI-compatible servers) are still tool_use', () => {
    const message = chatCompletionToMessage(
      completion({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'stop'),
      'm',
    );
    expect(message.stop_reason).toBe('tool_use');
  });

  it('a refusal is the text of the answer and ends it as a refusal', () => {
    const message = chatCompletionToMessage(completion({ content: null, refusal: "I'm sorry, I can't help with that." }), 'm');
    expect(message.content).toEqual([{ type: 'text', text: "I'm sorry, I can't help with that." }]);
    expect(message.stop_reason).toBe('refusal');
  });

  it('an empty answer has no content block', () => {
    expect(chatCompletionToMessage(completion({ content: '' }), 'm').content).toEqual([]);
  });

  it('a completion without id, model or usage: a generated id, the requested model, zero counts', () => {
    const bare = { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }] } as unknown as ChatCompletion;
    const message = chatCompletionToMessage(bare, 'gpt-4o');
    expect(message.id).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(message.model).toBe('gpt-4o');
    expect(message.usage).toEqual({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 });
  });

  it('a completion id in another form is kept whole after msg_', () => {
    expect(chatCompletionToMessage(completion({ content: 'x' }, 'stop', { id: 'gen-1700000000-abc' }), 'm').id).toBe('msg_gen-1700000000-abc');
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
  ])('finish reason %s is stop reason %s', (finish, stop) => {
    expect(chatCompletionToMessage(completion({ content: 'x' }, finish), 'm').stop_reason).toBe(stop);
  });
});

describe('stopReasonFromOpenAI', () => {
  it.each([
    [null, false, false, 'end_turn'],
    [undefined, true, false, 'tool_use'],
    ['stop', false, true, 'refusal'],
    ['length', true, false, 'max_tokens'],
    ['content_filter', false, false, 'refusal'],
    ['eos', false, false, 'end_turn'],
  ])('%j (tool calls %j, refused %j) is %s', (finish, toolCalls, refused, stop) => {
    expect(stopReasonFromOpenAI(finish, toolCalls, refused)).toBe(stop);
  });
});

describe('anthropicUsageFromOpenAI', () => {
  it('leaves cache reads and writes (a translated Anthropic answer) out of input_tokens', () => {
    expect(
      anthropicUsageFromOpenAI({
        prompt_tokens: 260,
        completion_tokens: 12,
        total_tokens: 272,
        prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 50 },
      }),
    ).toEqual({
      input_tokens: 10,
      cache_creation_input_tokens: 50,
      cache_read_input_tokens: 200,
      output_tokens: 12,
    });
  });

  it('counts nothing that is not a count, and never below zero', () => {
    expect(anthropicUsageFromOpenAI(null)).toEqual({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 });
    const offSpec = { prompt_tokens: 5, completion_tokens: 'x', prompt_tokens_details: { cached_tokens: 9 } } as unknown as ChatUsage;
    expect(anthropicUsageFromOpenAI(offSpec)).toEqual({
      input_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 9,
      output_tokens: 0,
    });
  });
});

describe('toolInput', () => {
  it.each([
    ['{"a":{"b":[1,2]}}', { a: { b: [1, 2] } }],
    ['', {}],
    ['  ', {}],
    [undefined, {}],
    ['{"loc', { _raw_arguments: '{"loc' }],
    ['[1,2]', { _raw_arguments: '[1,2]' }],
    ['null', { _raw_arguments: 'null' }],
    ['"Paris"', { _raw_arguments: '"Paris"' }],
  ])('arguments %j are input %j', (args, input) => {
    expect(toolInput(args)).toEqual(input);
  });
});

describe('openAIErrorToAnthropic', () => {
  it.each([
    [
      400,
      { error: { message: "Invalid 'messages[1].content'", type: 'invalid_request_error', param: 'messages', code: null } },
      'invalid_request_error',
      "Invalid 'messages[1].content'",
    ],
    [
      401,
      { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
      'authentication_error',
      'Incorrect API key provided',
    ],
    [403, { error: { message: 'Country not supported', type: 'request_forbidden' } }, 'permission_error', 'Country not supported'],
    [
      404,
      { error: { message: 'The model `gpt-9` does not exist', type: 'invalid_request_error', code: 'model_not_found' } },
      'not_found_error',
      'The model `gpt-9` does not exist',
    ],
    [413, { error: { message: 'Request too large' } }, 'request_too_large', 'Request too large'],
    [
      429,
      { error: { message: 'Rate limit reached for gpt-4o-mini', type: 'requests', code: 'rate_limit_exceeded' } },
      'rate_limit_error',
      'Rate limit reached for gpt-4o-mini',
    ],
    [500, { error: { message: 'The server had an error', type: 'server_error' } }, 'api_error', 'The server had an error'],
    [503, { error: { message: 'The engine is currently overloaded', type: 'server_error' } }, 'overloaded_error', 'The engine is currently overloaded'],
    [529, { error: { message: 'Overloaded' } }, 'overloaded_error', 'Overloaded'],
    [502, { error: 'Bad gateway' }, 'api_error', 'Bad gateway'],
    [500, '<html>oops</html>', 'api_error', '<html>oops</html>'],
    [502, null, 'api_error', 'The provider answered 502'],
    [500, { error: { message: '' } }, 'api_error', 'The provider answered 500'],
    [418, { detail: 'teapot' }, 'api_error', 'The provider answered 418'],
  ])('%i %j is an Anthropic %s', (status, body, type, message) => {
    expect(openAIErrorToAnthropic(body, status)).toEqual({ type: 'error', error: { type, message } });
  });
});
