import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError, UpstreamHttpError } from '../common/errors/gateway-error';
import { writeError } from './gateway-exception.filter';

/** What writeError uses of Express's response, over Node's own (which validates every header). */
function expressLike(res: http.ServerResponse): Response {
  const extra = {
    status: (code: number) => ((res.statusCode = code), res),
    set: (name: string, value: string) => (res.setHeader(name, value), res),
    json: (body: unknown) => {
      const text = JSON.stringify(body);
      res.setHeader('content-type', 'application/json');
      return res.end(text);
    },
  };
  return Object.assign(res, extra) as unknown as Response;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The connection ended without a complete answer. */
  cut: boolean;
}

/** Serves one request whose handler is `handle`, and returns what the client received. */
async function answerTo(path: string, handle: (req: Request, res: Response) => void): Promise<Answer> {
  const server = http.createServer((req, res) =>
    handle(Object.assign(req, { path: new URL(req.url!, 'http://x').pathname }) as unknown as Request, expressLike(res)),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<Answer>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, cut: !res.complete }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, cut: true }));
      });
      req.on('error', () => resolve({ status: 0, headers: {}, text: '', cut: true }));
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('writeError: the exception filter cannot fail', () => {
  const logger = new Logger('test');
  beforeAll(() => Logger.overrideLogger(false));

  it('leaves out a header Node refuses (non-Latin-1, CR/LF) and still answers the error in JSON', async () => {
    const error = new GatewayError(429, 'rate_limit_error', 'Slow down', 'rate_limited', null, {
      'retry-after': '1',
      'x-bad': '中',
      'x-split': 'a\r\nx-injected: 1',
    });
    const answer = await answerTo('/v1/chat/completions', (req, res) => writeError(req, res, error, logger));
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.text)).toEqual({ error: { message: 'Slow down', type: 'rate_limit_error', param: null, code: 'rate_limited' } });
    expect(answer.headers['retry-after']).toBe('1');
    expect([answer.headers['x-bad'], answer.headers['x-split'], answer.headers['x-injected']]).toEqual([undefined, undefined, undefined]);
  });

  it("a provider's error with a header Node refuses: passed through without it", async () => {
    const error = new UpstreamHttpError(400, Buffer.from('{"error":{"message":"no"}}'), 'application/json', { 'retry-after': '\u4e2d' });
    const answer = await answerTo('/v1/chat/completions', (req, res) => writeError(req, res, error, logger));
    expect([answer.status, answer.text, answer.headers['retry-after']]).toEqual([400, '{"error":{"message":"no"}}', undefined]);
  });

  it('an error that cannot be written (its body will not serialise): a minimal JSON error in the route’s shape, same status', async () => {
    const error = new GatewayError(400, 'invalid_request_error', 'Bad field', 'bad', 'x', {}, { huge: BigInt(1) });
    const openai = await answerTo('/v1/chat/completions', (req, res) => writeError(req, res, error, logger));
    expect([openai.status, openai.headers['content-type']]).toEqual([400, 'application/json']);
    expect(JSON.parse(openai.text)).toEqual({ error: { message: 'Bad field', type: 'invalid_request_error', param: null, code: 'bad' } });
    const anthropic = await answerTo('/v1/messages', (req, res) => writeError(req, res, error, logger));
    expect([anthropic.status, JSON.parse(anthropic.text)]).toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message: 'Bad field' } }]);
  });

  it('an unknown error that cannot be written: 500 in JSON without details, never a stack trace', async () => {
    const error = new Error('secret detail');
    const answer = await answerTo('/v1/embeddings', (req, res) => {
      res.json = () => {
        throw new Error('broken');
      };
      writeError(req, res, error, logger);
    });
    expect([answer.status, JSON.parse(answer.text)]).toEqual([
      500,
      { error: { message: 'Internal gateway error', type: 'api_error', param: null, code: 'internal_error' } },
    ]);
    expect(answer.text).not.toMatch(/secret detail|\n\s+at /);
  });

  it('once the answer has begun: ended as it is (a failure to end it destroys the socket)', async () => {
    const error = GatewayError.upstreamMalformed('cut');
    const ended = await answerTo('/v1/chat/completions', (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: {}\n\n');
      writeError(req, res, error, logger);
    });
    expect([ended.status, ended.text, ended.cut]).toEqual([200, 'data: {}\n\n', false]);
    const destroyed = await answerTo('/v1/chat/completions', (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: {}\n\n');
      res.end = () => {
        throw new Error('broken');
      };
      writeError(req, res, error, logger);
    });
    expect(destroyed.cut).toBe(true);
  });
});
