/**
 * A provider that answers as fast as its socket takes it, for backpressure tests
 * (test/security/slow-clients.e2e-spec.ts): OpenAI-shaped, but every answer is `<n>` MiB
 * long, `n` read from the model name `flood-<n>` (or the file id `file-flood-<n>`).
 * Each write waits for 'drain' when the socket refuses it, as a real server does, so
 * `written` says how far the gateway let it get.
 *
 *   POST /v1/chat/completions (stream: true)  SSE chunks of 1,000 characters, then usage and [DONE]
 *   POST /v1/audio/speech                     audio/mpeg bytes
 *   GET  /v1/files/{id}/content               application/octet-stream bytes
 *
 * Over TLS (`tls` given) it offers h2 and HTTP/1.1 through ALPN, like the providers do.
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';

export interface FloodRequest {
  path: string;
  /** The answer's whole length, in bytes. */
  total: number;
  /** Bytes handed to the socket so far (each write waited for 'drain' when refused). */
  written: number;
  httpVersion: string;
  finished: boolean;
  /** The gateway went away before the end (it aborted the request). */
  aborted: boolean;
}

export interface FloodProvider {
  url: string;
  requests: FloodRequest[];
  close(): Promise<void>;
}

const MiB = 1024 * 1024;
const TEXT = 'x'.repeat(1000);
const CHUNK = `data: ${JSON.stringify({ id: 'chatcmpl-flood', object: 'chat.completion.chunk', created: 1, model: 'flood', choices: [{ index: 0, delta: { content: TEXT }, finish_reason: null }] })}\n\n`;
const BYTES = Buffer.alloc(64 * 1024, 0x61);

type Res = http.ServerResponse | http2.Http2ServerResponse;

export async function startFloodProvider(tls?: { key: string; cert: string }): Promise<FloodProvider> {
  const requests: FloodRequest[] = [];

  const onRequest = (req: http.IncomingMessage | http2.Http2ServerRequest, res: Res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      const body = raw ? (JSON.parse(raw) as { model?: string; stream?: boolean }) : {};
      const size = Number(/flood-(\d+)/.exec(path.includes('/files/') ? path : String(body.model))?.[1] ?? 1);
      const rec: FloodRequest = { path, total: size * MiB, written: 0, httpVersion: req.httpVersion, finished: false, aborted: false };
      requests.push(rec);
      res.once('close', () => (rec.aborted = !rec.finished));
      if (path.endsWith('/chat/completions'))
        void flood(
          res,
          rec,
          'text/event-stream',
          CHUNK,
          `data: ${JSON.stringify({ id: 'chatcmpl-flood', object: 'chat.completion.chunk', created: 1, model: 'flood', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 7, total_tokens: 10 } })}\n\ndata: [DONE]\n\n`,
        );
      else void flood(res, rec, path.endsWith('/speech') ? 'audio/mpeg' : 'application/octet-stream', BYTES, '');
    });
  };

  const server = tls ? http2.createSecureServer({ ...tls, allowHTTP1: true }, onRequest) : http.createServer(onRequest);
  const sockets = new Set<Socket>();
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://${tls ? 'localhost' : '127.0.0.1'}:${port}`,
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Writes `chunk` until `rec.total` bytes went out, waiting for 'drain' whenever the socket refuses one, then `last`. */
async function flood(res: Res, rec: FloodRequest, contentType: string, chunk: string | Buffer, last: string): Promise<void> {
  res.writeHead(200, { 'content-type': contentType });
  const length = Buffer.byteLength(chunk);
  while (rec.written < rec.total) {
    if (res.destroyed || rec.aborted) return;
    const accepted = (res as http.ServerResponse).write(chunk);
    rec.written += length;
    if (!accepted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    }
  }
  if (res.destroyed) return;
  rec.finished = true;
  res.end(last);
}
