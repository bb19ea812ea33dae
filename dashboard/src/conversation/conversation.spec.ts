import { readConversation } from './index';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

describe('readConversation', () => {
  it('reads a chat: system, user text and image, the tool call and its result paired by id, and the answer', () => {
    const conversation = readConversation({
      operation: 'chat.completions',
      request_body: {
        tools: [{ type: 'function', function: { name: 'get_weather' } }],
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather?' },
              { type: 'image_url', image_url: { url: PNG } },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: '18°C' },
        ],
      },
      response_body: { object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'Sunny.' }, finish_reason: 'stop' }] },
    });
    expect(conversation).toEqual({
      format: 'chat completions',
      tools: ['get_weather'],
      finish: 'stop',
      messages: [
        { role: 'system', parts: [{ type: 'text', text: 'Be brief.' }], name: null },
        {
          role: 'user',
          name: null,
          parts: [
            { type: 'text', text: 'Weather?' },
            { type: 'image', src: PNG, label: 'image' },
            // A remote image is named, not loaded.
            { type: 'image', src: null, label: 'https://example.com/a.png' },
          ],
        },
        { role: 'assistant', name: null, parts: [{ type: 'tool_call', id: 'c1', name: 'get_weather', args: '{"city":"Paris"}' }] },
        { role: 'tool', parts: [{ type: 'tool_result', id: 'c1', name: 'get_weather', isError: false, parts: [{ type: 'text', text: '18°C' }] }] },
      ],
      answers: [{ role: 'assistant', name: null, parts: [{ type: 'text', text: 'Sunny.' }] }],
    });
  });

  it('reads an Anthropic message: system blocks, a base64 image, a tool_result turn as the tool speaking, thinking and tool_use in the answer', () => {
    const conversation = readConversation({
      operation: 'messages',
      request_body: {
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'abc' } },
              { type: 'text', text: 'What is it?' },
            ],
          },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'look', input: { q: 1 } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a cat' }], is_error: true }] },
        ],
      },
      response_body: {
        type: 'message',
        content: [
          { type: 'thinking', thinking: 'Hmm.' },
          { type: 'text', text: 'A cat.' },
        ],
        stop_reason: 'end_turn',
      },
    })!;
    expect(conversation.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(conversation.messages[1].parts[0]).toEqual({ type: 'image', src: 'data:image/jpeg;base64,abc', label: 'image' });
    expect(conversation.messages[2].parts[0]).toEqual({ type: 'tool_call', id: 't1', name: 'look', args: '{"q":1}' });
    expect(conversation.messages[3].parts[0]).toEqual({ type: 'tool_result', id: 't1', name: 'look', isError: true, parts: [{ type: 'text', text: 'a cat' }] });
    expect(conversation.answers).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'thinking', text: 'Hmm.' },
          { type: 'text', text: 'A cat.' },
        ],
      },
    ]);
    expect(conversation.finish).toBe('end_turn');
  });

  it('reads a Responses exchange: instructions, input items, function calls and outputs, and the output items as one answer', () => {
    const conversation = readConversation({
      operation: 'responses',
      request_body: {
        instructions: 'Be brief.',
        tools: [{ type: 'function', name: 'add' }, { type: 'web_search' }],
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'Add 1 and 2' }] },
          { type: 'function_call', call_id: 'k1', name: 'add', arguments: '{"a":1,"b":2}' },
          { type: 'function_call_output', call_id: 'k1', output: '3' },
        ],
      },
      response_body: {
        object: 'response',
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        output: [
          { type: 'reasoning', summary: [] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is 3' }] },
        ],
      },
    })!;
    expect(conversation.tools).toEqual(['add', 'web_search']);
    expect(conversation.messages).toEqual([
      { role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', text: 'Add 1 and 2' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'k1', name: 'add', args: '{"a":1,"b":2}' }] },
      { role: 'tool', parts: [{ type: 'tool_result', id: 'k1', name: 'add', isError: false, parts: [{ type: 'text', text: '3' }] }] },
    ]);
    expect(conversation.answers).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'thinking', text: '(reasoning not shown by the provider)' },
          { type: 'text', text: 'It is 3' },
        ],
      },
    ]);
    expect(conversation.finish).toBe('incomplete: max_output_tokens');
  });

  it('reads a Gemini request: system instruction, turns, a function call and its response (the tools speaking), thoughts and the candidates', () => {
    const conversation = readConversation({
      operation: 'gemini.generate_content',
      request_body: {
        model: 'gemini-2.5-flash',
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        tools: [{ functionDeclarations: [{ name: 'get_weather' }] }, { googleSearch: {} }],
        contents: [
          { role: 'user', parts: [{ text: 'Weather?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18°C' } } }] },
        ],
      },
      response_body: {
        candidates: [{ content: { role: 'model', parts: [{ text: 'Warm enough', thought: true }, { text: 'Sunny.' }] }, finishReason: 'STOP' }],
      },
    })!;
    expect(conversation).toEqual({
      format: 'Gemini',
      tools: ['get_weather', 'googleSearch'],
      finish: 'STOP',
      messages: [
        { role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] },
        {
          role: 'user',
          parts: [
            { type: 'text', text: 'Weather?' },
            { type: 'image', src: PNG, label: 'image' },
          ],
        },
        { role: 'assistant', parts: [{ type: 'tool_call', id: null, name: 'get_weather', args: '{"city":"Paris"}' }] },
        { role: 'tool', parts: [{ type: 'tool_result', id: null, name: 'get_weather', isError: false, parts: [{ type: 'text', text: '{"output":"18°C"}' }] }] },
      ],
      answers: [
        {
          role: 'assistant',
          parts: [
            { type: 'thinking', text: 'Warm enough' },
            { type: 'text', text: 'Sunny.' },
          ],
        },
      ],
    });
  });

  it('reads an MCP tool call row as a call and its result', () => {
    const conversation = readConversation({
      operation: 'mcp.tools.call',
      request_body: { server: 'docs', tool: 'add', arguments: { a: 1 } },
      response_body: { content: [{ type: 'text', text: 'boom' }], isError: true },
    })!;
    expect(conversation.messages[0].parts).toEqual([{ type: 'tool_call', id: null, name: 'docs: add', args: '{"a":1}' }]);
    expect(conversation.answers[0].parts).toEqual([{ type: 'tool_result', id: null, name: 'add', isError: true, parts: [{ type: 'text', text: 'boom' }] }]);
  });

  it('keeps what it does not know as an other part, and gives null for unknown operations, missing bodies and bodies that are not objects', () => {
    const conversation = readConversation({
      operation: 'chat.completions',
      request_body: { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { format: 'wav' } }] }] },
      response_body: null,
    })!;
    expect(conversation.messages[0].parts[0]).toMatchObject({ type: 'other', label: 'audio (wav)' });
    expect(conversation.answers).toEqual([]);
    expect(readConversation({ operation: 'embeddings', request_body: { input: 'x' }, response_body: { data: [] } })).toBeNull();
    expect(readConversation({ operation: 'chat.completions', request_body: null, response_body: null })).toBeNull();
    expect(readConversation({ operation: 'messages', request_body: 'not json', response_body: [1, 2] })).toBeNull();
    expect(readConversation({ operation: 'responses', request_body: { input: 42 }, response_body: null })).toBeNull();
    expect(
      readConversation({ operation: 'chat.completions', request_body: { messages: [null, 3, 'x'] }, response_body: { choices: [{ message: 'odd' }] } }),
    ).toBeNull();
  });
});
