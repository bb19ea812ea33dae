import type { ChatCompletion, ChatUsage } from '../../../providers/chat-format';
import { chatCompletionToResponse, responseStatus, responseUsage } from './chat-to-response';

const completion = (
  message: Record<string, unknown>,
  finish = 'stop',
  usage: ChatUsage = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
): ChatCompletion => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'claude-sonnet-4-5-20250929',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  usage,
});

describe('chatCompletionToResponse', () => {
  it('answers a completed Response with a message item, the request echoed and usage in Responses terms', () => {
    const request = { model: 'claude-sonnet-4-5', input: 'hi', instructions: 'Be brief.', user: 'u', metadata: { a: 'b' }, temperature: 0.3 };
    const response = chatCompletionToResponse(completion({ content: 'Hello.' }), request, 'claude-sonnet-4-5');
    expect(response).toMatchObject({
      object: 'response',
      created_at: 1700000000,
      status: 'completed',
      incomplete_details: null,
      model: 'claude-sonnet-4-5-20250929',
      instructions: 'Be brief.',
      user: 'u',
      metadata: { a: 'b' },
      temperature: 0.3,
      store: false,
      output: [{ type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.', annotations: [], logprobs: [] }] }],
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 4,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 14,
      },
    });
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(response.output[0].id).toMatch(/^msg_/);
    expect(response.completed_at).toEqual(expect.any(Number));
  });

  it('puts reasoning first, then text, then function calls (a namespaced one named as declared)', () => {
    const message = {
      content: 'Let me check.',
      reasoning_content: 'The user wants weather.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'agents__spawn', arguments: '{}' } },
      ],
    };
    const namespaced = new Map([['agents__spawn', { namespace: 'agents', name: 'spawn' }]]);
    const response = chatCompletionToResponse(completion(message, 'tool_calls'), { input: 'x' }, 'm', namespaced);
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(response.output[0]).toMatchObject({ summary: [{ type: 'summary_text', text: 'The user wants weather.' }] });
    expect(response.output[2]).toMatchObject({ call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
    expect(response.output[3]).toMatchObject({ call_id: 'call_2', name: 'spawn', namespace: 'agents' });
    expect(response.status).toBe('completed');
  });

  it('is incomplete at the output limit, and gives a refusal as a refusal part', () => {
    const cut = chatCompletionToResponse(completion({ content: 'one two' }, 'length'), { input: 'x' }, 'm');
    expect(cut).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      completed_at: null,
      output: [{ status: 'incomplete' }],
    });
    const refused = chatCompletionToResponse(completion({ content: null, refusal: 'I cannot.' }), { input: 'x' }, 'm');
    expect(refused.output[0]).toMatchObject({ content: [{ type: 'refusal', refusal: 'I cannot.' }] });
  });

  it('reads a completion without choices or usage without throwing', () => {
    const response = chatCompletionToResponse({ id: 'x' } as unknown as ChatCompletion, { input: 'x' }, 'fallback-model');
    expect(response).toMatchObject({ status: 'completed', model: 'fallback-model', output: [], usage: null });
  });
});

describe('responseUsage and responseStatus', () => {
  it('keeps cached and reasoning tokens among the input and output ones', () => {
    // Without total_tokens, as some servers answer: the total is the sum.
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 20,
      prompt_tokens_details: { cached_tokens: 60 },
      completion_tokens_details: { reasoning_tokens: 5 },
    } as ChatUsage;
    expect(responseUsage(usage)).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 60 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 5 },
      total_tokens: 120,
    });
    expect(responseUsage(null)).toBeNull();
  });

  it('maps finish reasons', () => {
    expect(responseStatus('stop').status).toBe('completed');
    expect(responseStatus('tool_calls').status).toBe('completed');
    expect(responseStatus('content_filter')).toEqual({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
  });
});
