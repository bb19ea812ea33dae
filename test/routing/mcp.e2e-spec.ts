/**
 * The MCP gateway end to end (issue 23, CONTRACT section 10): a real MCP server built with
 * the official SDK (test/support/mcp-test-server.ts, checking its credential) registered
 * once; the gateway running its tools for models of every format (OpenAI chat and
 * Responses, Anthropic Messages, Gemini through the chat translation), JSON and streamed,
 * driven by the official OpenAI and Anthropic SDKs; and the gateway as an MCP server for
 * the MCP SDK's own client. The mock models follow the tool script of
 * test/support/mock-tool-script.ts: `tools: <name> {args} | …` in the user's message.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, createApiKey, createConfig, createVirtualKey, logOf, waitFor } from '../support/e2e-helpers';
import { startMcpTestServer, MCP_TEST_DOC, type McpTestServer } from '../support/mcp-test-server';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const SEARCH = 'tools: docs__search_docs {"query":"refunds"}';
const SEARCH_RESULT = `Results for "refunds": ${MCP_TEST_DOC}`;

describe('MCP gateway', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let mcp: McpTestServer;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mcp = await startMcpTestServer();
    gateway = await startTestGateway({ MCP_ALLOWED_NETWORKS: '127.0.0.1', MCP_TIMEOUT_MS: '1500', MCP_MAX_TURNS: '3' });
    const registered = await call(gateway, '/v1/mcp-servers', {
      method: 'POST',
      body: { name: 'Internal docs', slug: 'docs', url: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` }, description: 'The internal documentation' },
    });
    expect(registered.status).toBe(201);
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: 'sk-openai-1', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: 'sk-ant-1', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'gemini-prod', provider: 'google', key: 'gemini-key-1', custom_host: `${mock.url}/v1beta` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    await mcp?.close();
  });

  beforeEach(() => mock.reset());

  const openai = (virtualKey: string, headers: Record<string, string> = { 'x-gateway-mcp': 'docs' }, gatewayKey = gateway.adminKey) =>
    new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gatewayKey, 'x-gateway-virtual-key': virtualKey, ...headers },
    });
  const anthropic = (virtualKey: string) =>
    new Anthropic({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': virtualKey, 'x-gateway-mcp': 'docs' },
    });

  /** The request's row, its tool-call rows and the other rows of its trace, once all are written. */
  async function traceOf(requestId: string | null, toolCalls = 1) {
    const row = await logOf(gateway, requestId);
    const trace = await waitFor(async () => {
      const page = await call(gateway, `/v1/logs?trace_id=${encodeURIComponent(row.trace_id)}&limit=100`);
      return page.body.data.length >= toolCalls + 2 ? page.body.data : null;
    });
    return {
      row,
      tools: trace.filter((r: any) => r.operation === 'mcp.tools.call'),
      rounds: trace.filter((r: any) => r.operation !== 'mcp.tools.call' && r.id !== row.id),
    };
  }

  describe('tools run by the gateway for any model', () => {
    it('chat completions (OpenAI): offers the tools, runs the call, answers with its result and logs every round and call', async () => {
      const { data, response } = await openai('openai-prod')
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: SEARCH }] })
        .withResponse();
      expect(data.choices[0].message.content).toBe(`results: ${SEARCH_RESULT}`);
      expect(data.choices[0].message.tool_calls ?? []).toEqual([]);

      const [first, second] = mock.requests.map((request) => request.body);
      expect(first.tools.map((tool: any) => tool.function.name)).toEqual(['docs__search_docs', 'docs__add', 'docs__slow', 'docs__fail']);
      expect(second.messages.at(-1)).toMatchObject({ role: 'tool', content: SEARCH_RESULT });
      expect(mock.requests).toHaveLength(2);

      const { row, tools, rounds } = await traceOf(response.headers.get('x-gateway-request-id'));
      expect(row.request_body.tools).toBeUndefined(); // the client's body, not the gateway's
      expect(row.tool_calls).toEqual([expect.objectContaining({ round: 1, server: 'docs', tool: 'search_docs', is_error: false, log_id: tools[0].id })]);
      expect(tools[0]).toMatchObject({ operation: 'mcp.tools.call', provider: 'mcp:docs', model: 'search_docs', status_code: 200, error: null, cost_usd: 0 });
      expect(tools[0].request_body).toEqual({ server: 'docs', tool: 'search_docs', arguments: { query: 'refunds' } });
      expect(JSON.stringify(tools[0])).not.toContain(mcp.token);
      // The first round is a row of its own, with its usage.
      expect(rounds).toHaveLength(1);
      expect(rounds[0]).toMatchObject({ status_code: 200, error: null });
      expect(rounds[0].prompt_tokens).toBeGreaterThan(0);
      // One request as the client saw it: the round and the call nested under its row.
      expect(row).toMatchObject({ kind: 'request', parent_id: null, nested_rows: 2, failed_attempts: 0 });
      expect(rounds[0]).toMatchObject({ kind: 'tool_round', parent_id: row.id });
      expect(tools[0]).toMatchObject({ kind: 'tool_call', parent_id: row.id });
    });

    it('chat completions streamed, parallel calls over two rounds, to Gemini through the translation', async () => {
      const stream = openai('gemini-prod').chat.completions.stream({
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'tools: docs__add {"a":1,"b":2} ; docs__search_docs {"query":"x"} | docs__add {"a":3,"b":4}' }],
      });
      const completion = await stream.finalChatCompletion();
      expect(completion.choices[0].message.content).toBe(`results: 3 / Results for "x": ${MCP_TEST_DOC} / 7`);
      expect(mock.requests).toHaveLength(3);
      expect(mock.requests[0].path).toContain(':streamGenerateContent');
    });

    it('messages natively to Anthropic, JSON and streamed', async () => {
      const message = await anthropic('anthropic-prod').messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 200,
        messages: [{ role: 'user', content: SEARCH }],
      });
      expect(message.content).toEqual([{ type: 'text', text: `results: ${SEARCH_RESULT}` }]);
      expect(mock.requests[0].body.tools).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'docs__add', input_schema: expect.objectContaining({ type: 'object' }) })]),
      );
      expect(mock.requests[1].body.messages.at(-1)).toEqual({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: expect.stringMatching(/^toolu_/), content: SEARCH_RESULT }],
      });

      mock.reset();
      const streamed = await anthropic('anthropic-prod')
        .messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 200, messages: [{ role: 'user', content: 'tools: docs__add {"a":20,"b":22}' }] })
        .finalMessage();
      expect(streamed.content).toEqual([{ type: 'text', text: 'results: 42' }]);
    });

    it('messages bridged to OpenAI chat', async () => {
      const message = await anthropic('openai-prod').messages.create({ model: 'gpt-4o-mini', max_tokens: 200, messages: [{ role: 'user', content: SEARCH }] });
      expect(message.content).toEqual([{ type: 'text', text: `results: ${SEARCH_RESULT}` }]);
      expect(mock.requests[1].body.messages.at(-1)).toMatchObject({ role: 'tool', content: SEARCH_RESULT });
    });

    it('responses (OpenAI), JSON and streamed', async () => {
      const response = await openai('openai-prod').responses.create({ model: 'gpt-4o-mini', input: SEARCH });
      expect(response.output_text).toBe(`results: ${SEARCH_RESULT}`);
      expect(mock.requests[1].body.input.at(-1)).toMatchObject({ type: 'function_call_output', output: SEARCH_RESULT });

      mock.reset();
      const streamed = await openai('openai-prod').responses.stream({ model: 'gpt-4o-mini', input: 'tools: docs__add {"a":2,"b":2}' }).finalResponse();
      expect(streamed.output_text).toBe('results: 4');
    });

    it("Gemini's own API (@google/genai): functionDeclarations offered, the call run, its result sent as a functionResponse; natively and bridged", async () => {
      const genai = (virtualKey: string) =>
        new GoogleGenAI({
          apiKey: gateway.adminKey,
          httpOptions: { baseUrl: gateway.url, headers: { 'x-gateway-virtual-key': virtualKey, 'x-gateway-mcp': 'docs' }, retryOptions: { attempts: 1 } },
        });
      const answer = await genai('gemini-prod').models.generateContent({ model: 'gemini-2.5-flash', contents: SEARCH });
      expect(answer.text).toBe(`results: ${SEARCH_RESULT}`);
      expect(answer.functionCalls ?? []).toEqual([]);
      const [first, second] = mock.requests.map((request) => request.body);
      expect(first.tools.at(-1).functionDeclarations.map((declaration: any) => declaration.name)).toEqual([
        'docs__search_docs',
        'docs__add',
        'docs__slow',
        'docs__fail',
      ]);
      expect(second.contents.at(-1)).toEqual({
        role: 'user',
        parts: [{ functionResponse: { name: 'docs__search_docs', response: { output: SEARCH_RESULT } } }],
      });

      mock.reset();
      const chunks: string[] = [];
      for await (const chunk of await genai('gemini-prod').models.generateContentStream({
        model: 'gemini-2.5-flash',
        contents: 'tools: docs__add {"a":20,"b":22}',
      }))
        chunks.push(chunk.text ?? '');
      expect(chunks.join('')).toBe('results: 42');

      mock.reset();
      const bridged = await genai('openai-prod').models.generateContent({ model: 'gpt-4o-mini', contents: SEARCH });
      expect(bridged.text).toBe(`results: ${SEARCH_RESULT}`);
      expect(mock.requests[1].body.messages.at(-1)).toMatchObject({ role: 'tool', content: SEARCH_RESULT });
    });

    it("hands the client's own tool calls back, leaving out the MCP calls it could not answer", async () => {
      const callsBefore = mcp.stats.toolCalls;
      const weather = {
        type: 'function' as const,
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      };
      const completion = await openai('openai-prod').chat.completions.create({
        model: 'gpt-4o-mini',
        tools: [weather],
        messages: [{ role: 'user', content: 'tools: docs__add {"a":1,"b":1} ; get_weather {"city":"Paris"}' }],
      });
      const calls = completion.choices[0].message.tool_calls!;
      expect(calls.map((toolCall) => (toolCall as { function: { name: string } }).function.name)).toEqual(['get_weather']);
      expect(mock.requests).toHaveLength(1);
      expect(mcp.stats.toolCalls).toBe(callsBefore); // the MCP call was not run: the client's turn comes first

      // Streamed, the same answer is rendered as chunks.
      mock.reset();
      const streamed = await openai('openai-prod')
        .chat.completions.stream({
          model: 'gpt-4o-mini',
          tools: [weather],
          messages: [{ role: 'user', content: 'tools: docs__add {"a":1,"b":1} ; get_weather {"city":"Paris"}' }],
        })
        .finalChatCompletion();
      expect(streamed.choices[0].message.tool_calls!.map((toolCall) => (toolCall as { function: { name: string } }).function.name)).toEqual(['get_weather']);
      expect(streamed.choices[0].finish_reason).toBe('tool_calls');
    });

    it('the config names the servers (mcp_servers) instead of the header', async () => {
      await createConfig(gateway, 'with-docs', { virtual_key: 'openai-prod', mcp_servers: ['docs'] });
      const completion = await new OpenAI({
        baseURL: `${gateway.url}/v1`,
        apiKey: 'unused',
        maxRetries: 0,
        defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': 'with-docs' },
      }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'tools: docs__add {"a":5,"b":5}' }] });
      expect(completion.choices[0].message.content).toBe('results: 10');
    });
  });

  describe('bad input and faults inside the loop', () => {
    it('arguments off the schema, a failing tool and a slow one become error results the model reads', async () => {
      const { data, response } = await openai('openai-prod')
        .chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'tools: docs__add {"a":"one"} ; docs__fail ; docs__slow {"ms":5000}' }],
        })
        .withResponse();
      const [bad, failed, slow] = String(data.choices[0].message.content)
        .replace(/^results: /, '')
        .split(' / ');
      expect(bad).toMatch(/^Error: .*do not match its input schema/);
      expect(failed).toBe('the tool failed on purpose');
      expect(slow).toMatch(/did not answer .*1500 ms/);
      const { row, tools } = await traceOf(response.headers.get('x-gateway-request-id'), 3);
      expect(row.tool_calls.map((toolCall: any) => [toolCall.tool, toolCall.is_error])).toEqual([
        ['add', true],
        ['fail', true],
        ['slow', true],
      ]);
      expect(tools.find((r: any) => r.model === 'add')).toMatchObject({ status_code: 400, error: { type: 'mcp_tool_error', code: 'invalid_arguments' } });
    });

    it('stops at MCP_MAX_TURNS with a clear error', async () => {
      const response = await call(gateway, '/v1/chat/completions', {
        method: 'POST',
        headers: { 'x-gateway-virtual-key': 'openai-prod', 'x-gateway-mcp': 'docs' },
        body: {
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'tools: docs__add {"a":1,"b":1} | docs__add {"a":1,"b":1} | docs__add {"a":1,"b":1} | docs__add {"a":1,"b":1}' }],
        },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'mcp_max_turns', message: expect.stringContaining('3 rounds') });
      expect(mock.requests).toHaveLength(3);
    });

    it('an unknown server is a 400, a server the key may not use a 403, a bad header a 400', async () => {
      const unknown = await call(gateway, '/v1/chat/completions', {
        method: 'POST',
        headers: { 'x-gateway-virtual-key': 'openai-prod', 'x-gateway-mcp': 'nope' },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.code).toBe('unknown_mcp_server');

      const user = await createApiKey(gateway, { name: 'no-mcp', role: 'user' });
      const denied = await call(gateway, '/v1/chat/completions', {
        method: 'POST',
        apiKey: user.key,
        headers: { 'x-gateway-virtual-key': 'openai-prod', 'x-gateway-mcp': 'docs' },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe('mcp_server_not_allowed');

      const bad = await call(gateway, '/v1/chat/completions', {
        method: 'POST',
        headers: { 'x-gateway-virtual-key': 'openai-prod', 'x-gateway-mcp': 'Docs!' },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.param).toBe('x-gateway-mcp');
      expect(mock.requests).toHaveLength(0);
    });

    it('rate limits and guardrails hold for every model round, not only the first', async () => {
      const limited = await createApiKey(gateway, {
        name: 'two-per-minute',
        role: 'user',
        allowed_mcp_servers: ['docs'],
        rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }],
      });
      const twoSteps = 'tools: docs__add {"a":1,"b":1} | docs__add {"a":2,"b":2}';
      const throttled = await call(gateway, '/v1/chat/completions', {
        method: 'POST',
        apiKey: limited.key,
        headers: { 'x-gateway-virtual-key': 'openai-prod', 'x-gateway-mcp': 'docs' },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: twoSteps }] },
      });
      expect(throttled.status).toBe(429);
      expect(mock.requests).toHaveLength(2); // the third round was refused

      mock.reset();
      // A guardrail on the request text sees the tool results fed back in round 2.
      const guarded = {
        virtual_key: 'openai-prod',
        input_guardrails: [{ name: 'no-doc-leaks', deny: true, checks: [{ type: 'contains', words: ['gateway guide'], operator: 'none' }] }],
      };
      const denied = await call(gateway, '/v1/chat/completions', {
        method: 'POST',
        headers: { 'x-gateway-config': JSON.stringify(guarded), 'x-gateway-mcp': 'docs' },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: SEARCH }] },
      });
      expect(denied.status).toBe(446);
      expect(mock.requests).toHaveLength(1);
    });

    it("a key's allowed_tools narrows what the model is offered", async () => {
      const user = await createApiKey(gateway, { name: 'adder', role: 'user', allowed_mcp_servers: ['docs'], allowed_tools: { docs: ['add'] } });
      const completion = await openai('openai-prod', { 'x-gateway-mcp': 'docs' }, user.key).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: SEARCH }],
      });
      expect(completion.choices[0].message.content).toBe('no tool docs__search_docs');
      expect(mock.requests[0].body.tools.map((tool: any) => tool.function.name)).toEqual(['docs__add']);
    });
  });

  describe('the registry', () => {
    it("lists a server's tools as it lists them now, each with whether the allow-list lets callers use it", async () => {
      expect((await call(gateway, '/v1/mcp-servers/docs', { method: 'PATCH', body: { allowed_tools: ['search_docs', 'add'] } })).status).toBe(200);
      try {
        const listed = await call(gateway, '/v1/mcp-servers/docs/tools');
        expect(listed.status).toBe(200);
        expect(listed.body.data.map((tool: any) => [tool.name, tool.allowed])).toEqual([
          ['search_docs', true],
          ['add', true],
          ['slow', false],
          ['fail', false],
        ]);
        expect(listed.body.data[0].description).toEqual(expect.any(String));
        expect((await call(gateway, '/v1/mcp-servers/nope/tools')).status).toBe(404);
      } finally {
        await call(gateway, '/v1/mcp-servers/docs', { method: 'PATCH', body: { allowed_tools: null } });
      }
    });
  });

  describe('the gateway as an MCP server for MCP clients', () => {
    async function connect(path: string, headers: Record<string, string>) {
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}${path}`), { requestInit: { headers } }));
      return client;
    }

    it('/v1/mcp/{slug} lists and calls the tools with only a gateway key, each call logged', async () => {
      const client = await connect('/v1/mcp/docs', { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-trace-id': 'mcp-client-trace' });
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(['search_docs', 'add', 'slow', 'fail']);
        const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
        expect(result).toMatchObject({ content: [{ type: 'text', text: '5' }], isError: false });
        const failed = await client.callTool({ name: 'fail', arguments: {} });
        expect(failed.isError).toBe(true);
      } finally {
        await client.close();
      }
      const rows = await waitFor(async () => {
        const page = await call(gateway, '/v1/logs?trace_id=mcp-client-trace');
        return page.body.data.length === 2 ? page.body.data : null;
      });
      expect(rows.map((row: any) => [row.operation, row.model, row.error?.type ?? null]).sort()).toEqual([
        ['mcp.tools.call', 'add', null],
        ['mcp.tools.call', 'fail', 'mcp_tool_error'],
      ]);
      expect(rows.every((row: any) => typeof row.latency_ms === 'number')).toBe(true);
      // An MCP client's tool call is a request of its own, not nested under another.
      expect(rows.map((row: any) => [row.kind, row.parent_id])).toEqual([
        ['request', null],
        ['request', null],
      ]);
    });

    it('/v1/mcp aggregates every server the key may use; a key sees and calls only its allowed tools', async () => {
      const user = await createApiKey(gateway, { name: 'mcp-user', role: 'user', allowed_mcp_servers: ['docs'], allowed_tools: { docs: ['add'] } });
      const client = await connect('/v1/mcp', { authorization: `Bearer ${user.key}` });
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(['docs__add']);
        expect(await client.callTool({ name: 'docs__add', arguments: { a: 1, b: 2 } })).toMatchObject({ content: [{ type: 'text', text: '3' }] });
        await expect(client.callTool({ name: 'docs__search_docs', arguments: { query: 'x' } })).rejects.toThrow(/not one this key may call/);
        await expect(client.callTool({ name: 'docs__add', arguments: { a: 'x' } })).rejects.toThrow(/a/);
      } finally {
        await client.close();
      }
    });

    it('reaches a server that speaks only the older SSE transport', async () => {
      expect(
        (
          await call(gateway, '/v1/mcp-servers', {
            method: 'POST',
            body: { name: 'Docs over SSE', slug: 'docs-sse', url: mcp.sseUrl, headers: { Authorization: `Bearer ${mcp.token}` } },
          })
        ).status,
      ).toBe(201);
      const client = await connect('/v1/mcp/docs-sse', { 'x-gateway-api-key': gateway.adminKey });
      try {
        expect(await client.callTool({ name: 'add', arguments: { a: 40, b: 2 } })).toMatchObject({ content: [{ type: 'text', text: '42' }] });
      } finally {
        await client.close();
      }
      expect(mcp.stats.sseSessions).toBeGreaterThan(0);
    });

    it('answers hostile requests with a 4xx or a JSON-RPC error, never a 5xx', async () => {
      const accept = { accept: 'application/json, text/event-stream' };
      const bodies: unknown[] = [
        {},
        [],
        'null',
        '"x"',
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 5 } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: 'not an object' } },
        { jsonrpc: '2.0', id: 3, method: 'no/such/method' },
        { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2, ['__proto__']: { polluted: true } } } },
      ];
      for (const body of bodies) {
        for (const path of ['/v1/mcp/docs', '/v1/mcp']) {
          const response = await call(gateway, path, { method: 'POST', headers: accept, body });
          expect({ path, body, status: response.status < 500 }).toEqual({ path, body, status: true });
          if (response.status === 200) expect(response.body.error ?? response.body.result).toBeDefined();
        }
      }
      // Without the Accept header the MCP spec asks for: 406, not a crash.
      expect((await call(gateway, '/v1/mcp/docs', { method: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).status).toBe(406);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('refuses an unknown server (404), a server the key may not use (403) and a missing key (401)', async () => {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
      };
      const headers = { accept: 'application/json, text/event-stream' };
      expect((await call(gateway, '/v1/mcp/nope', { method: 'POST', headers, body: initialize })).status).toBe(404);
      const user = await createApiKey(gateway, { name: 'no-mcp-2', role: 'user' });
      expect((await call(gateway, '/v1/mcp/docs', { method: 'POST', apiKey: user.key, headers, body: initialize })).status).toBe(403);
      expect((await call(gateway, '/v1/mcp/docs', { method: 'POST', apiKey: null, headers, body: initialize })).status).toBe(401);
      expect((await call(gateway, '/v1/mcp/docs', { method: 'GET' })).status).toBe(405);
    });
  });
});
