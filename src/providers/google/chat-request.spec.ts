import { GatewayError } from '../../common/errors/gateway-error';
import { IgnoredParams } from '../ignored-params';
import { toGeminiRequest } from './chat-request';

const user = { role: 'user', content: 'Hi' };
const translate = (fields: Record<string, unknown>) => toGeminiRequest({ model: 'gemini-2.5-flash', messages: [user], ...fields });
const config = (fields: Record<string, unknown>) => translate(fields).generationConfig;

/** The 400 a body gets, as {message, param}. */
function rejection(body: Record<string, unknown>): { status: number; message: string; param: string | null } {
  try {
    toGeminiRequest({ model: 'gemini-2.5-flash', ...body });
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { status: error.status, message: error.message, param: error.param };
  }
  throw new Error('expected a 400');
}
const rejected = (fields: Record<string, unknown>) => rejection({ messages: [user], ...fields });

describe('toGeminiRequest: messages', () => {
  it('a system message after the first turn is a marked part of a user turn at its place, not the system instruction', () => {
    const request = toGeminiRequest({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
        { role: 'system', content: [{ type: 'text', text: 'Plan mode is on.' }] },
        { role: 'user', content: 'Go on' },
      ],
    });
    expect(request).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello' }] },
        { role: 'user', parts: [{ text: 'System message: Plan mode is on.' }, { text: 'Go on' }] },
      ],
    });
  });

  it('system and developer messages join the system instruction; assistant is model', () => {
    const request = toGeminiRequest({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Bonjour', refusal: null, annotations: [] },
        { role: 'user', content: [{ type: 'text', text: 'Encore' }] },
      ],
    });
    expect(request).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Bonjour' }] },
        { role: 'user', parts: [{ text: 'Encore' }] },
      ],
    });
  });

  it('consecutive messages of one role merge into one content', () => {
    const request = toGeminiRequest({ messages: [user, { role: 'user', content: 'again' }] });
    expect(request.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }, { text: 'again' }] }]);
  });

  it('images as data URLs and http URLs, audio as inline data', () => {
    const request = toGeminiRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.JPG?size=large', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/a/b.webp' } },
            { type: 'image_url', image_url: { url: 'http://example.com/x.gif' } },
            { type: 'image_url', image_url: { url: 'https://example.com/photo.heic' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } },
          ],
        },
      ],
    });
    expect(request.contents[0]).toEqual({
      role: 'user',
      parts: [
        { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
        { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.JPG?size=large' } },
        { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/a/b.webp' } },
        { fileData: { mimeType: 'image/gif', fileUri: 'http://example.com/x.gif' } },
        { fileData: { mimeType: 'image/heic', fileUri: 'https://example.com/photo.heic' } },
        { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
        { inlineData: { mimeType: 'audio/mp3', data: 'SUQz' } },
        { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      ],
    });
  });

  it('tool calls and tool results, the function name found by tool_call_id', () => {
    const request = toGeminiRequest({
      messages: [
        user,
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_b', content: '12:00' },
        { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: '{"temp":21}' }] },
        { role: 'tool', tool_call_id: 'call_a', content: '[1,2]' },
      ],
    });
    expect(request.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }] },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { content: '12:00' } } },
          { functionResponse: { name: 'get_weather', response: { content: { temp: 21 } } } },
          { functionResponse: { name: 'get_weather', response: { content: '[1,2]' } } },
        ],
      },
    ]);
  });

  it.each([
    [{ messages: [] }, 'messages'],
    [{ messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role'],
    [{ messages: [{ role: 'user', name: 'alice', content: 'x' }] }, 'messages[0].name'],
    [{ messages: [{ role: 'assistant', content: 'x', audio: { id: 'a' } }] }, 'messages[0].audio'],
    [{ messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
    [
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/image' } }] }] },
      'messages[0].content[0].image_url.url',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/doc.tiff' } }] }] },
      'messages[0].content[0].image_url.url',
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }] }] }, 'messages[0].content[0].image_url.url'],
    [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,rawdata' } }] }] }, 'messages[0].content[0].image_url.url'],
    [
      { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'flac' } }] }] },
      'messages[0].content[0].input_audio.format',
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] }, 'messages[0].content[0].file.file_id'],
    [{ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,x' } }] }] }, 'messages[0].content[0].type'],
    [{ messages: [{ role: 'user', content: [{ type: 'video', video: {} }] }] }, 'messages[0].content[0].type'],
  ])('a 400 naming the field: %j', (body, param) => {
    expect(rejection(body)).toMatchObject({ status: 400, param });
  });

  it('tool call arguments that do not parse, or a tool result for an unknown call, are 400s', () => {
    const call = (args: string) => ({ role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: args } }] });
    expect(rejection({ messages: [user, call('{"a":')] })).toMatchObject({
      param: 'messages[1].tool_calls[0].function.arguments',
      message: expect.stringContaining('not valid JSON'),
    });
    expect(rejection({ messages: [user, call('[1]')] }).param).toBe('messages[1].tool_calls[0].function.arguments');
    expect(rejection({ messages: [user, { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: {} }] }] }).param).toBe(
      'messages[1].tool_calls[0].type',
    );
    // The call id is only known from an earlier assistant message.
    expect(rejection({ messages: [user, { role: 'tool', tool_call_id: 'c1', content: 'x' }, call('{}')] })).toMatchObject({
      param: 'messages[1].tool_call_id',
      message: expect.stringContaining('does not match a tool call'),
    });
  });
});

