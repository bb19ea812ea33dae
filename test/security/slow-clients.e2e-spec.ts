/**
 * The gateway driven by clients that read slowly or not at all, and by sockets that send
 * nothing or trickle (issue 32, items 3 and 5; CONTRACT section 15):
 * - a stream whose client does not read slows the provider: the provider's writes block
 *   after a bounded amount, so the gateway's memory stays bounded (measured on a gateway
 *   process of its own, whose RSS is only the gateway's), on every streaming path (SSE over
 *   HTTP/1.1 and HTTP/2, speech audio, file content);
 * - a client that reads nothing for STREAM_CLIENT_IDLE_MS is disconnected, the provider
 *   request aborted, the row logged 499; one that reads slowly but steadily is not;
 * - the same for a realtime WebSocket session (the provider's socket no longer read while
 *   the client is behind; the session closed and logged 499) and for a log export (the
 *   connection cut, the reading of the log given up, the database's connections free);
 * - a fast client still gets every byte;
 * - connections that send nothing are closed after SERVER_HEADERS_TIMEOUT_MS, a trickled
 *   body after SERVER_REQUEST_TIMEOUT_MS, an idle keep-alive connection after
 *   SERVER_KEEPALIVE_TIMEOUT_MS, while slow answers, long streams and a quiet realtime
 *   WebSocket session are never cut.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { call, createVirtualKey, HELLO, sleep, waitFor } from '../support/e2e-helpers';
import { FloodProvider, FloodRequest, startFloodProvider } from '../support/flood-provider';
import { GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { MockRealtime, openRealtime, startMockRealtime } from '../support/mock-openai-realtime';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { testCertificates } from '../support/test-certificates';
import { uuidv7 } from '../../src/common/ids';
import { startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

const MiB = 1024 * 1024;

/** A request written on a raw socket that is then never read: the client's kernel buffer fills, then the gateway's. */
function unreadRequest(baseUrl: string, method: string, path: string, headers: Record<string, string>, body = ''): net.Socket {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  socket.on('error', () => undefined);
  return socket;
}

/** Resolves once `value()` has not changed for `quietMs`. */
async function settled(value: () => number, quietMs = 400, timeoutMs = 15_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = value();
  let since = Date.now();
  while (Date.now() < deadline) {
    await sleep(50);
    const now = value();
    if (now !== last) [last, since] = [now, Date.now()];
    else if (Date.now() - since >= quietMs) return now;
  }
  throw new Error(`settled: still changing after ${timeoutMs} ms (${last})`);
}

const written = (requests: FloodRequest[]) => requests.reduce((sum, request) => sum + request.written, 0);

/** A chat stream read to its end (fetch); resolves with its text. */
async function readWholeStream(baseUrl: string, headers: Record<string, string>, model: string): Promise<string> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, stream: true, messages: HELLO }),
  });
  expect(response.status).toBe(200);
  return response.text();
}

const chatBody = (model: string) => JSON.stringify({ model, stream: true, messages: HELLO });

