/**
 * The gateway driven as a hostile client would drive it (issue 32, items 1 and 7; CONTRACT
 * section 15): multipart uploads cut short, malformed, oversized in parts or fields, trickled
 * and abandoned; a parameter name that cannot go in a header. Each is a clean 4xx in the
 * route's error shape (or a success), never a 500, an HTML page or a stack trace, and the
 * process serves the next request: an uncaught exception of the in-process gateway is
 * recorded and fails the test instead of ending the run.
 */
import * as http from 'node:http';
import * as vm from 'node:vm';
import { call, createVirtualKey, expectError, logOf, waitFor, type RawResponse } from '../support/e2e-helpers';
import { uploadsOf } from '../support/mock-openai-files';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const VK = 'hostile-openai';
const UPLOAD_ROUTES = ['/v1/files', '/v1/audio/transcriptions'] as const;
const OPERATION = { '/v1/files': 'files.create', '/v1/audio/transcriptions': 'audio.transcriptions' } as const;
/** The body of issue 32: a file part that never reaches its closing boundary. */
const TRUNCATED = '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc';

interface Answer extends RawResponse {
  /** The socket closed before a complete answer. */
  cut?: string;
}

/** The real `process` (jest hands tests a copy whose listeners the runtime never calls). */
const realProcess = vm.runInThisContext('process') as NodeJS.Process;

