import * as http from 'node:http';
import { APIError } from 'openai';
import { mockErrorBody } from '../support/mock-openai-chunks';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';
import { call, chat, createVirtualKey, expectError, HELLO, logOf, openai, sleep, waitFor } from '../support/e2e-helpers';

/** What the provider does wrong reaches the client in a useful form, and is logged (CONTRACT section 3). */
describe('upstream failures', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  const VK = { 'x-gateway-virtual-key': 'upstream-vk' };

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ UPSTREAM_MAX_RESPONSE_BYTES: String(1024 * 1024) });
    await createVirtualKey(gateway, { slug: 'upstream-vk', key: 'sk-upstream-secret-000000', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it('a 429 passes through with its body and retry-after, and is logged', async () => {
    const response = await chat(gateway, VK, { model: 'mock-error-429' });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual(JSON.parse(mockErrorBody(429)));
    // CONTRACT section 2: the routing headers also tell which provider failed and after how many retries.
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(response.headers.get('x-gateway-retry-count')).toBe('0');
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 429, model: 'mock-error-429', provider: 'openai', response_body: JSON.parse(mockErrorBody(429)) });
    expect(log.error).toMatchObject({ type: 'upstream_error', code: '429' });
    expect(log.error.message).toEqual(expect.any(String));
  });

  it('a 500 passes through, for the SDK too (streamed request included), and is logged', async () => {
    const response = await chat(gateway, VK, { model: 'mock-error-500' });
    expect(response.status).toBe(500);
    expect(response.body).toEqual(JSON.parse(mockErrorBody(500)));
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 500, error: { type: 'upstream_error', code: '500' } });

    const client = openai(gateway, VK);
    const failure = await client.chat.completions.create({ model: 'mock-error-500', messages: HELLO as any, stream: true }).catch((e) => e);
    expect(failure).toBeInstanceOf(APIError);
    expect(failure).toMatchObject({ status: 500, code: 'server_error', message: expect.stringContaining('Mock error 500') });
  });

  it('a 200 whose body is not JSON is a 502', async () => {
    const response = await chat(gateway, VK, { model: 'mock-invalid-json' });
    expectError(response, 502, { type: 'upstream_error', code: 'upstream_malformed_response' });
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 502, error: { code: 'upstream_malformed_response' } });
  });

  it('a 200 that carries only an error is a 502 naming it, and is logged', async () => {
    const response = await chat(gateway, VK, { model: 'mock-error-in-200' });
    expectError(response, 502, {
      type: 'upstream_error',
      code: 'upstream_malformed_response',
      message: /answered 200 with an error inside: The server is overloaded/,
    });
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 502, error: { code: 'upstream_malformed_response' } });
  });

  it('an answer far larger than UPSTREAM_MAX_RESPONSE_BYTES is a 502, not a gateway out of memory', async () => {
    const response = await chat(gateway, VK, { model: `mock-huge-${3 * 1024 * 1024}` });
    expectError(response, 502, { type: 'upstream_error', code: 'upstream_malformed_response', message: /larger than 1048576 bytes/ });
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 502, error: { message: expect.stringMatching(/UPSTREAM_MAX_RESPONSE_BYTES/) } });
  });

  it('a connection reset in the middle of a JSON body is a 502, and is logged', async () => {
    const response = await chat(gateway, VK, { model: 'mock-cut-body' });
    expectError(response, 502, { type: 'upstream_error', code: 'upstream_unreachable', message: /broke off/ });
    expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).status_code).toBe(502);
  });

  it('a stream that ends without [DONE] or a finish reason ends with an error event, and is logged as broken', async () => {
    const response = await call(gateway, '/v1/chat/completions', { headers: VK, body: { model: 'mock-stream-no-done', messages: HELLO, stream: true } });
    expect(response.status).toBe(200);
    const events = response.text.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toMatch(/^data: \{"error":/);
    expect(response.text).not.toContain('[DONE]');
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log.error).toMatchObject({ type: expect.any(String), message: expect.any(String) });
  });

  it('an unreachable provider is a 502', async () => {
    const config = JSON.stringify({ provider: 'openai', api_key: 'sk-x', custom_host: 'http://127.0.0.1:1/v1' });
    const response = await chat(gateway, { 'x-gateway-config': config });
    expectError(response, 502, { type: 'upstream_error', code: 'upstream_unreachable' });
    expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).status_code).toBe(502);
  });

  it('config request_timeout: a hanging provider is a 504 request_timeout within about a second', async () => {
    const config = JSON.stringify({ virtual_key: 'upstream-vk', request_timeout: 300 });
    const started = Date.now();
    const response = await chat(gateway, { 'x-gateway-config': config }, { model: 'mock-hang' });
    const elapsed = Date.now() - started;
    expectError(response, 504, { type: 'timeout_error', code: 'request_timeout', message: /300 ms/ });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1000);
    await waitFor(() => mock.requests[0]?.aborted); // the hanging upstream request is given up
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status_code: 504, error: { type: 'timeout_error', code: 'request_timeout' } });
  });

  it('config request_timeout also bounds the silence between stream chunks', async () => {
    const config = JSON.stringify({ virtual_key: 'upstream-vk', request_timeout: 300 });
    const started = Date.now();
    const response = await chat(gateway, { 'x-gateway-config': config }, { model: 'mock-slow-800', stream: true });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(response.status).toBe(200);
    const frames = response.text
      .split('\n\n')
      .filter(Boolean)
      .map((frame) => JSON.parse(frame.replace(/^data: /, '')));
    expect(frames[0].choices[0].delta.role).toBe('assistant');
    expect(frames[frames.length - 1]).toEqual({ error: { message: expect.any(String), type: 'timeout_error', param: null, code: 'request_timeout' } });
    await waitFor(() => mock.requests[0]?.aborted);
    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log.error).toMatchObject({ type: 'timeout_error', code: 'request_timeout' });
  });

  it('a stream cut by the provider delivers the first chunks, then an error event, and is logged as broken', async () => {
    const stream = await openai(gateway, VK)
      .chat.completions.create({ model: 'mock-stream-cut', messages: HELLO as any, stream: true })
      .withResponse();
    let text = '';
    let failure: unknown;
    try {
      for await (const chunk of stream.data) text += chunk.choices[0]?.delta?.content ?? '';
    } catch (error) {
      failure = error;
    }
    expect(text).toBe('Hello from');
    expect(failure).toBeInstanceOf(APIError);
    expect((failure as APIError).error).toMatchObject({ code: expect.stringMatching(/^upstream_stream_(incomplete|broken)$/) });

    const log = await logOf(gateway, stream.response.headers.get('x-gateway-request-id'));
    expect(log.is_stream).toBe(true);
    expect(log.error).toMatchObject({ type: 'upstream_error', code: (failure as APIError).code });
    expect(log.response_body.choices[0].message.content).toBe('Hello from');
  });

  it('the raw SSE of a cut stream: data chunks, then one error event, no [DONE]', async () => {
    const response = await chat(gateway, VK, { model: 'mock-stream-cut', stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = response.text
      .split('\n\n')
      .filter(Boolean)
      .map((frame) => JSON.parse(frame.replace(/^data: /, '')));
    expect(events.map((e) => e.choices?.[0]?.delta?.content ?? null)).toEqual(['', 'Hello', ' from', null]);
    expect(events[3]).toEqual({
      error: { message: expect.any(String), type: 'upstream_error', param: null, code: expect.stringMatching(/^upstream_stream_/) },
    });
    expect(response.text).not.toContain('[DONE]');
  });

  /** A chat request over its own socket (node:http, no pooling), so that leaving closes exactly that connection. */
  function rawChat(body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const req = http.request(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey, ...VK, ...headers },
    });
    req.on('error', () => undefined); // the abort below
    req.end(JSON.stringify(body));
    return req;
  }

  it('a client leaving a stream mid-way aborts the provider request within 100 ms, and the log has the partial usage', async () => {
    const req = rawChat({ model: 'mock-slow-200', messages: [{ role: 'user', content: 'echo: one two three four five six' }], stream: true });
    const response = await new Promise<http.IncomingMessage>((resolve) => req.on('response', resolve));
    expect(response.statusCode).toBe(200);
    let received = '';
    await new Promise<void>((resolve) =>
      response.on('data', (chunk: Buffer) => {
        received += chunk.toString();
        if (received.includes('"content":"one')) resolve();
      }),
    );
    const leftAt = Date.now();
    req.destroy();

    expect(mock.requests).toHaveLength(1);
    await waitFor(() => mock.requests[0].aborted);
    expect(mock.requests[0].abortedAt! - leftAt).toBeLessThan(100);
    await sleep(50);
    const log = await logOf(gateway, String(response.headers['x-gateway-request-id']));
    expect(log.is_stream).toBe(true);
    expect(log.error).toMatchObject({ type: 'client_error', code: 'client_closed_request', usage_estimated: true });
    expect(log.response_body.choices[0].message.content).toMatch(/^one/);
    expect(log.response_body.choices[0].message.content).not.toContain('six');
    // No usage chunk came: the prompt is estimated from the request, the output counted in content chunks.
    expect(log.prompt_tokens).toBeGreaterThan(0);
    expect(log.completion_tokens).toBeGreaterThanOrEqual(1);
    expect(log.completion_tokens).toBeLessThan(6);
    expect(log.total_tokens).toBe(log.prompt_tokens + log.completion_tokens);
  });

  it('a client leaving before the provider answers aborts the provider request too', async () => {
    const req = rawChat({ model: 'mock-hang', messages: HELLO }, { 'x-gateway-trace-id': 'abort-before-answer' });
    await waitFor(() => mock.requests.length === 1);
    req.destroy();
    await waitFor(() => mock.requests[0].aborted);
    await sleep(50);
    await gateway.flushLogs();
    const logs = await call(gateway, '/v1/logs?trace_id=abort-before-answer');
    expect(logs.body.data).toHaveLength(1);
    expect(logs.body.data[0]).toMatchObject({ model: 'mock-hang', error: { type: 'client_error', code: 'client_closed_request' } });
  });
});
