/**
 * Guardrails (CONTRACT section 5) on chat, responses and messages, streamed and not,
 * and on realtime text input: a denying guardrail stops the request with 446 and a body
 * naming the failed checks (the provider never sees a denied request); a non-denying
 * one lets it through with `x-gateway-guardrails: failed`; PII can be redacted instead (in a
 * request, a realtime event or a JSON answer; a streamed answer only in its log, its text
 * being sent as it comes); the results are stored with the log.
 */
import Anthropic from '@anthropic-ai/sdk';
import * as http from 'node:http';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { call, createVirtualKey, logOf, openai, waitFor } from '../support/e2e-helpers';
import { MockRealtime, startMockRealtime } from '../support/mock-openai-realtime';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const NO_SECRETS = { name: 'no-secrets', deny: true, checks: [{ type: 'regex', pattern: 'sk-[A-Za-z0-9]+', must: 'not_match' }] };
const NO_FORBIDDEN_WORDS = { name: 'words', deny: false, checks: [{ type: 'contains', words: ['forbidden'], operator: 'none' }] };

describe('guardrails', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let realtime: MockRealtime;
  let hook: http.Server;
  let hookUrl: string;
  const hookCalls: any[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream();
    realtime = await startMockRealtime();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-prod', key: 'sk-guard', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'anthropic-prod', provider: 'anthropic', key: 'anthropic-guard', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'openai-realtime', key: 'sk-rt-guard', custom_host: `${realtime.url.replace('ws', 'http')}/v1` });
    // A user's webhook: refuses any text mentioning "refund".
    hook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const parsed = JSON.parse(body);
        hookCalls.push({ headers: req.headers, body: parsed });
        const refund = parsed.texts.some((text: string) => text.includes('refund'));
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ verdict: !refund, reason: refund ? 'mentions a refund' : 'fine' }));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/check`;
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    await realtime?.close();
    hook?.close();
  });

  beforeEach(() => mock.reset());

  const configHeader = (config: Record<string, unknown>) => ({ 'x-gateway-config': JSON.stringify({ virtual_key: 'openai-prod', ...config }) });
  const chatClient = (config: Record<string, unknown>) => openai(gateway, configHeader(config));
  const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] });

  it('denies a chat request with 446 naming the failed checks; the provider never sees it; the log keeps the results', async () => {
    const denied = await call(gateway, '/v1/chat/completions', { headers: configHeader({ input_guardrails: [NO_SECRETS] }), body: ask('my key is sk-abc123') });
    expect(denied.status).toBe(446);
    expect(denied.body.error).toMatchObject({
      type: 'guardrail_denied',
      code: 'guardrail_denied',
      message: expect.stringContaining('no-secrets'),
      guardrails: [{ name: 'no-secrets', checks: [{ type: 'regex', verdict: false, reason: expect.any(String) }] }],
    });
    expect(JSON.stringify(denied.body)).not.toContain('sk-abc123');
    expect(mock.requests).toHaveLength(0);
    const log = await logOf(gateway, denied.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({
      status_code: 446,
      error: { type: 'guardrail_denied' },
      guardrails: { input: [{ name: 'no-secrets', deny: true, verdict: false }] },
    });

    // The same config lets a clean request through, its results logged as passed.
    const { response } = await chatClient({ input_guardrails: [NO_SECRETS] })
      .chat.completions.create(ask('hello'))
      .withResponse();
    expect(response.headers.get('x-gateway-guardrails')).toBeNull();
    expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).guardrails).toMatchObject({ input: [{ name: 'no-secrets', verdict: true }] });
  });

  it('lets a request a non-denying guardrail fails through, marked x-gateway-guardrails: failed', async () => {
    const { data, response } = await chatClient({ input_guardrails: [NO_FORBIDDEN_WORDS] })
      .chat.completions.create(ask('a forbidden topic'))
      .withResponse();
    expect(data.choices[0].message.content).toBe('Hello from mock');
    expect(response.headers.get('x-gateway-guardrails')).toBe('failed');
    expect(mock.requests).toHaveLength(1);
    expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).guardrails).toMatchObject({
      input: [{ name: 'words', deny: false, verdict: false, checks: [{ type: 'contains', verdict: false }] }],
    });
  });

  it('redacts PII before the provider sees it when the check says redact', async () => {
    const pii = { name: 'pii', deny: true, checks: [{ type: 'pii', kinds: ['email', 'card'], action: 'redact' }] };
    await chatClient({ input_guardrails: [pii] }).chat.completions.create(ask('mail ada@example.com, card 4111 1111 1111 1111'));
    const sent = mock.requests[0].body.messages[0].content;
    expect(sent).not.toContain('ada@example.com');
    expect(sent).not.toContain('4111');
    expect(sent).toContain('[REDACTED_EMAIL]');
  });

  it('checks the answer: a denied JSON answer is a 446, a streamed one ends with an error event before [DONE]', async () => {
    const noMock = { name: 'no-mock', deny: true, checks: [{ type: 'contains', words: ['mock'], operator: 'none' }] };
    const denied = await call(gateway, '/v1/chat/completions', { headers: configHeader({ output_guardrails: [noMock] }), body: ask('hello') });
    expect(denied.status).toBe(446);
    expect(denied.body.error.message).toMatch(/answer was denied by guardrail no-mock/);
    const log = await logOf(gateway, denied.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 446, guardrails: { output: [{ name: 'no-mock', verdict: false }] }, prompt_tokens: expect.any(Number) });

    const stream = await chatClient({ output_guardrails: [noMock] }).chat.completions.create({ ...ask('hello'), stream: true });
    const pieces: string[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta?.content ?? '');
    })().catch((error: unknown) => error);
    expect(pieces.join('')).toBe('Hello from mock'); // sent before the check could run
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).message).toMatch(/denied by guardrail no-mock/);

    // A JSON answer checked against a schema: valid passes, invalid is flagged (deny: false).
    const schema = { name: 'shape', checks: [{ type: 'json_schema', schema: { type: 'object', required: ['ok'] } }] };
    const good = await chatClient({ output_guardrails: [schema] })
      .chat.completions.create(ask('echo: {"ok": true}'))
      .withResponse();
    expect(good.response.headers.get('x-gateway-guardrails')).toBeNull();
    const bad = await chatClient({ output_guardrails: [schema] })
      .chat.completions.create(ask('echo: {"no": 1}'))
      .withResponse();
    expect(bad.response.headers.get('x-gateway-guardrails')).toBe('failed');
  });

  it('redacts a JSON answer when an output check says redact: the client gets what the log keeps (chat, messages, responses)', async () => {
    const pii = { name: 'pii-out', deny: true, checks: [{ type: 'pii', kinds: ['email'], action: 'redact' }] };
    const loggedAnswer = async (response: Response) => {
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.guardrails).toMatchObject({ output: [{ name: 'pii-out', verdict: true, checks: [{ type: 'pii', reason: 'redacted 1 email' }] }] });
      expect(JSON.stringify(log.response_body)).not.toContain('ada@example.com');
      return log.response_body;
    };

    const chat = await chatClient({ output_guardrails: [pii] })
      .chat.completions.create(ask('echo: write to ada@example.com'))
      .withResponse();
    expect(chat.data.choices[0].message.content).toBe('write to [REDACTED_EMAIL]');
    expect((await loggedAnswer(chat.response)).choices[0].message.content).toBe('write to [REDACTED_EMAIL]');

    const anthropic = new Anthropic({
      baseURL: gateway.url,
      apiKey: 'unused',
      defaultHeaders: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify({ virtual_key: 'anthropic-prod', output_guardrails: [pii] }),
      },
    });
    const messages = await anthropic.messages
      .create({ model: 'claude-sonnet-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'echo: write to ada@example.com' }] })
      .withResponse();
    expect(messages.data.content[0]).toMatchObject({ type: 'text', text: 'write to [REDACTED_EMAIL]' });
    expect((await loggedAnswer(messages.response)).content[0].text).toBe('write to [REDACTED_EMAIL]');

    const responses = await chatClient({ output_guardrails: [pii] })
      .responses.create({ model: 'gpt-4o-mini', input: 'echo: write to ada@example.com' })
      .withResponse();
    expect(responses.data.output_text).toBe('write to [REDACTED_EMAIL]');
    expect(JSON.stringify(responses.data)).not.toContain('ada@example.com');
    expect(JSON.stringify(await loggedAnswer(responses.response))).toContain('write to [REDACTED_EMAIL]');
  });

  it('checks a streamed answer for redaction at its end: the text went out as it came, the log keeps it redacted', async () => {
    const pii = { name: 'pii-out', deny: true, checks: [{ type: 'pii', kinds: ['email'], action: 'redact' }] };
    const { data: stream, response } = await chatClient({ output_guardrails: [pii] })
      .chat.completions.create({ ...ask('echo: write to ada@example.com'), stream: true })
      .withResponse();
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta?.content ?? '');
    // A stream cannot be taken back: the check runs on the assembled answer once it has been sent.
    expect(pieces.join('')).toBe('write to ada@example.com');
    const requestId = response.headers.get('x-gateway-request-id');
    await waitFor(async () => (await logOf(gateway, requestId)).guardrails?.output);
    const log = await logOf(gateway, requestId);
    expect(log.guardrails).toMatchObject({ output: [{ name: 'pii-out', verdict: true, checks: [{ type: 'pii', reason: 'redacted 1 email' }] }] });
    expect(JSON.stringify(log.response_body)).not.toContain('ada@example.com');
  });

  it('calls a webhook check with the texts and honours its verdict; allowed models', async () => {
    const webhook = { name: 'policy', deny: true, checks: [{ type: 'webhook', url: hookUrl, headers: { authorization: 'Bearer hook-secret' } }] };
    const refused = await call(gateway, '/v1/chat/completions', { headers: configHeader({ input_guardrails: [webhook] }), body: ask('I want a refund') });
    expect(refused.status).toBe(446);
    expect(refused.body.error.guardrails[0].checks[0]).toMatchObject({ type: 'webhook', verdict: false, reason: expect.stringContaining('mentions a refund') });
    expect(hookCalls.at(-1)).toMatchObject({
      headers: { authorization: 'Bearer hook-secret' },
      body: { stage: 'input', model: 'gpt-4o-mini', texts: ['I want a refund'] },
    });
    expect((await call(gateway, '/v1/chat/completions', { headers: configHeader({ input_guardrails: [webhook] }), body: ask('hello') })).status).toBe(200);

    // Stored in a config, the hook's headers are secrets: encrypted, masked on read, sent in clear.
    const stored = await call(gateway, '/v1/configs', {
      body: { name: 'policy', slug: 'policy', config: { virtual_key: 'openai-prod', input_guardrails: [webhook] } },
    });
    expect(stored.status).toBe(201);
    const read = await call(gateway, '/v1/configs/policy');
    expect(JSON.stringify(read.body)).not.toContain('hook-secret');
    const viaStored = await call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-config': 'policy' }, body: ask('a refund please') });
    expect(viaStored.status).toBe(446);
    expect(hookCalls.at(-1).headers.authorization).toBe('Bearer hook-secret');

    const models = { name: 'models', deny: true, checks: [{ type: 'models', allow: ['gpt-4o-mini'] }] };
    expect((await call(gateway, '/v1/chat/completions', { headers: configHeader({ input_guardrails: [models] }), body: ask('hi') })).status).toBe(200);
    const other = await call(gateway, '/v1/chat/completions', {
      headers: configHeader({ input_guardrails: [models] }),
      body: { ...ask('hi'), model: 'gpt-4o' },
    });
    expect(other.status).toBe(446);
  });

  it('works on responses and on messages (in their error shapes), streamed too', async () => {
    const responses = await call(gateway, '/v1/responses', {
      headers: configHeader({ input_guardrails: [NO_SECRETS] }),
      body: { model: 'gpt-4o-mini', input: 'key sk-zzz999' },
    });
    expect(responses.status).toBe(446);
    expect(responses.body.error.type).toBe('guardrail_denied');

    const anthropic = new Anthropic({
      baseURL: gateway.url,
      apiKey: 'unused',
      defaultHeaders: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify({ virtual_key: 'anthropic-prod', input_guardrails: [NO_SECRETS], output_guardrails: [NO_FORBIDDEN_WORDS] }),
      },
    });
    const refused = await anthropic.messages
      .create({ model: 'claude-sonnet-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'sk-abc123' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.APIError);
    expect((refused as InstanceType<typeof Anthropic.APIError>).status).toBe(446);
    expect((refused as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'guardrail_denied', guardrails: [{ name: 'no-secrets' }] },
    });

    // Streamed, the output check runs on the assembled message: "forbidden" in the answer marks it.
    const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'echo: a forbidden reply' }] });
    const message = await stream.finalMessage();
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'a forbidden reply' });
    const requestId = (await stream.withResponse()).response.headers.get('x-gateway-request-id');
    await waitFor(async () => (await logOf(gateway, requestId)).guardrails?.output);
    expect((await logOf(gateway, requestId)).guardrails).toMatchObject({ output: [{ name: 'words', verdict: false }] });
  });

  it('checks a streamed Responses answer at its end: a denial is an error event after the events already sent', async () => {
    const noMock = { name: 'no-mock', deny: true, checks: [{ type: 'contains', words: ['mock'], operator: 'none' }] };
    const answer = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey, ...configHeader({ output_guardrails: [noMock] }) },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hello', stream: true }),
    });
    expect(answer.status).toBe(200);
    const events = (await answer.text()).split('\n\n').filter(Boolean);
    const types = events.map((frame) => /^event: (.+)$/m.exec(frame)?.[1]);
    expect(types).toContain('response.completed');
    expect(types.at(-1)).toBe('error');
    expect(JSON.parse(/^data: (.+)$/m.exec(events.at(-1)!)![1])).toMatchObject({ type: 'error', code: 'guardrail_denied', guardrails: [{ name: 'no-mock' }] });
    const log = await logOf(gateway, answer.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 200, error: { type: 'guardrail_denied' }, guardrails: { output: [{ name: 'no-mock', verdict: false }] } });
  });

  it('refuses a config whose guardrails are malformed, naming the field', async () => {
    const bad = await call(gateway, '/v1/chat/completions', {
      headers: configHeader({ input_guardrails: [{ checks: [{ type: 'regex', pattern: '(' }] }] }),
      body: ask('hi'),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_config', message: expect.stringContaining('config.input_guardrails[0].checks[0].pattern') });
  });

  it('checks the text of realtime input events: a denied one never reaches the provider and comes back as an error event', async () => {
    const config = JSON.stringify({ virtual_key: 'openai-realtime', input_guardrails: [NO_SECRETS] });
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, {
      headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': config },
    });
    const events: any[] = [];
    socket.on('message', (data) => events.push(JSON.parse(data.toString())));
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const item = (text: string) =>
      JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
    socket.send(item('my key sk-secret1'));
    socket.send(item('hello'));
    await waitFor(() => events.some((event) => event.type === 'conversation.item.created'));
    const refusal = events.find((event) => event.type === 'error');
    expect(refusal.error).toMatchObject({ type: 'guardrail_denied', guardrails: [{ name: 'no-secrets' }] });
    const upstreamSaw = realtime.connections.at(-1)!.received.filter((event: any) => event.type === 'conversation.item.create');
    expect(upstreamSaw.map((event: any) => event.item.content[0].text)).toEqual(['hello']);
    socket.close();
  });

  it('sends the provider a realtime input event as redacted, not as the client wrote it', async () => {
    const pii = { name: 'pii-in', deny: true, checks: [{ type: 'pii', kinds: ['email'], action: 'redact' }] };
    const config = JSON.stringify({ virtual_key: 'openai-realtime', input_guardrails: [pii] });
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, {
      headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': config },
    });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    socket.send(
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'mail ada@example.com' }] },
      }),
    );
    const upstreamSaw = await waitFor(() =>
      realtime.connections
        .flatMap((connection) => connection.received)
        .find((event: any) => event.type === 'conversation.item.create' && event.item.content[0].text.startsWith('mail ')),
    );
    expect(upstreamSaw.item.content[0].text).toBe('mail [REDACTED_EMAIL]');
    socket.close();
  });
});