describe('streams to clients that never read: a gateway process', () => {
  const CLIENTS = 20;
  let observer: TestGateway;
  let flood: FloodProvider;
  let child: GatewayProcess;
  const encryptionKey = randomBytes(32).toString('hex');
  const headers = { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-virtual-key': 'flood' };

  /** The process's resident memory, in bytes (Linux). */
  const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.child.pid}/status`, 'utf8'))![1]) * 1024;

  beforeAll(async () => {
    flood = await startFloodProvider();
    observer = await startTestGateway({ GATEWAY_ENCRYPTION_KEY: encryptionKey });
    await createVirtualKey(observer, { slug: 'flood', key: 'sk-flood-0000', custom_host: `${flood.url}/v1` });
    child = await startGatewayProcess({
      DATABASE_URL: observer.databaseUrl,
      GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
      GATEWAY_ENCRYPTION_KEY: encryptionKey,
      STREAM_CLIENT_BUFFER_BYTES: String(256 * 1024),
      LOG_BODIES: 'false',
    });
  });

  afterAll(async () => {
    await child?.stop(5_000);
    await observer?.close();
    await flood?.close();
  });

  it(`${CLIENTS} clients that never read a 32 MiB stream: the provider is slowed, the gateway's memory stays bounded, a fast client still gets its whole stream`, async () => {
    // Warm up (and the fast client's baseline): a whole 4 MiB stream read as it comes.
    const warm = await readWholeStream(child.url, headers, 'flood-4');
    expect(warm.endsWith('data: [DONE]\n\n')).toBe(true);
    const before = rss();

    const sockets = Array.from({ length: CLIENTS }, () =>
      unreadRequest(child.url, 'POST', '/v1/chat/completions', { ...headers, 'content-type': 'application/json' }, chatBody('flood-32')),
    );
    try {
      await waitFor(() => flood.requests.length === CLIENTS + 1, 10_000);
      const held = flood.requests.slice(1);
      const total = await settled(() => written(held));
      const grown = rss() - before;
      process.stdout.write(
        `slow-clients: ${CLIENTS} unread streams of 32 MiB: the provider wrote ${(total / MiB).toFixed(1)} MiB in all, the gateway's RSS grew ${(grown / MiB).toFixed(1)} MiB (from ${(before / MiB).toFixed(0)} MiB)\n`,
      );
      // Each provider's writes block once the sockets' kernel buffers (MiBs on loopback) and
      // the gateway's 256 KiB are full: a few MiB of the 32.
      for (const request of held) {
        expect(request.finished).toBe(false);
        expect(request.written).toBeLessThan(16 * MiB);
      }
      // 640 MiB of answers asked for; without backpressure the gateway read and held them all
      // (+1,257 MiB measured). With it: +55-69 MiB on Node 20, +129 MiB on Node 24, whose V8
      // lets its young generation grow further before collecting.
      expect(grown).toBeLessThan(256 * MiB);

      // Meanwhile a client that reads gets every byte.
      const text = await readWholeStream(child.url, headers, 'flood-4');
      expect(text.length).toBe(warm.length);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    // The clients gone, every provider request is aborted.
    await waitFor(() => flood.requests.slice(1, CLIENTS + 1).every((request) => request.aborted), 5_000);
  });
});

