import { GatewayError } from '../../../common/errors/gateway-error';
import { IgnoredParams } from '../../../providers/ignored-params';
import { geminiToChatBody, jsonSchema } from './gemini-to-chat';

const HELLO = [{ role: 'user', parts: [{ text: 'Hi' }] }];
const request = (fields: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', contents: HELLO, ...fields });

function refusal(fields: Record<string, unknown>, provider = 'openai'): GatewayError {
  try {
    geminiToChatBody(request(fields), provider);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('geminiToChatBody', () => {
  it('maps the system instruction, roles, sampling, length, stops, candidates and the stream', () => {
    const chat = geminiToChatBody(
      request({
        stream: true,
        systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Be kind.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'Hi ' }, { text: 'there' }] },
          { role: 'model', parts: [{ text: 'Hello' }, { text: 'thinking…', thought: true }] },
          { role: 'user', parts: [{ text: 'Bye' }] },
        ],
        generationConfig: { temperature: 0.5, top_p: 0.9, maxOutputTokens: 64, stopSequences: ['END'], candidateCount: 2, seed: 7 },
      }),
      'openai',
    );
    expect(chat).toEqual({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.5,
      top_p: 0.9,
      max_completion_tokens: 64,
      stop: ['END'],
      n: 2,
      seed: 7,
      messages: [
        { role: 'system', content: 'Be brief.\nBe kind.' },
        { role: 'user', content: 'Hi there' },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'Bye' },
      ],
    });
    expect(geminiToChatBody(request({ generationConfig: { maxOutputTokens: 8 } }), 'groq').max_tokens).toBe(8);
  });

  it('pairs function responses with the calls before them, by id or else by name in order', () => {
    const chat = geminiToChatBody(
      request({
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
          {
            role: 'model',
            parts: [
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
              { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
              { functionCall: { id: 'own-id', name: 'get_time', args: {} } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { id: 'own-id', name: 'get_time', response: { output: 'noon' } } },
              { functionResponse: { name: 'get_weather', response: { output: 'sunny', unit: 'C' } } },
              { functionResponse: { name: 'get_weather', response: { output: 'rain' } } },
            ],
          },
        ],
      }),
      'openai',
    );
    expect(chat.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_gemini_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_gemini_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          { id: 'own-id', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      // Google's `{output}` form is the text itself; any other response its JSON.
      { role: 'tool', tool_call_id: 'own-id', content: 'noon' },
      { role: 'tool', tool_call_id: 'call_gemini_0', content: '{"output":"sunny","unit":"C"}' },
      { role: 'tool', tool_call_id: 'call_gemini_1', content: 'rain' },
    ]);
  });

  it('refuses a function response that answers no call, naming the part', () => {
    const error = refusal({ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'x', response: {} } }] }] });
    expect(error.param).toBe('contents[0].parts[0].functionResponse');
  });

  it('turns function declarations into tools (Gemini schema types lower-cased) and the calling mode into tool_choice', () => {
    const chat = geminiToChatBody(
      request({
        tools: [
          {
            functionDeclarations: [
              { name: 'a', description: 'A', parameters: { type: 'OBJECT', properties: { x: { type: 'STRING', nullable: true } }, propertyOrdering: ['x'] } },
              { name: 'b', parametersJsonSchema: { type: 'object', properties: {} } },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['b'] } },
      }),
      'openai',
    );
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'a', description: 'A', parameters: { type: 'object', properties: { x: { type: ['string', 'null'] } } } } },
      { type: 'function', function: { name: 'b', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'b' } });
  });

  it('maps JSON mode, a response schema and thinking', () => {
    const chat = geminiToChatBody(
      request({
        generationConfig: {
          responseMimeType: 'application/json',
          responseSchema: { type: 'ARRAY', items: { type: 'INTEGER' } },
          thinkingConfig: { thinkingBudget: 20000 },
        },
      }),
      'openai',
    );
    expect(chat.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: { type: 'array', items: { type: 'integer' } } } });
    expect(chat.reasoning_effort).toBe('high');
    expect(geminiToChatBody(request({ generationConfig: { responseMimeType: 'application/json' } }), 'openai').response_format).toEqual({
      type: 'json_object',
    });
    expect(geminiToChatBody(request({ generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }), 'openai').reasoning_effort).toBe('none');
    expect(geminiToChatBody(request({ generationConfig: { thinkingConfig: { thinkingLevel: 'LOW' } } }), 'openai').reasoning_effort).toBe('low');
  });

  it('sends inline images as data URLs and refuses other inline media', () => {
    const chat = geminiToChatBody(
      request({ contents: [{ role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] }] }),
      'openai',
    );
    expect(chat.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    });
    expect(refusal({ contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'audio/wav', data: 'AAAA' } }] }] }).param).toBe(
      'contents[0].parts[0].inlineData (audio/wav)',
    );
  });

  it('names what it ignores and refuses what chat cannot carry', () => {
    const ignored = new IgnoredParams();
    geminiToChatBody(
      request({ safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }], generationConfig: { topK: 3 } }),
      'openai',
      ignored,
    );
    expect(ignored.list()).toEqual(['safetySettings', 'generationConfig.topK']);
    expect(refusal({ cachedContent: 'cachedContents/abc' }).param).toBe('cachedContent');
    expect(refusal({ tools: [{ googleSearch: {} }] }).param).toBe('tools[0].googleSearch');
    expect(refusal({ generationConfig: { responseModalities: ['AUDIO'] } }).param).toBe('generationConfig.responseModalities');
    expect(() => geminiToChatBody(request({ safetySettings: [] }), 'openai', new IgnoredParams(true))).toThrow(/strict_params/);
  });

  it('refuses contents that are not Content objects', () => {
    expect(refusal({ contents: [{ role: 'system', parts: [] }] }).param).toBe('contents[0].role');
    expect(refusal({ contents: ['hi'] }).param).toBe('contents[0]');
    expect(refusal({ contents: [{ role: 'user' }] }).param).toBe('contents[0].parts');
  });
});

describe('jsonSchema', () => {
  it('lower-cases nested types and keeps the rest of the schema', () => {
    expect(
      jsonSchema({ type: 'OBJECT', properties: { list: { type: 'ARRAY', items: { type: 'NUMBER', format: 'float' }, minItems: 1 } }, required: ['list'] }),
    ).toEqual({
      type: 'object',
      properties: { list: { type: 'array', items: { type: 'number', format: 'float' }, minItems: 1 } },
      required: ['list'],
    });
  });
});
