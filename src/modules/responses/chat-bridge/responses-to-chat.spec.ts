import { GatewayError } from '../../../common/errors/gateway-error';
import { responsesToChatBody } from './responses-to-chat';

const translate = (body: Record<string, unknown>) => responsesToChatBody({ model: 'claude-sonnet-4-5', input: 'hi', ...body }, 'anthropic');

function refusal(body: Record<string, unknown>): { param: string | null; message: string } {
  try {
    translate(body);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    const gatewayError = error as GatewayError;
    expect(gatewayError.status).toBe(400);
    return { param: gatewayError.param, message: gatewayError.message };
  }
  throw new Error('expected a 400');
}

describe('responsesToChatBody', () => {
  it('maps a string input, instructions and the sampling fields', () => {
    const { chat, ignored } = translate({
      instructions: 'Be brief.',
      max_output_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      user: 'u1',
      stream: true,
      metadata: { a: 'b' },
    });
    expect(chat).toEqual({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      max_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      user: 'u1',
      stream: true,
    });
    expect(ignored).toEqual([]);
  });

  it('maps message items by role, with text and image parts', () => {
    const { chat } = translate({
      input: [
        {
          type: 'message',
          role: 'developer',
          content: [
            { type: 'input_text', text: 'Rule one. ' },
            { type: 'input_text', text: 'Rule two.' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'https://x.example.com/a.png', detail: 'high' },
          ],
        },
        { role: 'assistant', content: [{ type: 'output_text', text: 'A cat.' }] },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Rule one. Rule two.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://x.example.com/a.png', detail: 'high' } },
        ],
      },
      { role: 'assistant', content: 'A cat.' },
      { role: 'user', content: 'thanks' },
    ]);
  });

  it('turns function calls into assistant tool calls (parallel ones merged) and outputs into tool messages; reasoning items dropped', () => {
    const { chat } = translate({
      input: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
        { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'rainy' }] },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: 'rainy' },
    ]);
  });

  it('maps flat function tools, tool_choice and parallel_tool_calls; flattens namespaces', () => {
    const { chat, namespaced } = translate({
      tools: [
        { type: 'function', name: 'f', description: 'd', parameters: { type: 'object' }, strict: true },
        { type: 'namespace', name: 'agents', description: 'Sub-agents', tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object' } }] },
      ],
      tool_choice: { type: 'function', name: 'f' },
      parallel_tool_calls: false,
      input: [{ type: 'function_call', call_id: 'c1', name: 'spawn', namespace: 'agents', arguments: '{}' }],
    });
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } },
      { type: 'function', function: { name: 'agents__spawn', parameters: { type: 'object' } } },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'f' } });
    expect(chat.parallel_tool_calls).toBe(false);
    expect(chat.messages[0]).toMatchObject({ tool_calls: [{ function: { name: 'agents__spawn' } }] });
    expect(namespaced.get('agents__spawn')).toEqual({ namespace: 'agents', name: 'spawn' });
  });

  it('leaves out the tools OpenAI hosts, naming them as ignored; only the function tools reach the provider', () => {
    const { chat, ignored } = translate({
      tools: [
        { type: 'web_search', external_web_access: true },
        { type: 'function', name: 'f' },
        { type: 'file_search', vector_store_ids: ['vs_1'] },
      ],
    });
    expect(chat.tools).toEqual([{ type: 'function', function: { name: 'f' } }]);
    expect(ignored).toEqual(['tools.web_search', 'tools.file_search']);
    // Nothing but hosted tools: the chat body has no tools at all (OpenAI refuses an empty list).
    expect(translate({ tools: [{ type: 'web_search' }], tool_choice: 'auto' }).chat).not.toHaveProperty('tools');
  });

  it('narrows the tools to allowed_tools', () => {
    const tools = [
      { type: 'function', name: 'a' },
      { type: 'function', name: 'b' },
    ];
    const { chat } = translate({ tools, tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }] } });
    expect(chat.tools?.map((tool) => tool.function.name)).toEqual(['b']);
    expect(chat.tool_choice).toBe('required');
  });

  it('drops tool_choice and parallel_tool_calls without tools', () => {
    const { chat } = translate({ tool_choice: 'required', parallel_tool_calls: true });
    expect(chat).not.toHaveProperty('tool_choice');
    expect(chat).not.toHaveProperty('parallel_tool_calls');
  });

  it('maps reasoning effort and text formats', () => {
    expect(translate({ reasoning: { effort: 'low' } }).chat.reasoning_effort).toBe('low');
    expect(translate({ reasoning: { effort: 'xhigh' } }).chat.reasoning_effort).toBe('high');
    expect(translate({ text: { format: { type: 'json_object' } } }).chat.response_format).toEqual({ type: 'json_object' });
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(translate({ text: { format: { type: 'json_schema', name: 'out', schema, strict: true } } }).chat.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'out', schema, strict: true },
    });
    expect(translate({ text: { format: { type: 'text' }, verbosity: 'medium' } }).chat).not.toHaveProperty('response_format');
  });

  it('names the delivery-only fields it leaves out, and only when they ask for something', () => {
    const { chat, ignored } = translate({
      store: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
      service_tier: 'flex',
      truncation: 'auto',
      client_metadata: { turn_id: 't' },
      reasoning: { summary: 'auto' },
      text: { verbosity: 'low' },
    });
    expect(ignored.sort()).toEqual([
      'client_metadata',
      'include',
      'prompt_cache_key',
      'reasoning.summary',
      'service_tier',
      'store',
      'text.verbosity',
      'truncation',
    ]);
    expect(Object.keys(chat).sort()).toEqual(['messages', 'model']);
    expect(
      translate({ store: false, include: [], service_tier: 'auto', truncation: 'disabled', background: false, top_logprobs: 0, max_tool_calls: 3 }).ignored,
    ).toEqual([]);
  });

  it.each([
    [{ tools: [{ type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com' }] }, 'tools[0].type', /built-in tool "mcp".*provider anthropic/],
    [{ tools: [{ type: 'custom', name: 'apply_patch', format: { type: 'grammar' } }] }, 'tools[0].type', /"custom"/],
    [{ tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'custom', name: 'x' }] }] }, 'tools[0].tools[0].type', /"custom" in a namespace/],
    [{ previous_response_id: 'resp_1' }, 'previous_response_id', /stored by the provider/],
    [{ conversation: 'conv_1' }, 'conversation', /conversation/],
    [{ background: true }, 'background', /background/],
    [{ top_logprobs: 2 }, 'top_logprobs', /top_logprobs/],
    [{ something_new: true }, 'something_new', /something_new needs a provider with the Responses API/],
    [{ tool_choice: { type: 'web_search_preview' }, tools: [{ type: 'function', name: 'f' }] }, 'tool_choice.type', /web_search_preview/],
    [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type', /"item_reference"/],
    [{ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] }, 'input[0].content[0].type', /"input_file"/],
    [{ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }, 'input[0].content[0].file_id', /file_id/],
    [
      { input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'x' }] }] },
      'input[0].output[0].type',
      /function call output/,
    ],
  ])('refuses what cannot be kept: %j', (body, param, message) => {
    const problem = refusal(body);
    expect(problem.param).toBe(param);
    expect(problem.message).toMatch(message);
  });

  it.each([
    [{ input: undefined }, 'input'],
    [{ input: 42 }, 'input'],
    [{ input: [null] }, 'input[0]'],
    [{ input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [{ input: [{ role: 'user', content: 7 }] }, 'input[0].content'],
    [{ input: [{ role: 'user', content: [{ type: 'input_text', text: 1 }] }] }, 'input[0].content[0].text'],
    [{ input: [{ role: 'user', content: [{}] }] }, 'input[0].content[0].type'],
    [{ input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }, 'input[0].arguments'],
    [{ input: [{ type: 'function_call_output', call_id: 'c', output: 5 }] }, 'input[0].output'],
    [{ instructions: ['x'] }, 'instructions'],
    [{ tools: 'all' }, 'tools'],
    [{ tools: [{ type: 'function' }] }, 'tools[0].name'],
    [{ tools: [{ type: 'function', name: 'f', parameters: 'x' }] }, 'tools[0].parameters'],
    [{ tools: [{ type: 'function', name: 'f' }], tool_choice: 'sometimes' }, 'tool_choice'],
    [{ reasoning: 'high' }, 'reasoning'],
    [{ reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    [{ text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema'],
    [{ text: { format: { type: 'xml' } } }, 'text.format.type'],
    [{ temperature: 'hot' }, 'temperature'],
    [{ max_output_tokens: 0 }, 'max_output_tokens'],
    [{ metadata: [] }, 'metadata'],
    [{ stream: 'yes' }, 'stream'],
  ])('a malformed %j is a 400 naming the field', (body, param) => {
    expect(refusal(body).param).toBe(param);
  });
});
