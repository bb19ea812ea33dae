import { request } from 'node:http';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const ROUTED = { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-x' };

interface RawResponse {
  status: number;
  body: any;
}

/** A raw request, so that framing (chunked, no Content-Length) and headers are exactly ours. */
async function send(gateway: TestGateway, headers: Record<string, string>, chunks: (string | Buffer)[]): Promise<RawResponse> {
  const url = new URL(`${gateway.url}/v1/chat/completions`);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'x-gateway-api-key': gateway.adminKey, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    // A pause between chunks, so the gateway really receives them apart.
    const writeNext = (i: number) => (i === chunks.length ? req.end() : req.write(chunks[i], () => setTimeout(() => writeNext(i + 1), 5)));
    writeNext(0);
  });
}

describe('request body reading', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ BODY_LIMIT_BYTES: '2048' });
  });

  afterAll(() => gateway?.close());

  it('refuses a chunked body (no Content-Length) as soon as it passes the limit', async () => {
    const response = await send(gateway, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, [
      '{"model":"x","pad":"',
      'a'.repeat(1500),
      'b'.repeat(1500),
      '"}',
    ]);
    expect(response.status).toBe(413);
    expect(response.body.error).toMatchObject({ code: 'payload_too_large', type: 'invalid_request_error' });
  });

  it('parses a chunked body under the limit, split inside a multi-byte character', async () => {
    const body = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: 'héllo' }));
    const split = body.indexOf(Buffer.from('é')) + 1; // between the two bytes of é
    const response = await send(gateway, { ...ROUTED, 'content-type': 'application/json' }, [body.subarray(0, split), body.subarray(split)]);
    // The body was read whole and parsed: validation (not JSON parsing) rejects the stream flag.
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe('stream');
  });

  it('answers 415 for a charset other than UTF-8 and for compressed bodies', async () => {
    const latin = await send(gateway, { 'content-type': 'application/json; charset=iso-8859-1' }, ['{"model":"x"}']);
    expect(latin.status).toBe(415);
    expect(latin.body.error.code).toBe('unsupported_charset');
    const gzip = await send(gateway, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, ['{"model":"x"}']);
    expect(gzip.status).toBe(415);
    expect(gzip.body.error.code).toBe('unsupported_encoding');
  });

  it('treats a non-JSON content type as no body, with a clear 400', async () => {
    const response = await send(gateway, { ...ROUTED, 'content-type': 'text/plain' }, ['{"model":"x"}']);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe('The request body must be a JSON object');
  });

  it('accepts application/<vendor>+json', async () => {
    const response = await send(gateway, { ...ROUTED, 'content-type': 'application/vnd.api+json' }, ['[1,2]']);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe('The request body must be a JSON object');
  });

  it('refuses a body nested deeper than 64 levels with a 400, not a crash', async () => {
    const deep = '['.repeat(1000) + ']'.repeat(1000);
    const response = await send(gateway, { ...ROUTED, 'content-type': 'application/json' }, [`{"model":"x","messages":${deep}}`]);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json', message: 'Request body is nested deeper than 64 levels' });
  });

  it('answers 400 for values the database cannot hold (a NUL character, a lone surrogate), not 500', async () => {
    const create = (body: string) =>
      fetch(`${gateway.url}/v1/api-keys`, { method: 'POST', headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' }, body });
    for (const body of ['{"name":"nul\\u0000name","role":"user"}', '{"name":"ok","role":"user","metadata":{"team":"\\ud800"}}']) {
      const response = await create(body);
      expect([body, response.status]).toEqual([body, 400]);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unstorable_value');
    }
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  });
});