describe('hostile clients: uploads and header-bound values', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  const uncaught: string[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error instanceof Error ? `${error.message} ${error.stack?.split('\n')[1]?.trim()}` : String(error));
  const saved = { uncaughtException: realProcess.listeners('uncaughtException'), unhandledRejection: realProcess.listeners('unhandledRejection') };

  beforeAll(async () => {
    for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
      realProcess.removeAllListeners(event);
      realProcess.on(event, onUncaught);
    }
    mock = await startMockUpstream();
    gateway = await startTestGateway({ LOG_LEVEL: 'fatal', UPLOAD_LIMIT_BYTES: String(4 * 1024 * 1024) });
    await createVirtualKey(gateway, { slug: VK, key: 'sk-hostile-0000', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
      realProcess.removeListener(event, onUncaught);
      for (const listener of saved[event]) realProcess.on(event, listener as (...args: any[]) => void);
    }
  });

  beforeEach(() => mock.reset());

  afterEach(() => {
    // The process survived: nothing escaped to the top, and it still answers.
    expect(uncaught.splice(0)).toEqual([]);
  });

  /** One request on its own connection, the body written by `write`; resolves with whatever came back. */
  function send(path: string, headers: Record<string, string>, write: (req: http.ClientRequest) => void, method = 'POST'): Promise<Answer> {
    const url = new URL(path, gateway.url);
    return new Promise((resolve) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method, agent: false, headers: { 'x-gateway-api-key': gateway.adminKey, ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (error) => resolve(answerOf(res, chunks, error.message)));
          res.on('end', () => resolve(answerOf(res, chunks)));
        },
      );
      // Once the gateway has answered it may close the connection under a client still writing.
      req.on('error', (error) => setTimeout(() => resolve({ status: 0, headers: new Headers(), text: '', body: undefined, cut: error.message }), 100));
      write(req);
    });
  }

  function answerOf(res: http.IncomingMessage, chunks: Buffer[], cut?: string): Answer {
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
    return { status: res.statusCode ?? 0, headers, text, body, cut };
  }

  const form = (boundary: string, extra: Record<string, string> = {}) => ({
    'x-gateway-virtual-key': VK,
    'content-type': `multipart/form-data; boundary=${boundary}`,
    ...extra,
  });
  const postBody = (path: string, body: string | Buffer, headers: Record<string, string>) =>
    send(path, { 'content-length': String(Buffer.byteLength(body)), ...headers }, (req) => req.end(body));

  /** The gateway answers its health check and a normal upload. */
  async function stillServing(): Promise<void> {
    expect((await call(gateway, '/health')).status).toBe(200);
    const boundary = 'okboundary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="ok.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n{"a":1}\r\n--${boundary}--\r\n`;
    const ok = await postBody('/v1/files', body, form(boundary));
    expect([ok.status, ok.body?.object]).toEqual([200, 'file']);
  }

  describe('multipart bodies cut short or malformed: a 400 in the error shape, and the gateway serves on', () => {
    it.each(UPLOAD_ROUTES)('%s: a file part with no closing boundary (the body of issue 32)', async (path) => {
      const answer = await postBody(path, TRUNCATED, form('XYZ'));
      expectError(answer, 400, { type: 'invalid_request_error', code: 'invalid_multipart', message: /multipart body cannot be read/ });
      await stillServing();
    });

    it.each(UPLOAD_ROUTES)('%s: the same body sent chunked, and cut in the middle of a part header', async (path) => {
      const chunked = await send(path, form('XYZ', { 'transfer-encoding': 'chunked' }), (req) => {
        req.write(TRUNCATED.slice(0, 30));
        setTimeout(() => req.end(TRUNCATED.slice(30)), 20);
      });
      expectError(chunked, 400, { type: 'invalid_request_error', code: 'invalid_multipart' });
      const inHeader = await postBody(path, '--XYZ\r\nContent-Disposition: form-da', form('XYZ'));
      expectError(inHeader, 400, { type: 'invalid_request_error' });
      await stillServing();
    });

    it('every other malformed form: a 400 each, none of them reaching the provider', async () => {
      const file = (boundary: string) => `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\nabc\r\n--${boundary}--\r\n`;
      const cases: [string, string | Buffer, Record<string, string>][] = [
        ['no boundary parameter', file('XYZ'), { 'x-gateway-virtual-key': VK, 'content-type': 'multipart/form-data' }],
        ['an empty boundary', file(''), form('')],
        ['a boundary of 300 characters', file('b'.repeat(300)), form('b'.repeat(300))],
        ['a quoted boundary never closed', file('XYZ'), form('"XYZ')],
        ['only the closing delimiter', '--XYZ--\r\n', form('XYZ')],
        ['an empty body', '', form('XYZ')],
        ['bytes that are not a form', Buffer.from([0, 1, 2, 0xff, 0xfe, 13, 10, 13, 10]), form('XYZ')],
        ['a part header without a colon', '--XYZ\r\nContent-Disposition form-data; name="file"; filename="a"\r\n\r\nabc\r\n--XYZ--\r\n', form('XYZ')],
        ['a part without Content-Disposition', '--XYZ\r\nContent-Type: text/plain\r\n\r\nabc\r\n--XYZ--\r\n', form('XYZ')],
        [
          'a part header of 100 KB',
          `--XYZ\r\nContent-Disposition: form-data; name="file"; filename="${'a'.repeat(100_000)}"\r\n\r\nabc\r\n--XYZ--\r\n`,
          form('XYZ'),
        ],
        [
          '3,000 header lines in one part',
          `--XYZ\r\n${'X-A: b\r\n'.repeat(3000)}Content-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc\r\n--XYZ--\r\n`,
          form('XYZ'),
        ],
        ['a field over 1 MiB', `--XYZ\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n${'p'.repeat(1024 * 1024 + 10)}\r\n--XYZ--\r\n`, form('XYZ')],
        ['1,500 fields', `${'--XYZ\r\nContent-Disposition: form-data; name="f"\r\n\r\nv\r\n'.repeat(1500)}--XYZ--\r\n`, form('XYZ')],
        ['1,500 empty parts before the file', `${'--XYZ\r\n\r\n\r\n'.repeat(1500)}${file('XYZ')}`, form('XYZ')],
      ];
      const wrong: string[] = [];
      for (const [name, body, headers] of cases) {
        for (const path of UPLOAD_ROUTES) {
          const answer = await postBody(path, body, headers);
          const error = answer.body?.error;
          const shapeOk = error && typeof error.message === 'string' && error.type === 'invalid_request_error' && 'param' in error && 'code' in error;
          if (answer.status !== 400 || !shapeOk || /\n\s+at /.test(answer.text))
            wrong.push(`${path} ${name}: ${answer.status} ${answer.cut ?? answer.text.slice(0, 160)}`);
        }
      }
      expect(wrong).toEqual([]);
      expect(uploadsOf(mock).filter((upload) => upload.complete)).toEqual([]);
      await stillServing();
    });
  });

  describe('slow and abandoned uploads', () => {
    const head = (boundary: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`;

    it('a trickled upload (a few bytes every 20 ms) goes through whole', async () => {
      const boundary = 'trickle';
      const parts = [head(boundary), ...Array.from({ length: 10 }, (_, i) => `{"line":${i}}\n`), `\r\n--${boundary}--\r\n`];
      const answer = await send('/v1/files', form(boundary, { 'transfer-encoding': 'chunked' }), (req) => {
        const next = () => (parts.length > 1 ? (req.write(parts.shift()!), setTimeout(next, 20)) : req.end(parts.shift()));
        next();
      });
      expect([answer.status, answer.body?.bytes]).toEqual([200, 10 * '{"line":0}\n'.length]);
    });

    it.each(UPLOAD_ROUTES)(
      '%s: a client that sends part of a file, then disconnects: the provider request is aborted, the request logged client_closed_request',
      async (path) => {
        const boundary = 'abandon';
        const body =
          path === '/v1/files'
            ? head(boundary)
            : `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n${head(boundary).slice(head(boundary).indexOf(`--${boundary}\r\nContent-Disposition: form-data; name="file"`))}`;
        let requestId: string | null = null;
        const closed = await send(path, form(boundary, { 'content-length': '1000000' }), (req) => {
          req.on('response', (res) => (requestId = String(res.headers['x-gateway-request-id'] ?? '')));
          req.write(body);
          setTimeout(() => req.write(Buffer.alloc(64 * 1024, 0x61)), 50);
          setTimeout(() => req.destroy(), 300);
        });
        expect(closed.status).toBe(0); // no answer: the client left first
        expect(requestId).toBeNull();
        // The provider saw the upload start and then go away, never a complete form.
        const [upload] = await waitFor(() => (uploadsOf(mock).length && uploadsOf(mock).every((u) => u.aborted) ? uploadsOf(mock) : null));
        expect(upload.complete).toBe(false);
        await gateway.flushLogs();
        const [row] = await gateway.dataSource.query(
          `select error->>'code' as code, status_code from request_logs where operation = $1 order by created_at desc limit 1`,
          [OPERATION[path]],
        );
        expect(row).toEqual({ code: 'client_closed_request', status_code: 499 });
        await stillServing();
      },
    );
  });

  describe('a parameter name that cannot go in a header (issue 32, item 7)', () => {
    const metadataWith = (model: string) => ({
      model,
      max_tokens: 16,
      messages: [{ role: 'user', content: 'Hello' }],
      metadata: { user_id: 'u', 中: 'v', 'a\r\nx-injected: 1': 'v', 'b,c': 'v' },
    });

    it('/v1/messages to an OpenAI-compatible target: answered in JSON, the ignored names percent-encoded in a well-formed header', async () => {
      const answer = await call(gateway, '/v1/messages', { headers: { 'x-gateway-virtual-key': VK }, body: metadataWith('gpt-4o-mini') });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ type: 'message', role: 'assistant' });
      const header = answer.headers.get('x-gateway-ignored-params');
      expect(header).toBe('metadata.%E4%B8%AD,metadata.a%0D%0Ax-injected:%201,metadata.b%2Cc');
      expect(answer.headers.get('x-injected')).toBeNull();
      expect(header!.split(',').map(decodeURIComponent)).toEqual(['metadata.中', 'metadata.a\r\nx-injected: 1', 'metadata.b,c']);
      const log = await logOf(gateway, answer.headers.get('x-gateway-request-id'));
      expect(log.ignored_params).toEqual(header!.split(','));
    });

    it('the same request answered by a provider error: the error passes through in JSON with the same header, no HTML, no stack trace', async () => {
      const answer = await call(gateway, '/v1/messages', { headers: { 'x-gateway-virtual-key': VK }, body: metadataWith('mock-error-400') });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect(answer.text).not.toMatch(/<html|<pre>|\n\s+at /i);
      expect(answer.headers.get('x-gateway-ignored-params')).toBe('metadata.%E4%B8%AD,metadata.a%0D%0Ax-injected:%201,metadata.b%2Cc');
      expect((await call(gateway, '/health')).status).toBe(200);
    });
  });
});