describe('toGeminiRequest: parameters', () => {
  it('maps sampling and output parameters to generationConfig', () => {
    expect(
      config({
        temperature: 0.3,
        top_p: 0.9,
        max_tokens: 100,
        stop: 'END',
        n: 2,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        seed: 7,
        logprobs: true,
        top_logprobs: 3,
      }),
    ).toEqual({
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 100,
      stopSequences: ['END'],
      candidateCount: 2,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      seed: 7,
      responseLogprobs: true,
      logprobs: 3,
    });
    expect(config({ max_completion_tokens: 50, max_tokens: 100, stop: ['a', 'b'] })).toEqual({ maxOutputTokens: 50, stopSequences: ['a', 'b'] });
  });

  it('response_format: JSON mode and JSON schema', () => {
    expect(config({ response_format: { type: 'json_object' } })).toEqual({ responseMimeType: 'application/json' });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    expect(config({ response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema } } })).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(config({ response_format: { type: 'text' } })).toBeUndefined();
  });

  it('reasoning_effort as a thinking budget, with the thought summaries asked for when thinking is on', () => {
    const budget = (effort: string) => (config({ reasoning_effort: effort }) as any).thinkingConfig.thinkingBudget;
    expect(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'].map(budget)).toEqual([0, 0, 1024, 8192, 24576, 32768]);
    expect(config({ reasoning_effort: 'medium' })).toEqual({ thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });
    expect(config({ reasoning_effort: 'minimal' })).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
  });

  it("ignores what only tunes OpenAI's delivery or caching, and names it; strict_params refuses it", () => {
    const ignored = new IgnoredParams();
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }];
    const request = toGeminiRequest(
      { model: 'gemini-2.5-flash', messages: [user], prompt_cache_key: 'k', service_tier: 'auto', store: true, metadata: { a: 'b' }, tools },
      ignored,
    );
    expect(request).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      tools: [{ functionDeclarations: [{ name: 'f', description: '', parametersJsonSchema: { type: 'object' } }] }],
    });
    expect(ignored.list()).toEqual(['prompt_cache_key', 'service_tier', 'store', 'metadata', 'tools[].function.strict']);
    expect(() => toGeminiRequest({ model: 'g', messages: [user], service_tier: 'auto' }, new IgnoredParams(true))).toThrow(
      expect.objectContaining({ status: 400, param: 'service_tier' }),
    );
    expect(toGeminiRequest({ model: 'g', messages: [user], store: false }, new IgnoredParams(true))).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    });
  });

  it('function tools and every tool_choice', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false };
    const tools = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters, strict: true } },
      { type: 'function', function: { name: 'ping' } },
    ];
    const request = translate({ tools, tool_choice: 'auto', parallel_tool_calls: true });
    expect(request.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather now', parametersJsonSchema: parameters },
          { name: 'ping', description: '' },
        ],
      },
    ]);
    expect(request.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(translate({ tools, tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(translate({ tools, tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(translate({ tools, tool_choice: { type: 'function', function: { name: 'ping' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['ping'] },
    });
  });

  it('fields the gateway consumes and null parameters are left out without error', () => {
    expect(translate({ stream: true, stream_options: { include_usage: true }, user: 'u-1', temperature: null, logit_bias: null })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    });
  });

  it.each([
    [{ logit_bias: { 50256: -100 } }, 'logit_bias', 'Provider google does not support logit_bias'],
    [{ some_new_field: 1 }, 'some_new_field', 'Provider google does not support some_new_field'],
    [{ parallel_tool_calls: false }, 'parallel_tool_calls', 'Provider google does not support parallel_tool_calls: false'],
    [{ tools: [{ type: 'web_search' }] }, 'tools[0].type', 'Provider google does not support tools of type "web_search" (tools[0].type)'],
    [{ tool_choice: { type: 'allowed_tools' } }, 'tool_choice', 'Provider google does not support tool_choice {"type":"allowed_tools"}'],
    [{ response_format: { type: 'xml' } }, 'response_format.type', 'Provider google does not support response_format of type "xml"'],
    [
      { response_format: { type: 'json_schema', json_schema: { name: 'x' } } },
      'response_format.json_schema.schema',
      'response_format.json_schema.schema must be an object',
    ],
    [{ reasoning_effort: 'extreme' }, 'reasoning_effort', 'reasoning_effort must be none, minimal, low, medium, high or xhigh'],
    [{ temperature: 'hot' }, 'temperature', 'temperature must be a number'],
    [{ max_tokens: 1.5 }, 'max_tokens', 'max_tokens must be an integer'],
    [{ stop: [1] }, 'stop', 'stop must be a string or an array of strings'],
    [{ logprobs: 'yes' }, 'logprobs', 'logprobs must be a boolean'],
  ])('400 for %j', (fields, param, message) => {
    expect(rejected(fields)).toEqual({ status: 400, param, message });
  });
});
