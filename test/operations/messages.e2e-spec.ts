/**
 * `POST /v1/messages` with the official `@anthropic-ai/sdk`: natively to an Anthropic
 * provider (headers mapped, MCP connector blocks untouched, secrets redacted, usage and
 * cost from the stream), and bridged through chat completions to OpenAI and Gemini.
 * The mock's rules are in test/support/mock-anthropic.ts and mock-gemini.ts.
 */
import Anthropic from '@anthropic-ai/sdk';
import { call, createVirtualKey, logOf, LOGGED_TEXT_SQL } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const ANTHROPIC_SECRET = 'sk-ant-provider-secret-333333';
const OPENAI_SECRET = 'sk-openai-provider-secret-444444';
const MCP_TOKEN = 'mcp-oauth-access-token-555555';

describe('messages through the gateway with the Anthropic SDK', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: ANTHROPIC_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: OPENAI_SECRET, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'gemini-prod', provider: 'google', key: 'gemini-key-666666', custom_host: `${mock.url}/v1beta` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  /** The Anthropic SDK as a user sets it up: a dummy key, the gateway headers as default headers. */
  const anthropic = (headers: Record<string, string> = {}, options: { authToken?: string } = {}) =>
    new Anthropic({
      baseURL: gateway.url,
      ...(options.authToken ? { authToken: options.authToken, apiKey: null } : { apiKey: 'dummy-key' }),
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers },
    });
  const VK = { 'x-gateway-virtual-key': 'anthropic-prod' };
  const HELLO = [{ role: 'user' as const, content: 'Say hello' }];

  function upstream() {
    expect(mock.requests).toHaveLength(1);
    return mock.requests[0];
  }

  describe('natively to Anthropic', () => {
    it('answers, sends the provider key instead of the dummy one, maps vendor-version and logs tokens and cost', async () => {
      const { data, response } = await anthropic(VK)
        .messages.create(
          { model: 'claude-sonnet-4-5', max_tokens: 100, messages: HELLO, metadata: { user_id: 'alice' } },
          { headers: { 'vendor-version': '2023-01-01' } },
        )
        .withResponse();
      expect(data.content).toEqual([{ type: 'text', text: 'Hello from mock' }]);
      const sent = upstream();
      expect(sent.path).toBe('/v1/messages');
      expect(sent.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.headers['anthropic-version']).toBe('2023-01-01');
      expect(sent.headers['x-gateway-api-key']).toBeUndefined();
      expect(sent.body).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: HELLO, metadata: { user_id: 'alice' } });

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'messages',
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        user: 'alice',
        status_code: 200,
        prompt_tokens: data.usage.input_tokens,
        completion_tokens: data.usage.output_tokens,
      });
      expect(log.cost_usd).toBeCloseTo((data.usage.input_tokens * 3 + data.usage.output_tokens * 15) / 1e6, 12);
      expect(log.request_headers['x-api-key']).toBe('[REDACTED]');
    });

    it('defaults anthropic-version, forwards the client anthropic-beta, and never forwards a bearer dummy key', async () => {
      await anthropic(VK, { authToken: 'dummy-bearer' }).messages.create(
        { model: 'claude-haiku-4-5', max_tokens: 50, messages: HELLO },
        { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } },
      );
      const sent = upstream();
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
      expect(sent.headers['anthropic-version']).toBe('2023-06-01');
      expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    });

    it('passes several MCP servers through and returns mcp_tool_use / mcp_tool_result blocks untouched; the token is redacted in the log', async () => {
      const servers = [
        { type: 'url' as const, url: 'https://mcp.example.com/sse', name: 'search', authorization_token: MCP_TOKEN },
        {
          type: 'url' as const,
          url: 'https://tools.example.org/mcp',
          name: 'tools',
          authorization_token: MCP_TOKEN,
          tool_configuration: { enabled: true, allowed_tools: ['echo'] },
        },
      ];
      const { data, response } = await anthropic({ ...VK, 'vendor-beta': 'mcp-client-2025-04-04' })
        .beta.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 200, messages: [{ role: 'user', content: 'echo: ping' }], mcp_servers: servers })
        .withResponse();
      const sent = upstream();
      expect(sent.headers['anthropic-beta']).toBe('mcp-client-2025-04-04');
      expect(sent.body.mcp_servers).toEqual(servers);

      const types = data.content.map((block) => block.type);
      expect(types).toEqual(['mcp_tool_use', 'mcp_tool_result', 'mcp_tool_use', 'mcp_tool_result', 'text']);
      const uses = data.content.filter((b) => b.type === 'mcp_tool_use') as Anthropic.Beta.BetaMCPToolUseBlock[];
      expect(uses.map((u) => u.server_name)).toEqual(['search', 'tools']);
      const result = data.content[1] as Anthropic.Beta.BetaMCPToolResultBlock;
      expect(result).toMatchObject({ tool_use_id: uses[0].id, is_error: false });

      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.request_body.mcp_servers.map((s: any) => s.authorization_token)).toEqual(['[REDACTED]', '[REDACTED]']);
      expect(log.response_body.content.map((b: any) => b.type)).toEqual(types);
      const stored = await gateway.dataSource.query(`select ${LOGGED_TEXT_SQL} as body, request_headers::text as headers from request_logs where id = $1`, [
        log.id,
      ]);
      expect(stored[0].body + stored[0].headers).not.toContain(MCP_TOKEN);
    });

    it('streams event by event; the log holds the assembled message, token counts with cache reads and writes, and the cost', async () => {
      const stream = anthropic(VK).messages.stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'echo: one two three' }],
      });
      const events: string[] = [];
      stream.on('streamEvent', (event) => events.push(event.type));
      const message = await stream.finalMessage();
      expect(message.content).toEqual([{ type: 'text', text: 'one two three' }]);
      expect(events[0]).toBe('message_start');
      expect(events.at(-1)).toBe('message_stop');
      expect(events).toContain('content_block_delta');
      const usage = message.usage;
      expect(usage.cache_read_input_tokens).toBe(200);
      expect(usage.cache_creation_input_tokens).toBe(50);

      const requestId = (await stream.withResponse()).response.headers.get('x-gateway-request-id');
      const log = await logOf(gateway, requestId);
      expect(log).toMatchObject({
        is_stream: true,
        status_code: 200,
        prompt_tokens: usage.input_tokens + 250,
        cached_tokens: 200,
        completion_tokens: usage.output_tokens,
      });
      expect(log.ttft_ms).toEqual(expect.any(Number));
      expect(log.response_body.content).toEqual([{ type: 'text', text: 'one two three' }]);
      const expected = (usage.input_tokens * 3 + 200 * 0.3 + 50 * 3.75 + usage.output_tokens * 15) / 1e6;
      expect(log.cost_usd).toBeCloseTo(expected, 12);
    });

    it('a malformed stream chunk ends the client stream with an error event, and the log says so', async () => {
      const response = await call(gateway, '/v1/messages', {
        headers: VK,
        body: { model: 'mock-malformed-chunk', max_tokens: 20, messages: HELLO, stream: true },
      });
      expect(response.status).toBe(200);
      expect(response.text).toContain('event: message_start');
      expect(response.text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]*not JSON/);
      expect(response.text).not.toContain('message_stop');
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.error).toMatchObject({ code: 'upstream_malformed_response' });
    });

    it("forwards Anthropic's own error event mid-stream and logs it", async () => {
      await expect(anthropic(VK).messages.stream({ model: 'mock-stream-error', max_tokens: 20, messages: HELLO }).finalMessage()).rejects.toThrow(/Overloaded/);
      await gateway.flushLogs();
      const logs = await admin(gateway, 'GET', '/v1/logs?model=mock-stream-error');
      expect(logs.body.data[0].error).toMatchObject({ code: 'overloaded_error' });
    });

    it('passes an upstream error through with its status and Anthropic body', async () => {
      const error = await anthropic(VK)
        .messages.create({ model: 'mock-error-429', max_tokens: 20, messages: HELLO })
        .catch((e) => e);
      expect(error).toBeInstanceOf(Anthropic.RateLimitError);
      expect(error.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    });
  });

  describe('validation, in Anthropic error shape', () => {
    const server = { type: 'url', url: 'https://mcp.example.com/sse', name: 'a' };
    it.each([
      ['an http:// MCP url', { mcp_servers: [{ ...server, url: 'http://mcp.example.com/sse' }] }, /mcp_servers\[0\]\.url must be an https:\/\/ URL/],
      ['an MCP server type other than url', { mcp_servers: [{ ...server, type: 'sse' }] }, /mcp_servers\[0\]\.type must be "url"/],
      [
        'two MCP servers with one name',
        { mcp_servers: [server, { ...server, url: 'https://b.example.com' }] },
        /mcp_servers\[1\]\.name 'a' is used by another/,
      ],
      [
        'a bad tool_configuration',
        { mcp_servers: [{ ...server, tool_configuration: { allowed_tools: 'echo' } }] },
        /mcp_servers\[0\]\.tool_configuration\.allowed_tools/,
      ],
      ['a max_tokens that is not a number (budgets reserve by it)', { max_tokens: 'ten' }, /^max_tokens must be a number/],
      ['a metadata.user_id that is not a string (the log records it)', { metadata: { user_id: 7 } }, /^metadata\.user_id must be a string/],
      ['no messages', { messages: [] }, /^messages should not be empty/],
    ])('%s is a 400 naming the field', async (_name, change, message) => {
      const body = { model: 'claude-sonnet-4-5', max_tokens: 10, messages: HELLO, ...change };
      const response = await call(gateway, '/v1/messages', { headers: VK, body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(message) } });
      expect(mock.requests).toHaveLength(0);
    });

    it('checks nothing else: a mid-conversation system message and fields the gateway does not know reach Anthropic untouched', async () => {
      const body = {
        model: 'claude-sonnet-4-5',
        max_tokens: 10,
        messages: [...HELLO, { role: 'system', content: [{ type: 'text', text: 'Plan mode is on.' }] }],
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
        output_config: { effort: 'medium' },
        thinking: { type: 'adaptive', display: 'omitted' },
      };
      const response = await call(gateway, '/v1/messages', { headers: { ...VK, 'anthropic-beta': 'per-turn-control-2026-07-01' }, body });
      expect(response.status).toBe(200);
      expect(upstream().body).toEqual(body);
    });

    it('a gateway error (unknown virtual key) has the Anthropic shape too', async () => {
      const error = await anthropic({ 'x-gateway-virtual-key': 'nope' })
        .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: HELLO })
        .catch((e) => e);
      expect(error).toBeInstanceOf(Anthropic.NotFoundError);
      expect(error.error).toEqual({ type: 'error', error: { type: 'not_found_error', message: "Unknown virtual key 'nope'" } });
    });
  });

  describe('bridged through chat completions', () => {
    const OPENAI = { 'x-gateway-virtual-key': 'openai-prod' };

    it('answers an OpenAI model in Anthropic shape and sends OpenAI a chat body', async () => {
      const { data, response } = await anthropic(OPENAI)
        .messages.create({
          model: 'gpt-4o-mini',
          max_tokens: 64,
          system: 'Be brief.',
          messages: [{ role: 'user', content: 'echo: bridged answer' }],
          metadata: { user_id: 'bob' },
        })
        .withResponse();
      expect(data).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'bridged answer' }], stop_reason: 'end_turn' });
      expect(data.id).toMatch(/^msg_/);
      const sent = upstream();
      expect(sent.path).toBe('/v1/chat/completions');
      expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
      expect(sent.body).toMatchObject({
        model: 'gpt-4o-mini',
        max_completion_tokens: 64,
        user: 'bob',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'echo: bridged answer' },
        ],
      });
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        operation: 'messages',
        provider: 'openai',
        user: 'bob',
        prompt_tokens: data.usage.input_tokens,
        completion_tokens: data.usage.output_tokens,
      });
      expect(log.cost_usd).toBeCloseTo((data.usage.input_tokens * 0.15 + data.usage.output_tokens * 0.6) / 1e6, 12);
    });

    it('streams an OpenAI answer as Anthropic events, tool use included', async () => {
      const stream = anthropic(OPENAI).messages.stream({
        model: 'gpt-4o-mini',
        max_tokens: 64,
        tools: [{ name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }],
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      });
      const message = await stream.finalMessage();
      const toolUse = message.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
      expect(toolUse).toMatchObject({ name: 'get_weather', input: { location: 'Paris' } });
      expect(message.stop_reason).toBe('tool_use');
      expect(message.usage.output_tokens).toBeGreaterThan(0);
      expect(upstream().body.tools).toEqual([
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
        },
      ]);
    });

    it('reaches Gemini through its chat translation', async () => {
      const data = await anthropic({ 'x-gateway-virtual-key': 'gemini-prod' }).messages.create({
        model: 'gemini-2.5-flash',
        max_tokens: 32,
        messages: [{ role: 'user', content: 'echo: via gemini' }],
      });
      expect(data.content).toEqual([{ type: 'text', text: 'via gemini' }]);
      expect(upstream().path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    });

    it('refuses MCP servers for a provider without the MCP connector (400, nothing sent)', async () => {
      const response = await call(gateway, '/v1/messages', {
        headers: OPENAI,
        body: { model: 'gpt-4o-mini', max_tokens: 10, messages: HELLO, mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'a' }] },
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/mcp_servers/) } });
      expect(mock.requests).toHaveLength(0);
    });

    it('falls back from Anthropic to OpenAI within one config, the answer still in Anthropic shape', async () => {
      const config = {
        strategy: { mode: 'fallback' },
        targets: [
          { provider: 'anthropic', api_key: ANTHROPIC_SECRET, custom_host: `${mock.url}/v1`, override_params: { model: 'mock-error-529' } },
          { provider: 'openai', api_key: OPENAI_SECRET, custom_host: `${mock.url}/v1`, override_params: { model: 'gpt-4o-mini' } },
        ],
      };
      const { data, response } = await anthropic({ 'x-gateway-config': JSON.stringify(config) })
        .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'echo: second target' }] })
        .withResponse();
      expect(data.content).toEqual([{ type: 'text', text: 'second target' }]);
      expect(response.headers.get('x-gateway-target-index')).toBe('1');
      expect(mock.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/chat/completions']);
    });

    it('caches a streamed answer and replays it as the same Anthropic events', async () => {
      const config = { provider: 'anthropic', api_key: ANTHROPIC_SECRET, custom_host: `${mock.url}/v1`, cache: { mode: 'simple' } };
      const client = anthropic({ 'x-gateway-config': JSON.stringify(config) });
      const request = { model: 'claude-haiku-4-5', max_tokens: 20, messages: [{ role: 'user' as const, content: 'echo: cached words' }] };
      const first = client.messages.stream(request);
      const miss = await first.finalMessage();
      const second = client.messages.stream(request);
      const hit = await second.finalMessage();
      expect(hit).toEqual(miss);
      expect(hit.content).toEqual([{ type: 'text', text: 'cached words' }]);
      expect((await second.withResponse()).response.headers.get('x-gateway-cache-status')).toBe('HIT');
      expect(mock.requests).toHaveLength(1);
    });

    it('turns an OpenAI error into the Anthropic error shape', async () => {
      const error = await anthropic(OPENAI)
        .messages.create({ model: 'mock-error-429', max_tokens: 10, messages: HELLO })
        .catch((e) => e);
      expect(error).toBeInstanceOf(Anthropic.RateLimitError);
      expect(error.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    });
  });
});