describe('streams to slow clients: backpressure on every path, idle readers cut', () => {
  const IDLE_MS = 1_500;
  /** Rows of the log export tests, each with a 16 KiB request body: about 19 MiB of JSON. */
  const EXPORT_ROWS = 1_200;
  let gateway: TestGateway;
  let flood: FloodProvider;
  let floodH2: FloodProvider;
  let realtime: MockRealtime;

  beforeAll(async () => {
    const certificates = await testCertificates();
    flood = await startFloodProvider();
    floodH2 = await startFloodProvider(certificates);
    realtime = await startMockRealtime();
    gateway = await startTestGateway({
      STREAM_CLIENT_IDLE_MS: String(IDLE_MS),
      STREAM_CLIENT_BUFFER_BYTES: String(64 * 1024),
      UPSTREAM_CA_FILE: certificates.caFile,
      LOG_BODIES: 'false',
    });
    await createVirtualKey(gateway, { slug: 'flood', key: 'sk-flood-0000', custom_host: `${flood.url}/v1` });
    await createVirtualKey(gateway, { slug: 'flood-h2', key: 'sk-flood-0000', custom_host: `${floodH2.url}/v1` });
    await createVirtualKey(gateway, { slug: 'rt', key: 'sk-realtime', custom_host: `${realtime.url.replace(/^ws/, 'http')}/v1` });
    // Older rows straight into the table for the export tests: two export batches, each more than the sockets' buffers hold.
    for (let start = 0; start < EXPORT_ROWS; start += 300) {
      const values = Array.from({ length: 300 }, (_, i) => {
        const at = Date.now() - 3_600_000 - start - i;
        return `('${uuidv7(at)}', 'export-bulk', to_timestamp(${at / 1000}), 'chat.completions', 200, 5, 'bulk-model', 'openai', jsonb_build_object('pad', repeat('x', 16384)))`;
      });
      await gateway.dataSource.query(
        `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, model, provider, request_body) values ${values.join(',')}`,
      );
    }
  });

  afterAll(async () => {
    await gateway?.close();
    await flood?.close();
    await floodH2?.close();
    await realtime?.close();
  });

  /** The only row of a trace, once written. */
  const rowOf = async (traceId: string) => {
    await gateway.flushLogs();
    const rows = await waitFor(async () => {
      await gateway.flushLogs();
      const logs = await call(gateway, `/v1/logs?trace_id=${traceId}`);
      return logs.body.data?.length ? logs.body.data : null;
    }, 5_000);
    expect(rows).toHaveLength(1);
    return rows[0];
  };

  const PATHS = [
    { name: 'an SSE chat stream', provider: () => flood, method: 'POST', path: '/v1/chat/completions', body: chatBody('flood-32'), vk: 'flood' },
    {
      name: 'an SSE chat stream from an HTTP/2 provider',
      provider: () => floodH2,
      method: 'POST',
      path: '/v1/chat/completions',
      body: chatBody('flood-32'),
      vk: 'flood-h2',
    },
    {
      name: 'speech audio',
      provider: () => flood,
      method: 'POST',
      path: '/v1/audio/speech',
      body: JSON.stringify({ model: 'flood-32', input: 'hi', voice: 'alloy' }),
      vk: 'flood',
    },
    { name: "a file's content", provider: () => flood, method: 'GET', path: '/v1/files/file-flood-32/content', body: '', vk: 'flood' },
  ];

  it.each(PATHS)(
    '$name: a client that never reads slows the provider, is cut after STREAM_CLIENT_IDLE_MS, and is logged 499',
    async ({ provider, method, path, body, vk }) => {
      const mock = provider();
      if (vk === 'flood-h2') {
        // The first request to an origin goes over HTTP/1.1 while an HTTP/2 session opens.
        await readWholeStream(gateway.url, { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': vk }, 'flood-1');
        await sleep(300);
      }
      const seen = mock.requests.length;
      const traceId = `unread-${randomBytes(4).toString('hex')}`;
      const openedAt = Date.now();
      const socket = unreadRequest(
        gateway.url,
        method,
        path,
        { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': vk, 'x-gateway-trace-id': traceId, 'content-type': 'application/json' },
        body,
      );
      try {
        const request = await waitFor(() => mock.requests[seen], 5_000);
        if (vk === 'flood-h2') expect(request.httpVersion).toBe('2.0');
        // The provider's writes block: it wrote a few MiB of its 32 and no more.
        await waitFor(() => request.aborted || null, 10_000);
        expect(request.finished).toBe(false);
        expect(request.written).toBeLessThan(16 * MiB);
        // Cut once the client read nothing for IDLE_MS, not before.
        expect(Date.now() - openedAt).toBeGreaterThanOrEqual(IDLE_MS);
        const row = await rowOf(traceId);
        expect(row.status_code).toBe(499);
        expect(row.error).toMatchObject({ code: 'client_closed_request', message: expect.stringContaining('STREAM_CLIENT_IDLE_MS') });
      } finally {
        socket.destroy();
      }
    },
  );

  it('a client that reads, slower than the provider writes, is not cut', async () => {
    const seen = flood.requests.length;
    const socket = unreadRequest(
      gateway.url,
      'POST',
      '/v1/chat/completions',
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'flood', 'content-type': 'application/json' },
      chatBody('flood-32'),
    );
    try {
      const request = await waitFor(() => flood.requests[seen], 5_000);
      // What its socket holds every 25 ms, for three idle periods: far slower than the
      // provider writes, so it stays behind. (The gateway sees a read only when its socket's
      // kernel buffer takes more, after about half of it was freed: on loopback, MiBs.)
      let received = 0;
      let head = '';
      const until = Date.now() + 3 * IDLE_MS;
      while (Date.now() < until) {
        await sleep(25);
        const chunk = socket.read() as Buffer | null;
        if (chunk) received += chunk.length;
        if (chunk && !head) head = chunk.toString('latin1', 0, 12);
      }
      expect(head).toBe('HTTP/1.1 200');
      expect(received).toBeGreaterThan(MiB);
      expect(request.finished).toBe(false);
      expect(request.aborted).toBe(false);
      expect(socket.destroyed).toBe(false);
    } finally {
      socket.destroy();
    }
  });

  it('a client that reads gets the whole stream, from either provider', async () => {
    for (const vk of ['flood', 'flood-h2']) {
      const text = await readWholeStream(gateway.url, { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': vk }, 'flood-8');
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(text.split('\n\n').filter((frame) => frame.includes('"content":"xxx')).length).toBeGreaterThanOrEqual((8 * MiB) / 1200);
    }
  });

  const realtimeHeaders = (traceId: string) => ({
    'x-gateway-api-key': gateway.adminKey,
    'x-gateway-virtual-key': 'rt',
    'openai-beta': 'realtime=v1',
    'x-gateway-trace-id': traceId,
  });
  const floodMessage = { type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'flood' }] } };

  it('realtime: a client that never reads while the provider floods: the provider is no longer read, the session is closed after STREAM_CLIENT_IDLE_MS and logged 499', async () => {
    const traceId = `unread-rt-${randomBytes(4).toString('hex')}`;
    const client = await openRealtime(`${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, { headers: realtimeHeaders(traceId) });
    try {
      await client.waitForEvent('session.created');
      const connection = realtime.connections[realtime.connections.length - 1];
      client.ws.pause(); // reads nothing from now on
      const pausedAt = Date.now();
      client.send(floodMessage);
      client.send({ type: 'response.create' });
      // The mock hands its 2,000 deltas of 16 KiB (32 MiB) to its socket at once, without waiting:
      // what the gateway does not read stays there.
      await waitFor(() => connection.sent.some((event) => event.type === 'response.done'), 10_000);
      await sleep(300);
      const leftAtProvider = connection.socket.bufferedAmount;
      process.stdout.write(`slow-clients: realtime client that reads nothing: ${(leftAtProvider / MiB).toFixed(1)} MiB of 32 left at the provider\n`);
      expect(leftAtProvider).toBeGreaterThan(16 * MiB);
      // The gateway closes the session (the provider's socket too) once the client took nothing for IDLE_MS.
      await waitFor(() => connection.closedAt, 10_000);
      expect(connection.closedBy).toBe('client');
      expect(connection.closedAt! - pausedAt).toBeGreaterThanOrEqual(IDLE_MS);
      const row = await rowOf(traceId);
      expect(row).toMatchObject({ operation: 'realtime', status_code: 499 });
      expect(row.error).toMatchObject({ code: 'client_closed_request', message: expect.stringContaining('STREAM_CLIENT_IDLE_MS') });
      // The client's connection is gone too: reading again, it sees the close.
      client.ws.resume();
      await client.waitForClose(5_000);
    } finally {
      client.ws.terminate();
    }
  });

  it('realtime: a client that reads slowly but steadily is not cut', async () => {
    const client = await openRealtime(`${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, {
      headers: realtimeHeaders(`slow-rt-${randomBytes(4).toString('hex')}`),
    });
    try {
      await client.waitForEvent('session.created');
      const connection = realtime.connections[realtime.connections.length - 1];
      client.ws.pause();
      client.send(floodMessage);
      client.send({ type: 'response.create' });
      // A moment of reading every 250 ms, for three idle periods.
      const until = Date.now() + 3 * IDLE_MS;
      while (Date.now() < until) {
        await sleep(250);
        client.ws.resume();
        await sleep(5);
        client.ws.pause();
      }
      expect(client.events.filter((event) => event.type === 'response.audio.delta').length).toBeGreaterThan(0);
      expect(connection.closedAt).toBeUndefined();
      client.ws.resume();
      await client.waitForEvent('response.done', { timeoutMs: 30_000 });
    } finally {
      client.ws.close();
    }
  });

  it('realtime: a client that leaves during the handshake: the provider socket is closed and the session logged 499', async () => {
    const traceId = `gone-rt-${randomBytes(4).toString('hex')}`;
    const seen = realtime.connections.length;
    const key = randomBytes(16).toString('base64');
    const headers = { ...realtimeHeaders(traceId), upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-version': '13', 'sec-websocket-key': key };
    const socket = unreadRequest(gateway.url, 'GET', '/v1/realtime?model=gpt-realtime', headers);
    socket.end(); // gone before the gateway has routed and connected to the provider
    const connection = await waitFor(() => realtime.connections[seen], 5_000);
    await waitFor(() => connection.closedAt, 5_000);
    expect(connection.closedBy).toBe('client');
    const row = await rowOf(traceId);
    expect(row).toMatchObject({ operation: 'realtime', status_code: 499, error: { code: 'client_closed_request' } });
    socket.destroy();
  });

  /** The gateway's side of the next connection to it (to see it closed while the client reads nothing). */
  function nextServerSocket(): Promise<net.Socket> {
    return new Promise((resolve) => gateway.app.getHttpServer().once('connection', resolve));
  }
  /** Connections of the database pool in use (the pg Pool behind TypeORM). */
  const poolInUse = () => {
    const pool = (gateway.dataSource.driver as unknown as { master: { totalCount: number; idleCount: number } }).master;
    return pool.totalCount - pool.idleCount;
  };

  it.each(['json', 'csv'])(
    'a log export (%s) that is never read is cut after STREAM_CLIENT_IDLE_MS, its reading given up; the next one is served whole',
    async (format) => {
      const path = `/v1/logs/export?format=${format}&include_bodies=true&trace_id=export-bulk`;
      const serverSide = nextServerSocket();
      const socket = unreadRequest(gateway.url, 'GET', path, { 'x-gateway-api-key': gateway.adminKey });
      const openedAt = Date.now();
      try {
        const server = await serverSide;
        const closedAfter = await new Promise<number>((resolve) => server.once('close', () => resolve(Date.now() - openedAt)));
        expect(closedAfter).toBeGreaterThanOrEqual(IDLE_MS);
        expect(closedAfter).toBeLessThan(IDLE_MS + 5_000);
        // What it took was a start of the file, far from all of it.
        expect(server.bytesWritten).toBeLessThan(16 * MiB);
        await waitFor(() => poolInUse() === 0 || null, 5_000);
      } finally {
        socket.destroy();
      }
      const response = await fetch(`${gateway.url}${path}`, { headers: { 'x-gateway-api-key': gateway.adminKey } });
      expect(response.status).toBe(200);
      const text = await response.text();
      if (format === 'json') expect(JSON.parse(text)).toHaveLength(EXPORT_ROWS);
      else expect(text.split('\r\n').filter((line) => line.includes('export-bulk'))).toHaveLength(EXPORT_ROWS);
    },
  );
});

describe('idle and trickling sockets: the server timeouts', () => {
  const HEADERS_MS = 500;
  const REQUEST_MS = 1_500;
  const KEEPALIVE_MS = 700;
  let gateway: TestGateway;
  let mock: MockUpstream;
  let realtime: MockRealtime;

  beforeAll(async () => {
    mock = await startMockUpstream();
    realtime = await startMockRealtime();
    gateway = await startTestGateway({
      SERVER_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      SERVER_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
      SERVER_KEEPALIVE_TIMEOUT_MS: String(KEEPALIVE_MS),
    });
    await createVirtualKey(gateway, { slug: 'slow', key: 'sk-slow-0000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'rt', key: 'sk-realtime', custom_host: `${realtime.url.replace(/^ws/, 'http')}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    await realtime?.close();
  });

  /** A socket to the gateway; resolves `closed` with the ms from its opening to its close, and keeps what it received. */
  function open(): { socket: net.Socket; closed: Promise<number>; received: () => string } {
    const { port } = new URL(gateway.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    const openedAt = Date.now();
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', () => undefined);
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - openedAt)));
    return { socket, closed, received: () => received };
  }
  const connections = () =>
    new Promise<number>((resolve, reject) =>
      gateway.app.getHttpServer().getConnections((error: Error | null, count: number) => (error ? reject(error) : resolve(count))),
    );

  it('300 connections that send nothing are closed after SERVER_HEADERS_TIMEOUT_MS', async () => {
    const sockets = Array.from({ length: 300 }, open);
    await waitFor(async () => (await connections()) >= 300, 5_000);
    const times = await Promise.all(sockets.map((s) => s.closed));
    expect(Math.min(...times)).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(Math.max(...times)).toBeLessThan(HEADERS_MS + 1_500);
    expect(sockets[0].received()).toMatch(/^HTTP\/1\.1 408/);
    await waitFor(async () => (await connections()) === 0, 2_000);
  });

  it('a request whose headers trickle in is closed after SERVER_HEADERS_TIMEOUT_MS', async () => {
    const client = open();
    client.socket.write('GET /health HTTP/1.1\r\nhost: x\r\n');
    const timer = setInterval(() => client.socket.write('x-a: b\r\n'), 100);
    const closedAfter = await client.closed;
    clearInterval(timer);
    expect(closedAfter).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(closedAfter).toBeLessThan(HEADERS_MS + 1_500);
  });

  it('a trickled body is closed after SERVER_REQUEST_TIMEOUT_MS', async () => {
    const client = open();
    client.socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-gateway-api-key: ${gateway.adminKey}\r\nx-gateway-virtual-key: slow\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"model":"gpt-4o-mini","messages":[`,
    );
    const timer = setInterval(() => client.socket.write(' '), 100);
    const closedAfter = await client.closed;
    clearInterval(timer);
    expect(closedAfter).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(closedAfter).toBeLessThan(REQUEST_MS + 1_500);
    expect(mock.requests.length).toBe(0);
  });

  it('a keep-alive connection idle after its answer is closed after SERVER_KEEPALIVE_TIMEOUT_MS', async () => {
    const client = open();
    client.socket.write('GET /health HTTP/1.1\r\nhost: x\r\n\r\n');
    await waitFor(() => client.received().includes('\r\n\r\n') || null);
    const answeredAt = Date.now();
    await client.closed;
    const idleFor = Date.now() - answeredAt;
    expect(client.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(idleFor).toBeGreaterThanOrEqual(KEEPALIVE_MS - 100);
    // Node 24 holds the socket keepAliveTimeoutBuffer (1 s) past the advertised timeout (server-timeouts.ts); Node 20 has none.
    const nodeBuffer = (new http.Server() as http.Server & { keepAliveTimeoutBuffer?: number }).keepAliveTimeoutBuffer ?? 0;
    expect(idleFor).toBeLessThan(KEEPALIVE_MS + nodeBuffer + 1_000);
  });

  it('a slow answer and a long, slow stream are not cut by any of them', async () => {
    const headers = { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'slow', 'content-type': 'application/json' };
    // The provider takes 2 s to answer: past all three timeouts.
    const plain = fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'mock-slow-2000', messages: HELLO }) });
    // Five words 600 ms apart: 3 s of stream.
    const streamed = fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'mock-slow-600', stream: true, messages: [{ role: 'user', content: 'echo: one two three four five' }] }),
    });
    const [answer, stream] = await Promise.all([plain, streamed]);
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('Hello from mock');
    const text = await stream.text();
    expect(text).toContain('five');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('a realtime WebSocket session quiet for longer than every timeout stays open', async () => {
    const client = await openRealtime(`${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, {
      headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'rt', 'openai-beta': 'realtime=v1' },
    });
    try {
      await client.waitForEvent('session.created');
      await sleep(REQUEST_MS + 700);
      expect(client.closed).toBeUndefined();
      const from = client.events.length;
      client.send({ type: 'response.create' });
      await client.waitForEvent('response.done', { from, timeoutMs: 5_000 });
    } finally {
      client.ws.close();
    }
  });
});
