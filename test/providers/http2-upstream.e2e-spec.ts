/**
 * HTTP/2 to providers (CONTRACT section 11, issue 24): against mock providers served over
 * TLS that offer h2 through ALPN, as real ones do. The first request to an origin goes
 * over HTTP/1.1 while a session opens; then many streams share one connection. A server
 * that answers HTTP/1.1, a stream the server refuses, a full session, a client that
 * leaves, a provider that hangs, and an untrusted certificate are each handled, and
 * UPSTREAM_HTTP2=false keeps HTTP/1.1.
 */
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { chat, createVirtualKey, openai, waitFor } from '../support/e2e-helpers';
import { BEDROCK_TEST_CREDENTIALS } from '../support/mock-bedrock';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { testCertificates, type TestCertificates } from '../support/test-certificates';
import { fetchMetrics, startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

let certificates: TestCertificates;
beforeAll(async () => {
  certificates = await testCertificates();
});

/** The gateway's open HTTP/2 connections to providers, from /metrics. */
async function http2Sessions(gateway: TestGateway): Promise<number> {
  const text = await (await fetchMetrics(gateway.url)).text();
  return [...text.matchAll(/^gateway_upstream_http2_sessions\{provider="[^"]+"\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}
const sessionOpened = (gateway: TestGateway) => waitFor(async () => (await http2Sessions(gateway)) > 0 || null, 5_000);

describe('HTTP/2 to providers', () => {
  let gateway: TestGateway;
  let h2: MockUpstream;
  let http1Only: MockUpstream;
  let narrow: MockUpstream;

  const sessions = () => http2Sessions(gateway);
  /** Sends one request to the origin and waits until the gateway holds a session to it. */
  const warm = async (slug: string) => {
    expect((await chat(gateway, { 'x-gateway-virtual-key': slug })).status).toBe(200);
    await sessionOpened(gateway);
  };

  beforeAll(async () => {
    h2 = await startMockUpstream({ tls: certificates });
    http1Only = await startMockUpstream({ tls: certificates, alpn: 'http/1.1' });
    narrow = await startMockUpstream({ tls: certificates, maxConcurrentStreams: 2 });
    gateway = await startTestGateway({ UPSTREAM_CA_FILE: certificates.caFile });
    await createVirtualKey(gateway, { slug: 'h2', key: 'sk-h2-000000', custom_host: `${h2.url}/v1` });
    await createVirtualKey(gateway, { slug: 'h1', key: 'sk-h1-000000', custom_host: `${http1Only.url}/v1` });
    await createVirtualKey(gateway, { slug: 'narrow', key: 'sk-narrow-000000', custom_host: `${narrow.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([h2, http1Only, narrow].map((mock) => mock?.close()));
  });

  beforeEach(() => [h2, http1Only, narrow].forEach((mock) => mock.reset()));

  it('sends the first request over HTTP/1.1 while a session opens, then many streams over one HTTP/2 connection', async () => {
    expect(await sessions()).toBe(0);
    expect((await chat(gateway, { 'x-gateway-virtual-key': 'h2' })).status).toBe(200);
    expect(h2.requests.map((r) => r.httpVersion)).toEqual(['1.1']);
    await waitFor(async () => (await sessions()) === 1 || null, 5_000);
    h2.reset();

    const client = openai(gateway, { 'x-gateway-virtual-key': 'h2' });
    const texts = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const stream = await client.chat.completions.create({
          model: 'mock-slow-50',
          stream: true,
          messages: [{ role: 'user', content: `echo: stream ${i} ok` }],
        });
        let text = '';
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
        return text;
      }),
    );
    expect(texts).toEqual(Array.from({ length: 20 }, (_, i) => `stream ${i} ok`));
    expect(h2.requests).toHaveLength(20);
    expect(new Set(h2.requests.map((r) => r.httpVersion))).toEqual(new Set(['2.0']));
    // The provider saw the key and the body as over HTTP/1.1; the host travels as :authority.
    expect(h2.requests[0].headers.authorization).toBe('Bearer sk-h2-000000');
    expect(h2.requests[0].headers[':authority']).toBe(new URL(h2.url).host);
    expect(await sessions()).toBe(1);

    // A plain JSON answer over the session, usage and all.
    const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'echo: plain' }] });
    expect(answer.choices[0].message.content).toBe('plain');
    expect(answer.usage?.total_tokens).toBeGreaterThan(0);
    expect(h2.requests.at(-1)!.httpVersion).toBe('2.0');
  });

  it('keeps HTTP/1.1 for a server whose ALPN picks it, and opens no session', async () => {
    for (let i = 0; i < 3; i++) expect((await chat(gateway, { 'x-gateway-virtual-key': 'h1' })).status).toBe(200);
    expect(http1Only.requests.map((r) => r.httpVersion)).toEqual(['1.1', '1.1', '1.1']);
  });

  it("past a session's room (the server allows 2 streams), serves the rest at once, none waiting", async () => {
    await warm('narrow');
    narrow.reset();
    const client = openai(gateway, { 'x-gateway-virtual-key': 'narrow' });
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        const stream = await client.chat.completions.create({ model: 'mock-slow-300', stream: true, messages: [{ role: 'user', content: 'echo: a b c' }] });
        for await (const chunk of stream) void chunk;
      }),
    );
    // Four events 300 ms apart each: had the streams waited for a free slot, three rounds would take ~3.6 s.
    expect(Date.now() - started).toBeLessThan(3_000);
    // Every stream over HTTP/2: two per session, a new session opened for the ones past the room.
    expect(narrow.requests.map((r) => r.httpVersion)).toEqual(Array(6).fill('2.0'));
    expect(await sessions()).toBeGreaterThanOrEqual(3);
  });

  it('signs Bedrock requests over HTTP/2 as AWS checks them (the host as :authority), Converse and ConverseStream', async () => {
    await createVirtualKey(gateway, {
      slug: 'bedrock-h2',
      provider: 'bedrock',
      key: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
      custom_host: h2.url,
      provider_options: { aws_region: 'us-east-1', aws_access_key_id: BEDROCK_TEST_CREDENTIALS.accessKeyId },
    });
    await warm('h2');
    h2.reset();
    const client = openai(gateway, {});
    const answer = await client.chat.completions.create({
      model: '@bedrock-h2/meta.llama3-1-70b-instruct-v1:0',
      messages: [{ role: 'user', content: 'echo: signed' }],
    });
    expect(answer.choices[0].message.content).toBe('signed');
    let text = '';
    for await (const chunk of await client.chat.completions.create({
      model: '@bedrock-h2/meta.llama3-1-70b-instruct-v1:0',
      stream: true,
      messages: [{ role: 'user', content: 'echo: binary frames' }],
    }))
      text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('binary frames');
    expect(h2.requests.map((r) => [r.path.split('/').pop(), r.httpVersion])).toEqual([
      ['converse', '2.0'],
      ['converse-stream', '2.0'],
    ]);
  });

  it('relays a large binary answer (speech) over HTTP/2 whole', async () => {
    await warm('h2');
    h2.reset();
    const speech = await openai(gateway, { 'x-gateway-virtual-key': 'h2' }).audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(300) });
    expect((await speech.arrayBuffer()).byteLength).toBe(300_000);
    expect(h2.requests[0].httpVersion).toBe('2.0');
  });

  it('answers 502 when the provider resets the stream mid-answer, and ends a broken stream with an error event', async () => {
    await warm('h2');
    h2.reset();
    const cut = await chat(gateway, { 'x-gateway-virtual-key': 'h2' }, { model: 'mock-cut-body' });
    expect(cut.status).toBe(502);
    expect(cut.body.error).toMatchObject({ code: 'upstream_unreachable', message: expect.stringMatching(/broke off/) });
    const stream = await chat(gateway, { 'x-gateway-virtual-key': 'h2' }, { model: 'mock-stream-cut', stream: true });
    expect(stream.status).toBe(200);
    expect(stream.text).toMatch(/"code":"upstream_stream_broken"/);
    expect(stream.text).not.toContain('data: [DONE]');
    expect(h2.requests.map((r) => r.httpVersion)).toEqual(['2.0', '2.0']);
  });

  it('cancels the HTTP/2 stream when the client leaves mid-stream', async () => {
    await warm('h2');
    h2.reset();
    const controller = new AbortController();
    const stream = await openai(gateway, { 'x-gateway-virtual-key': 'h2' }).chat.completions.create(
      { model: 'mock-slow-200', stream: true, messages: [{ role: 'user', content: 'echo: one two three four five six seven eight' }] },
      { signal: controller.signal },
    );
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content) break; // leaving after the first word
    }
    controller.abort();
    await waitFor(() => h2.requests[0]?.aborted || null, 5_000);
    expect(h2.requests[0].httpVersion).toBe('2.0');
  });

  it('answers 504 when the provider does not answer in time, and cancels the stream', async () => {
    await warm('h2');
    h2.reset();
    const response = await chat(gateway, { 'x-gateway-config': JSON.stringify({ virtual_key: 'h2', request_timeout: 300 }) }, { model: 'mock-hang' });
    expect(response.status).toBe(504);
    expect(response.body.error.code).toBe('request_timeout');
    await waitFor(() => h2.requests[0]?.aborted || null, 5_000);
    expect(h2.requests[0].httpVersion).toBe('2.0');
  });
});

describe('HTTP/2: a stream the server refuses, an untrusted certificate, UPSTREAM_HTTP2=false', () => {
  it('sends a request the server refused (RST_STREAM REFUSED_STREAM) again over HTTP/1.1, once', async () => {
    // A provider that refuses every HTTP/2 stream (as one does while it drains) and answers HTTP/1.1.
    const seen: string[] = [];
    const refused: number[] = [];
    const server = http2.createSecureServer({ ...certificates, allowHTTP1: true });
    server.on('stream', (stream) => {
      refused.push(stream.id ?? 0);
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    });
    server.on('request', (req, res) => {
      if (req.httpVersion === '2.0') return; // refused above
      seen.push(req.httpVersion);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: 'over http/1.1' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const gateway = await startTestGateway({ UPSTREAM_CA_FILE: certificates.caFile });
    try {
      await createVirtualKey(gateway, {
        slug: 'refusing',
        key: 'sk-refusing-000000',
        custom_host: `https://localhost:${(server.address() as AddressInfo).port}/v1`,
      });
      expect((await chat(gateway, { 'x-gateway-virtual-key': 'refusing' })).status).toBe(200);
      await sessionOpened(gateway);
      const response = await chat(gateway, { 'x-gateway-virtual-key': 'refusing' });
      expect(response.status).toBe(200);
      expect(response.body.choices[0].message.content).toBe('over http/1.1');
      expect(refused.length).toBe(1); // tried once over HTTP/2, refused before the provider saw it
      expect(seen).toEqual(['1.1', '1.1']); // answered over HTTP/1.1 each time, never twice for one request
    } finally {
      await gateway.close();
      server.close();
    }
  });

  it('lets a stream finish on a session the server closes (GOAWAY), and sends the next request on a new one', async () => {
    const paths: string[] = [];
    const server = http2.createSecureServer({ ...certificates, allowHTTP1: true }, (req, res) => {
      paths.push(`${req.httpVersion} ${req.url}`);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (content: string, finish: string | null) =>
        `data: ${JSON.stringify({ id: 'chatcmpl-g', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
      res.write(chunk('before ', null));
      // The server rotates the connection mid-stream: no new stream on it, this one finishes.
      if (req.httpVersion === '2.0') req.stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, req.stream.id);
      setTimeout(() => res.end(`${chunk('after', 'stop')}data: [DONE]\n\n`), 100);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const gateway = await startTestGateway({ UPSTREAM_CA_FILE: certificates.caFile });
    try {
      await createVirtualKey(gateway, {
        slug: 'rotating',
        key: 'sk-rotating-000000',
        custom_host: `https://localhost:${(server.address() as AddressInfo).port}/v1`,
      });
      const client = openai(gateway, { 'x-gateway-virtual-key': 'rotating' });
      const read = async () => {
        let text = '';
        for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }))
          text += chunk.choices[0]?.delta?.content ?? '';
        return text;
      };
      expect(await read()).toBe('before after'); // over HTTP/1.1, while the session opens (HTTP/1.1 has no GOAWAY)
      await sessionOpened(gateway);
      expect(await read()).toBe('before after'); // on the session, which the server then closes
      expect(await read()).toBe('before after'); // on a new session
      expect(paths.map((p) => p.split(' ')[0])).toEqual(['1.1', '2.0', '2.0']);
    } finally {
      await gateway.close();
      server.close();
    }
  });

  it('does not send a request again when the connection breaks after it went out: 502, and the provider saw it once', async () => {
    let seen = 0;
    const server = http2.createSecureServer({ ...certificates, allowHTTP1: true }, (req) => {
      seen += 1;
      if (req.httpVersion === '2.0')
        req.stream.session?.destroy(); // the connection breaks with the request in hand
      else req.socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const gateway = await startTestGateway({ UPSTREAM_CA_FILE: certificates.caFile });
    try {
      await createVirtualKey(gateway, {
        slug: 'breaking',
        key: 'sk-breaking-000000',
        custom_host: `https://localhost:${(server.address() as AddressInfo).port}/v1`,
      });
      expect((await chat(gateway, { 'x-gateway-virtual-key': 'breaking' })).status).toBe(502); // HTTP/1.1, while the session opens
      await sessionOpened(gateway);
      seen = 0;
      const response = await chat(gateway, { 'x-gateway-virtual-key': 'breaking' });
      expect(response.status).toBe(502);
      expect(response.body.error.code).toBe('upstream_unreachable');
      expect(seen).toBe(1);
    } finally {
      await gateway.close();
      server.close();
    }
  });

  it('answers 502 when an HTTP/2 provider goes down, and serves again once it is back', async () => {
    let mock = await startMockUpstream({ tls: certificates });
    const port = mock.port;
    const gateway = await startTestGateway({ UPSTREAM_CA_FILE: certificates.caFile });
    try {
      await createVirtualKey(gateway, { slug: 'flaky', key: 'sk-flaky-000000', custom_host: `${mock.url}/v1` });
      expect((await chat(gateway, { 'x-gateway-virtual-key': 'flaky' })).status).toBe(200);
      await sessionOpened(gateway);
      await mock.close();
      await waitFor(async () => (await http2Sessions(gateway)) === 0 || null, 5_000);
      // A new session cannot connect: the request goes over HTTP/1.1, which cannot either.
      for (let i = 0; i < 2; i++) {
        const response = await chat(gateway, { 'x-gateway-virtual-key': 'flaky' });
        expect(response.status).toBe(502);
        expect(response.body.error.code).toBe('upstream_unreachable');
      }
      expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
      mock = await startMockUpstream({ tls: certificates, port });
      expect((await chat(gateway, { 'x-gateway-virtual-key': 'flaky' })).status).toBe(200);
      expect((await chat(gateway, { 'x-gateway-virtual-key': 'flaky' })).status).toBe(200);
      expect(mock.requests.at(-1)!.httpVersion).toBe('2.0');
    } finally {
      await gateway.close();
      await mock.close();
    }
  });

  it('answers 502 for a provider whose certificate the gateway does not trust, and opens no session', async () => {
    const mock = await startMockUpstream({ tls: certificates });
    const gateway = await startTestGateway(); // no UPSTREAM_CA_FILE: the test CA is unknown
    try {
      await createVirtualKey(gateway, { slug: 'untrusted', key: 'sk-untrusted-000000', custom_host: `${mock.url}/v1` });
      for (let i = 0; i < 2; i++) {
        const response = await chat(gateway, { 'x-gateway-virtual-key': 'untrusted' });
        expect(response.status).toBe(502);
        expect(response.body.error.code).toBe('upstream_unreachable');
      }
      expect(mock.requests).toHaveLength(0);
      expect(await http2Sessions(gateway)).toBe(0);
    } finally {
      await gateway.close();
      await mock.close();
    }
  });

  it('keeps every request on HTTP/1.1 with UPSTREAM_HTTP2=false', async () => {
    const mock = await startMockUpstream({ tls: certificates });
    const gateway = await startTestGateway({ UPSTREAM_CA_FILE: certificates.caFile, UPSTREAM_HTTP2: 'false' });
    try {
      await createVirtualKey(gateway, { slug: 'plain', key: 'sk-plain-000000', custom_host: `${mock.url}/v1` });
      for (let i = 0; i < 3; i++) expect((await chat(gateway, { 'x-gateway-virtual-key': 'plain' })).status).toBe(200);
      expect(mock.requests.map((r) => r.httpVersion)).toEqual(['1.1', '1.1', '1.1']);
    } finally {
      await gateway.close();
      await mock.close();
    }
  });

  it('refuses to start when UPSTREAM_CA_FILE cannot be read, naming the variable', async () => {
    await expect(startTestGateway({ UPSTREAM_CA_FILE: '/nonexistent/ca.pem' })).rejects.toThrow(
      /UPSTREAM_CA_FILE: cannot read \/nonexistent\/ca.pem \(ENOENT\)/,
    );
  });
});
