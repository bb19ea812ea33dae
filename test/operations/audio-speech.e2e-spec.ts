/**
 * Speech synthesis through the gateway with the official `openai` SDK: the audio comes
 * back byte for byte, streamed (the first bytes arrive before the provider has sent the
 * last), priced per character, logged without the audio.
 */
import * as http from 'node:http';
import { call, createVirtualKey, expectError, logOf, openai, waitFor } from '../support/e2e-helpers';
import { speechBytes } from '../support/mock-openai-audio';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

describe('audio speech', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-prod', key: 'sk-audio', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'azure-audio', provider: 'azure-openai', key: 'azure-secret', custom_host: mock.url });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it('returns the audio byte for byte, priced per character, with the log keeping its type and size only', async () => {
    const input = 'Hello from the gateway, spoken aloud.';
    const response = await openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' }).audio.speech.create({
      model: 'tts-1',
      voice: 'alloy',
      input,
      response_format: 'opus',
    });
    expect(response.headers.get('content-type')).toBe('audio/opus');
    const audio = Buffer.from(await response.arrayBuffer());
    expect(audio.equals(speechBytes(input))).toBe(true);
    expect(mock.requests[0]).toMatchObject({
      path: '/v1/audio/speech',
      headers: { authorization: 'Bearer sk-audio' },
      body: { model: 'tts-1', voice: 'alloy', input },
    });

    const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({
      operation: 'audio.speech',
      model: 'tts-1',
      status_code: 200,
      prompt_tokens: input.length,
      response_body: { type: 'audio', content_type: 'audio/opus', bytes: input.length * 1000 },
    });
    expect(log.cost_usd).toBeCloseTo((input.length * 15) / 1e6, 12);
  });

  it('streams: a long answer starts reaching the client before it is complete, and a client leaving stops the provider', async () => {
    const input = 'x'.repeat(4000); // 4 MB of audio
    const url = new URL(`${gateway.url}/v1/audio/speech`);
    const received = await new Promise<{ first: number; status: number }>((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'openai-prod', 'content-type': 'application/json' },
        },
        (res) => {
          res.once('data', (chunk: Buffer) => {
            resolve({ first: chunk.length, status: res.statusCode! });
            req.destroy();
          });
        },
      );
      req.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
      req.end(JSON.stringify({ model: 'tts-1', voice: 'alloy', input }));
    });
    expect(received.status).toBe(200);
    expect(received.first).toBeLessThan(4_000_000);
    await waitFor(() => mock.requests[0].aborted);
    const logs = await (async () => {
      await gateway.flushLogs();
      await new Promise((r) => setTimeout(r, 100));
      await gateway.flushLogs();
      return call(gateway, '/v1/logs?operation=audio.speech&limit=1');
    })();
    expect(logs.body.data[0].response_body.bytes).toBeLessThan(4_000_000);
  });

  it('checks the body, and reaches Azure at its deployment', async () => {
    const send = (body: Record<string, unknown>) =>
      call(gateway, '/v1/audio/speech', {
        headers: { 'x-gateway-virtual-key': 'openai-prod' },
        body: { model: 'tts-1', voice: 'alloy', input: 'hi', ...body },
      });
    expectError(await send({ input: '' }), 400, { type: 'invalid_request_error', param: 'input', message: 'input should not be empty' });
    expectError(await send({ speed: 9 }), 400, { type: 'invalid_request_error', param: 'speed' });
    expectError(await send({ response_format: 'ogg' }), 400, { type: 'invalid_request_error', param: 'response_format' });
    expectError(await send({ stream_format: 'sse' }), 400, { type: 'invalid_request_error', param: 'stream_format' });
    expect(mock.requests).toHaveLength(0);

    const azure = await openai(gateway, { 'x-gateway-virtual-key': 'azure-audio' }).audio.speech.create({ model: 'tts-hd', voice: 'nova', input: 'Bonjour' });
    expect(Buffer.from(await azure.arrayBuffer()).equals(speechBytes('Bonjour'))).toBe(true);
    expect(mock.requests[0]).toMatchObject({ path: '/openai/deployments/tts-hd/audio/speech', headers: { 'api-key': 'azure-secret' } });
  });

  it("passes a provider's error through as JSON", async () => {
    const response = await call(gateway, '/v1/audio/speech', {
      headers: { 'x-gateway-virtual-key': 'openai-prod' },
      body: { model: 'mock-error-429', voice: 'alloy', input: 'hi' },
    });
    expect(response.status).toBe(429);
    expect(response.body.error.code).toBe('rate_limit_exceeded');
  });
});
