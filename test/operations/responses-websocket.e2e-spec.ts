/**
 * The Responses API over a WebSocket (CONTRACT section 16): `GET /v1/responses` upgraded, as
 * Codex (`supports_websockets`) and the OpenAI SDK's `ResponsesWS` open it. Relayed to an
 * OpenAI target's WebSocket mode (mock-openai-responses-socket.ts), one log row per response;
 * every other target gets a 426 JSON error, so the client falls back to HTTP at once. Each
 * response passes the key's rate limits on its own; a refused one is an `error` event and the
 * socket stays open.
 */
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import WebSocket from 'ws';
import { createApiKey, createVirtualKey, logOf } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const PROVIDER_KEY = 'sk-openai-socket-0001';

/** The server events of one response: up to and including its last (`response.completed` / `.failed` …) or an `error`. */
async function nextResponse(events: AsyncIterator<any>): Promise<any[]> {
  const seen: any[] = [];
  for (;;) {
    const { value, done } = await events.next();
    if (done) throw new Error(`The socket ended after ${seen.map((event) => event.type).join(', ')}`);
    if (value.type === 'error') return [...seen, { type: 'error', ...value.error }];
    if (value.type !== 'message') continue;
    seen.push(value.message);
    if (['response.completed', 'response.failed', 'response.incomplete'].includes(value.message.type)) return seen;
  }
}

/** The HTTP answer to an upgrade the gateway refuses. */
function refusedUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => reject(new Error('The upgrade was accepted')));
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    socket.once('error', () => undefined);
  });
}

describe('the Responses API over a WebSocket', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  const sockets: ResponsesWS[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-prod', provider: 'openai', key: PROVIDER_KEY, custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: 'sk-ant-socket-0001', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  /** The SDK's WebSocket client on the gateway, with `key` as its API key (a gk- key is the gateway key) and the routing headers. */
  function connect(key: string, headers: Record<string, string>): { socket: ResponsesWS; events: AsyncIterator<any> } {
    const socket = new ResponsesWS(new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1` }), { headers });
    sockets.push(socket);
    return { socket, events: socket[Symbol.asyncIterator]() };
  }

  it('relays two responses on one socket to OpenAI, chained by previous_response_id, each its own log row', async () => {
    const { socket, events } = connect(gateway.adminKey, { 'x-gateway-virtual-key': 'openai-prod' });
    socket.send({ type: 'response.create', model: 'gpt-4.1-mini', input: 'echo: first answer', store: false });
    const first = await nextResponse(events);
    expect(first[0].type).toBe('response.created');
    const done = first.at(-1);
    expect(done.type).toBe('response.completed');
    expect(done.response.output[0].content[0].text).toBe('first answer');

    socket.send({ type: 'response.create', model: 'gpt-4.1-mini', input: 'echo: second answer', previous_response_id: done.response.id, store: false });
    const second = (await nextResponse(events)).at(-1);
    expect(second.type).toBe('response.completed');
    expect(second.response.previous_response_id).toBe(done.response.id);

    // One upstream socket with the provider's key, never the gateway's; the events as the client sent them.
    expect(mock.responsesSockets).toHaveLength(1);
    const upstream = mock.responsesSockets[0];
    expect(upstream.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(JSON.stringify(upstream.headers)).not.toContain(gateway.adminKey);
    expect(upstream.events.map((event) => event.input)).toEqual(['echo: first answer', 'echo: second answer']);

    for (const [response, input] of [
      [done.response, 'echo: first answer'],
      [second.response, 'echo: second answer'],
    ] as const) {
      const log = await logByResponse(response.id);
      expect(log).toMatchObject({
        operation: 'responses',
        provider: 'openai',
        model: 'gpt-4.1-mini',
        status_code: 200,
        is_stream: true,
        prompt_tokens: response.usage.input_tokens,
        completion_tokens: response.usage.output_tokens,
      });
      expect(log.request_body).toMatchObject({ model: 'gpt-4.1-mini', input });
      expect(log.request_body.type).toBeUndefined();
      expect(log.response_body.id).toBe(response.id);
      expect(log.cost_usd).toBeGreaterThan(0);
    }
  });

  it('answers a target without a WebSocket mode with a 426 JSON error, so the client uses HTTP; nothing is sent', async () => {
    const answer = await refusedUpgrade(`${gateway.url.replace(/^http/, 'ws')}/v1/responses`, {
      authorization: `Bearer ${gateway.adminKey}`,
      'x-gateway-virtual-key': 'anthropic-prod',
    });
    expect(answer.status).toBe(426);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'websocket_not_supported' });
    expect(answer.body.error.message).toContain('POST /v1/responses');
    expect(mock.responsesSockets).toHaveLength(0);
    expect(mock.requests).toHaveLength(0);
  });

  it('keeps the key refusals as they are: 401 without a key', async () => {
    const answer = await refusedUpgrade(`${gateway.url.replace(/^http/, 'ws')}/v1/responses`, { 'x-gateway-virtual-key': 'openai-prod' });
    expect(answer.status).toBe(401);
    expect(answer.body.error.type).toBe('authentication_error');
  });

  it("counts each response against the key's rate limit: the one over it is an error event, logged 429, and the socket stays open", async () => {
    const key = await createApiKey(gateway, { name: 'socket-rated', rate_limits: [{ type: 'requests', unit: 'rpm', value: 1 }] });
    const { socket, events } = connect(key.key, { 'x-gateway-virtual-key': 'openai-prod' });
    socket.send({ type: 'response.create', model: 'gpt-4.1-mini', input: 'echo: allowed', store: false });
    expect((await nextResponse(events)).at(-1).type).toBe('response.completed');
    socket.send({ type: 'response.create', model: 'gpt-4.1-mini', input: 'echo: over the limit', store: false });
    const refused = (await nextResponse(events)).at(-1);
    expect(refused).toMatchObject({ type: 'error' });
    expect(mock.responsesSockets[0].events).toHaveLength(1);
    expect(socket.socket.readyState).toBe(WebSocket.OPEN);
    const log = await logWhere((row) => row.request_body?.input === 'echo: over the limit');
    expect(log).toMatchObject({ status_code: 429, provider: 'openai', error: { code: 'rate_limit_exceeded' } });
  });

  it('logs a response the provider cut off (its socket closed mid-stream) as 502, and closes the client with its code', async () => {
    const { socket, events } = connect(gateway.adminKey, { 'x-gateway-virtual-key': 'openai-prod' });
    const closed = new Promise<number>((resolve) => socket.socket.once('close', (code: number) => resolve(code)));
    socket.send({ type: 'response.create', model: 'mock-socket-close', input: 'echo: cut', store: false });
    await expect(nextResponse(events)).rejects.toThrow(/ended after response.created/);
    expect(await closed).toBe(1011);
    const log = await logWhere((row) => row.request_body?.input === 'echo: cut');
    expect(log).toMatchObject({ status_code: 502, operation: 'responses', error: { type: 'upstream_error' } });
  });

  /** The first of the latest `responses` log rows that `matches`. */
  async function logWhere(matches: (row: any) => boolean): Promise<any> {
    await gateway.flushLogs();
    const listed = await admin(gateway, 'GET', '/v1/logs?operation=responses&limit=20');
    for (const entry of listed.body.data as any[]) {
      const log = await logOf(gateway, entry.id);
      if (matches(log)) return log;
    }
    throw new Error('No log row matches');
  }

  const logByResponse = (responseId: string) => logWhere((row) => row.response_body?.id === responseId);
});
