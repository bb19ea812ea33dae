/**
 * `POST /v1/responses` (+ retrieve, delete, input items) with the official `openai`
 * SDK: every tool kind of the spec, reasoning, instructions, image input, the typed
 * event stream relayed event by event, usage and cost in the log, MCP headers forwarded
 * but never stored, validation, Azure, and the routing engine (fallback).
 * The mock's rules are in test/support/mock-openai-responses.ts.
 */
import { calcPrice } from '@pydantic/genai-prices';
import OpenAI from 'openai';
import { call, createVirtualKey, expectError, logOf, openai, LOGGED_TEXT_SQL } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const OPENAI_SECRET = 'sk-responses-secret-999999';
const MCP_BEARER = 'Bearer mcp-secret-token-121212';
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const TOOLS: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Weather by city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
    strict: false,
  },
  { type: 'web_search_preview', search_context_size: 'high', user_location: { type: 'approximate', country: 'FR', city: 'Paris', region: 'IDF' } },
  { type: 'file_search', vector_store_ids: ['vs_123'], max_num_results: 5, filters: { type: 'eq', key: 'team', value: 'search' } },
  { type: 'mcp', server_label: 'deepwiki', server_url: 'https://mcp.deepwiki.com/mcp', require_approval: 'never', headers: { Authorization: MCP_BEARER } },
];

