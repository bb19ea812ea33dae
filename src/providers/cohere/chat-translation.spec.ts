import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayError } from '../../common/errors/gateway-error';
import { IgnoredParams } from '../ignored-params';
import { toCohereChatRequest } from './chat-request';
import { toChatCompletion, toOpenAIError } from './chat-response';
import { toCohereEmbedRequest, toOpenAIEmbeddings } from './embed';
import { fromCohereRerank, toCohereRerankRequest } from './rerank';

const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, '__fixtures__', name), 'utf8'));
const MODEL = 'command-a-03-2025';

function refusal(body: Record<string, unknown>): GatewayError {
  try {
    toCohereChatRequest(body);
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a 400');
}

describe('toCohereChatRequest', () => {
  it('maps messages, tool calls, tool results and parameters', () => {
    const request = toCohereChatRequest({
      model: MODEL,
      messages: [
        { role: 'developer', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'sunny' }] },
      ],
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 100,
      max_tokens: 5,
      stop: 'END',
      seed: 7,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      tool_choice: 'required',
      reasoning_effort: 'low',
      stream: true,
      user: 'u',
      n: 1,
    });
    expect(request).toEqual({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          tool_plan: 'Let me check.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
      temperature: 0.2,
      p: 0.9,
      max_tokens: 100,
      stop_sequences: ['END'],
      seed: 7,
      response_format: { type: 'json_object', json_schema: { type: 'object' } },
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      tool_choice: 'REQUIRED',
      thinking: { type: 'enabled', token_budget: 1024 },
      stream: true,
    });
  });

  it('ignores and names what only tunes delivery; strict on every tool is strict_tools', () => {
    const ignored = new IgnoredParams();
    const tool = (name: string, strict: boolean) => ({ type: 'function', function: { name, strict } });
    const request = toCohereChatRequest(
      { model: MODEL, messages: [{ role: 'user', content: 'hi' }], store: true, tools: [tool('a', true), tool('b', false)] },
      ignored,
    );
    expect(request.strict_tools).toBeUndefined();
    expect(ignored.list()).toEqual(['store', 'tools[].function.strict']);
    expect(toCohereChatRequest({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], tools: [tool('a', true)] }).strict_tools).toBe(true);
  });

  it.each([
    [{ n: 2 }, 'n'],
    [{ logit_bias: { 1: 2 } }, 'logit_bias'],
    [{ parallel_tool_calls: false }, 'parallel_tool_calls'],
    [
      {
        tool_choice: { type: 'function', function: { name: 'b' } },
        tools: [
          { type: 'function', function: { name: 'a' } },
          { type: 'function', function: { name: 'b' } },
        ],
      },
      'tool_choice',
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }, 'messages[0].content[0].type'],
    [{ messages: [{ role: 'user', content: 'hi', name: 'bob' }] }, 'messages[0].name'],
    [
      { messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }] }] },
      'messages[0].tool_calls[0].function.arguments',
    ],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
    [{ messages: 'hi' }, 'messages'],
  ])('refuses %j with a 400 naming %s', (fields, param) => {
    const error = refusal({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...fields });
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });
});

describe('Cohere answers', () => {
  it('a text answer as a chat.completion with the billed usage', () => {
    const completion = toChatCompletion(fixture('chat.json'), MODEL);
    expect(completion).toMatchObject({
      id: 'c14c80c3-18eb-4519-9460-6c92edd8cfb4',
      object: 'chat.completion',
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: 'LLMs are neural networks trained on large amounts of text.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 11, total_tokens: 16 },
    });
  });

  it('a tool call answer: the plan as content, the calls as OpenAI tool calls', () => {
    const completion = toChatCompletion(fixture('chat-tool-call.json'), MODEL);
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: 'I will look up the weather in Toronto.',
        refusal: null,
        tool_calls: [{ id: 'get_weather_1byjy32y4hvq', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Toronto"}' } }],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  it('errors in OpenAI shape', () => {
    expect(toOpenAIError(401, { id: 'x', message: 'invalid api token' })).toEqual({
      error: { message: 'invalid api token', type: 'authentication_error', param: null, code: null },
    });
    expect(toOpenAIError(502, '<html>bad gateway</html>').error).toMatchObject({ message: '<html>bad gateway</html>', type: 'api_error' });
  });
});

describe('Cohere embed and rerank', () => {
  it('embed: texts with the default input_type, float vectors encoded as asked', () => {
    expect(toCohereEmbedRequest({ model: 'embed-v4.0', input: 'a', dimensions: 256, encoding_format: 'base64', user: 'u' })).toEqual({
      model: 'embed-v4.0',
      texts: ['a'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 256,
    });
    expect(() => toCohereEmbedRequest({ model: 'embed-v4.0', input: [1, 2] })).toThrow(/token ids/);
    const answer = { id: 'e', embeddings: { float: [[0.5, -1]] }, meta: { billed_units: { input_tokens: 3 } } };
    expect(toOpenAIEmbeddings(answer, { model: 'embed-v4.0' })).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.5, -1] }],
      model: 'embed-v4.0',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    const encoded = toOpenAIEmbeddings(answer, { model: 'embed-v4.0', encoding_format: 'base64' }) as any;
    expect(Array.from(new Float32Array(new Uint8Array(Buffer.from(encoded.data[0].embedding, 'base64')).buffer))).toEqual([0.5, -1]);
  });

  it('rerank: documents as strings, return_documents and user kept by the gateway, search units as usage', () => {
    expect(
      toCohereRerankRequest({ model: 'rerank-v3.5', query: 'q', documents: ['a', { text: 'b' }], return_documents: true, user: 'u', max_tokens_per_doc: 512 }),
    ).toEqual({
      model: 'rerank-v3.5',
      query: 'q',
      documents: ['a', 'b'],
      max_tokens_per_doc: 512,
    });
    expect(
      fromCohereRerank({ id: 'r', results: [{ index: 1, relevance_score: 0.9 }], meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } }),
    ).toEqual({
      id: 'r',
      results: [{ index: 1, relevance_score: 0.9 }],
      usage: { search_units: 1 },
    });
  });
});