describe('responses through the gateway with the OpenAI SDK', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ RETRY_BASE_DELAY_MS: '10' });
    await createVirtualKey(gateway, { slug: 'openai-prod', key: OPENAI_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'azure-prod', provider: 'azure-openai', key: 'azure-secret-131313', custom_host: mock.url });
    client = openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  it('forwards every tool kind, reasoning, instructions and an image untouched, and logs usage and cost', async () => {
    const input: OpenAI.Responses.ResponseInput = [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'echo: what is in this picture' },
          { type: 'input_image', image_url: PIXEL, detail: 'auto' },
        ],
      },
    ];
    const { data, response } = await client.responses
      .create({
        model: 'o4-mini',
        input,
        instructions: 'Answer briefly.',
        tools: TOOLS,
        tool_choice: 'auto',
        reasoning: { effort: 'low' },
        user: 'dave',
        store: true,
      })
      .withResponse();
    const sent = upstream();
    expect(sent.path).toBe('/v1/responses');
    expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
    expect(sent.body).toEqual({
      model: 'o4-mini',
      input,
      instructions: 'Answer briefly.',
      tools: TOOLS,
      tool_choice: 'auto',
      reasoning: { effort: 'low' },
      user: 'dave',
      store: true,
    });

    expect(data.object).toBe('response');
    expect(data.output_text).toContain('what is in this picture');
    const kinds = data.output.map((item) => item.type);
    expect(kinds).toEqual(expect.arrayContaining(['reasoning', 'web_search_call', 'file_search_call', 'mcp_list_tools', 'mcp_call', 'message']));
    const usage = data.usage!;
    expect(usage.output_tokens_details.reasoning_tokens).toBe(5);

    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({
      operation: 'responses',
      provider: 'openai',
      model: 'o4-mini',
      user: 'dave',
      prompt_tokens: usage.input_tokens,
      completion_tokens: usage.output_tokens,
      reasoning_tokens: 5,
      status_code: 200,
    });
    // The web_search_call item is one search, at the catalog's per-search price for o4-mini.
    expect(kinds.filter((kind) => kind === 'web_search_call')).toHaveLength(1);
    expect(log.billed_units).toEqual({ web_searches: 1 });
    const perSearch = (calcPrice({}, 'o4-mini', { providerId: 'openai' })!.model_price.web_searches_kcount as number) / 1000;
    expect(perSearch).toBeGreaterThan(0);
    expect(log.cost_usd).toBeCloseTo((usage.input_tokens * 1.1 + usage.output_tokens * 4.4) / 1e6 + perSearch, 12);
    expect(log.response_body.id).toBe(data.id);
    // MCP headers reach the provider but are never stored.
    expect(sent.body.tools[3].headers.Authorization).toBe(MCP_BEARER);
    expect(log.request_body.tools[3].headers).toEqual({ Authorization: '[REDACTED]' });
    const stored = await gateway.dataSource.query(`select ${LOGGED_TEXT_SQL} as text from request_logs where id = $1`, [log.id]);
    expect(stored[0].text).not.toContain('mcp-secret-token');
  });

  it('prices the web searches of a streamed answer at an override’s per-search price', async () => {
    expect((await admin(gateway, 'POST', '/v1/prices', { provider: 'openai', model: 'gpt-4o-mini', input: 1, output: 2, per_search: 0.05 })).status).toBe(201);
    const { data, response } = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'news of today', tools: [{ type: 'web_search' }], stream: true })
      .withResponse();
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of data) if (event.type === 'response.completed') completed = event.response;
    expect(completed!.output.some((item) => item.type === 'web_search_call')).toBe(true);
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log.billed_units).toEqual({ web_searches: 1 });
    expect(log.cost_usd).toBeCloseTo((completed!.usage!.input_tokens * 1 + completed!.usage!.output_tokens * 2) / 1e6 + 0.05, 12);
    expect((await call(gateway, '/v1/prices/openai/gpt-4o-mini', { method: 'DELETE' })).status).toBe(204);
  });

  it('relays the typed event stream event by event, in the provider order, and logs the final response', async () => {
    const direct = new OpenAI({ baseURL: `${mock.url}/v1`, apiKey: 'sk-direct', maxRetries: 0 });
    const expected: string[] = [];
    for await (const event of await direct.responses.create({ model: 'gpt-4.1-mini', input: 'echo: one two three', stream: true })) expected.push(event.type);
    mock.reset();

    const types: string[] = [];
    const sequence: number[] = [];
    let text = '';
    const stream = await client.responses.create({ model: 'gpt-4.1-mini', input: 'echo: one two three', stream: true, user: 'erin' });
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(types).toEqual(expected);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(sequence).toEqual([...sequence].sort((a, b) => a - b));
    expect(text).toBe('one two three');

    await gateway.flushLogs();
    const logs = (await call(gateway, '/v1/logs?user=erin')).body.data;
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ operation: 'responses', is_stream: true, status_code: 200, completion_tokens: 3 });
    expect(logs[0].ttft_ms).toEqual(expect.any(Number));
    expect(logs[0].response_body.status).toBe('completed');
    expect(logs[0].cost_usd).toBeGreaterThan(0);
  });

  it('logs a stream as a success when the client hangs up right after response.completed (as Codex does), and as client_closed_request before it', async () => {
    /** Reads the stream until `until` has arrived, then drops the connection while the provider still holds it open. */
    const readUntil = async (model: string, until: string) => {
      const abort = new AbortController();
      const response = await fetch(`${gateway.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'openai-prod' },
        body: JSON.stringify({ model, input: 'echo: one two three', stream: true }),
        signal: abort.signal,
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let seen = '';
      while (!seen.includes(until)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${until}`);
        seen += decoder.decode(value, { stream: true });
      }
      abort.abort();
      return response.headers.get('x-gateway-request-id');
    };
    // mock-slow-<ms>: events that far apart, and the provider ends the stream that long after its last one.
    const whole = await readUntil('mock-slow-150', 'event: response.completed');
    const early = await readUntil('mock-slow-150', 'event: response.output_text.delta');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await logOf(gateway, whole)).toMatchObject({ status_code: 200, error: null, completion_tokens: 3 });
    expect(await logOf(gateway, early)).toMatchObject({ error: { code: 'client_closed_request' } });
  });

  it('ends a stream whose event is malformed with an OpenAI error event', async () => {
    const response = await call(gateway, '/v1/responses', {
      headers: { 'x-gateway-virtual-key': 'openai-prod' },
      body: { model: 'mock-malformed-chunk', input: 'hi', stream: true },
    });
    expect(response.status).toBe(200);
    expect(response.text).toContain('event: response.created');
    expect(response.text).toMatch(/event: error\ndata: \{"type":"error","code":"upstream_malformed_response"/);
    // Numbered after the snapshot the client saw (response.created, sequence 0), which the log keeps as the answer so far.
    expect(response.text).toMatch(/"sequence_number":1\}\n\n$/);
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log.error).toMatchObject({ code: 'upstream_malformed_response' });
    expect(log.response_body).toMatchObject({ object: 'response', status: 'in_progress', output: [] });
  });

  it('retrieves, lists input items of, and deletes a stored response at the same provider', async () => {
    const created = await client.responses.create({ model: 'gpt-4.1-mini', input: 'echo: keep me' });
    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved).toMatchObject({ id: created.id, status: 'completed' });
    const items = await client.responses.inputItems.list(created.id);
    expect(items.data.length).toBeGreaterThan(0);
    const deleted = await client.responses.delete(created.id).then(() => true);
    expect(deleted).toBe(true);
    const gone = await client.responses.retrieve(created.id).catch((e) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect(mock.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /v1/responses',
      `GET /v1/responses/${created.id}`,
      `GET /v1/responses/${created.id}/input_items`,
      `DELETE /v1/responses/${created.id}`,
      `GET /v1/responses/${created.id}`,
    ]);

    await gateway.flushLogs();
    const logs = (await call(gateway, '/v1/logs?limit=5')).body.data.map((l: any) => l.operation);
    expect(logs).toEqual(expect.arrayContaining(['responses.retrieve', 'responses.input_items', 'responses.delete']));
  });

  it.each([
    [
      'an mcp tool without server_label',
      { tools: [{ type: 'mcp', server_url: 'https://x.example.com' }] },
      'tools[0].server_label',
      /server_label is required/,
    ],
    [
      'mcp headers that are not strings',
      { tools: [{ type: 'mcp', server_label: 'x', server_url: 'https://x.example.com', headers: { a: 1 } }] },
      'tools[0].headers.a',
      /must be a string/,
    ],
    ['a model that is not a string', { model: 42 }, 'model', /model must be a string/],
    ['a stream flag that is not a boolean', { stream: 'yes' }, 'stream', /stream must be a boolean/],
  ])('%s (what the gateway acts on) is a 400 naming the field, nothing sent', async (_name, change, param, message) => {
    const response = await call(gateway, '/v1/responses', {
      headers: { 'x-gateway-virtual-key': 'openai-prod' },
      body: { model: 'gpt-4.1-mini', input: 'hi', ...change },
    });
    expectError(response, 400, { type: 'invalid_request_error', param, message });
    expect(mock.requests).toHaveLength(0);
  });

  // CONTRACT section 12: to OpenAI the gateway is a pass-through; what it does not act on is the provider's to judge.
  it.each([
    ['no input', { input: undefined }, 'input'],
    ['a bad search_context_size', { tools: [{ type: 'web_search_preview', search_context_size: 'huge' }] }, 'tools[0].search_context_size'],
    ['an unknown reasoning effort', { reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    ['an input part without text', { input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input[0].content[0].text'],
  ])('%s goes to the provider unchanged, and its 400 comes back', async (_name, change, param) => {
    const body = { model: 'gpt-4.1-mini', input: 'hi', ...change };
    const response = await call(gateway, '/v1/responses', { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body });
    expect(upstream().body).toEqual(JSON.parse(JSON.stringify(body)));
    expectError(response, 400, { type: 'invalid_request_error', param });
  });

  it('passes unknown fields and tool kinds through untouched', async () => {
    const body = {
      model: 'gpt-4.1-mini',
      input: 'hi',
      truncation: 'auto',
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
      prompt_cache_key: 'k1',
    };
    const response = await call(gateway, '/v1/responses', { headers: { 'x-gateway-virtual-key': 'openai-prod' }, body });
    expect(response.status).toBe(200);
    expect(upstream().body).toEqual(body);
  });

  it('reaches Azure OpenAI at the resource Responses URL with the api-key header', async () => {
    const azure = openai(gateway, { 'x-gateway-virtual-key': 'azure-prod' });
    const answer = await azure.responses.create({ model: 'my-gpt-4o-deployment', input: 'echo: azure' });
    expect(answer.output_text).toBe('azure');
    const sent = upstream();
    expect(sent.path).toBe('/openai/responses');
    expect(sent.query['api-version']).toBe('2025-04-01-preview');
    expect(sent.headers['api-key']).toBe('azure-secret-131313');
    expect(sent.headers.authorization).toBeUndefined();
  });

  it('goes through the routing engine: a failing target falls back to the next', async () => {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'sk-a', custom_host: `${mock.url}/v1`, override_params: { model: 'mock-error-503' } },
        { provider: 'openai', api_key: 'sk-b', custom_host: `${mock.url}/v1` },
      ],
    };
    const { data, response } = await openai(gateway, { 'x-gateway-config': JSON.stringify(config) })
      .responses.create({ model: 'gpt-4.1-mini', input: 'echo: fell back' })
      .withResponse();
    expect(data.output_text).toBe('fell back');
    expect(response.headers.get('x-gateway-target-index')).toBe('1');
    expect(mock.requests.map((r) => r.body.model)).toEqual(['mock-error-503', 'gpt-4.1-mini']);
  });

  it('serves a repeated request from the cache, and never caches a retrieve', async () => {
    const config = { provider: 'openai', api_key: 'sk-c', custom_host: `${mock.url}/v1`, cache: { mode: 'simple' } };
    const cached = openai(gateway, { 'x-gateway-config': JSON.stringify(config) });
    const miss = await cached.responses.create({ model: 'gpt-4.1-mini', input: 'echo: once' }).withResponse();
    const hit = await cached.responses.create({ model: 'gpt-4.1-mini', input: 'echo: once' }).withResponse();
    expect(hit.data).toEqual(miss.data);
    expect([miss.response.headers.get('x-gateway-cache-status'), hit.response.headers.get('x-gateway-cache-status')]).toEqual(['MISS', 'HIT']);
    await cached.responses.retrieve(miss.data.id);
    const again = await cached.responses.retrieve(miss.data.id).withResponse();
    expect(again.response.headers.get('x-gateway-cache-status')).not.toBe('HIT');
    expect(mock.requests.map((r) => r.method)).toEqual(['POST', 'GET', 'GET']);
  });

  it('passes a provider error through with its status and body', async () => {
    const error = await client.responses.create({ model: 'mock-error-400', input: 'hi' }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  });
});
