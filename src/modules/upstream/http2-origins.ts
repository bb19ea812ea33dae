import { EventEmitter } from 'node:events';
import * as http2 from 'node:http2';
import type { Readable } from 'node:stream';
import * as tls from 'node:tls';

/** How long an origin that answered the h2 offer with HTTP/1.1 is sent HTTP/1.1 before it is asked again. */
const HTTP1_RECHECK_MS = 60 * 60_000;
/** After a failed connection, how long before another h2 session to the origin is tried (HTTP/1.1 meanwhile). */
const RETRY_AFTER_FAILURE_MS = 30_000;
/**
 * Streams on one session at most, whatever the server allows: past it another connection
 * opens. Providers' servers advertise 100 to 256; more on one connection only queues more
 * in its buffers (and one lost connection fails more streams).
 */
const MAX_STREAMS_PER_SESSION = 256;
/** Node's cap on a session's buffered frames (default 10 MB), in MB: 256 streams' events queue while the gateway is busy. */
const SESSION_MEMORY_MB = 64;
/** Streams a session is assumed to take before the server says (RFC 9113 recommends at least 100). */
const DEFAULT_STREAM_LIMIT = 100;
/** A session with no stream open for this long is closed (as undici's keep-alive does for HTTP/1.1). */
const IDLE_SESSION_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** At shutdown (the gateway's own grace period is over by then), how long open streams get before their session is cut. */
const CLOSE_GRACE_MS = 1_000;
/** Origins remembered at most (hosts named per request can be many): past it the oldest without a session is forgotten. */
const MAX_ORIGINS = 1000;
/** Credit per stream (HTTP/2's default is 64 KiB): a large JSON answer arrives without waiting on window updates. */
const STREAM_WINDOW_BYTES = 1 << 20;

/** Headers HTTP/2 forbids (RFC 9113 section 8.2.2); the host travels as `:authority`. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

/** One HTTP/2 connection to a provider and the streams the gateway has on it. */
export interface Session {
  readonly session: http2.ClientHttp2Session;
  /** Streams this gateway has open on it. */
  open: number;
  /** Its connection is up: before, a failing stream cannot have reached the provider. */
  connected: boolean;
}

/** What an origin speaks: learned from the first TLS handshake that offers h2 (ALPN). */
type OriginState =
  | { protocol: 'unknown'; retryAt: number }
  | { protocol: 'http1'; recheckAt: number }
  | {
      protocol: 'http2';
      sessions: Session[];
      /** Streams a session takes: the server's SETTINGS_MAX_CONCURRENT_STREAMS as last seen (at most MAX_STREAMS_PER_SESSION). */
      streamLimit: number;
    };

/** Where a request goes over HTTP/2: a session with room, and the request's URL parsed. */
export interface Http2Target {
  entry: Session;
  url: URL;
}

export interface Http2Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The response stream: read, iterate or destroy it like undici's body (destroying cancels the stream). */
  body: Readable;
}

/**
 * The request could not be sent on the session (the server refused the stream, or the
 * session went away first): the provider has not processed it, so it is safe to send
 * again over HTTP/1.1.
 */
export class Http2NotSent extends Error {}

/** An attempt aborted (the client left, a timeout, the shutdown deadline) before the answer's headers. */
class Http2Aborted extends Error {}

/**
 * HTTP/2 to the providers that offer it. A stream holds its request for the answer's
 * whole length, so over HTTP/1.1 every open stream is a connection of its own (a socket,
 * a TLS session, a file descriptor); over HTTP/2 hundreds share one.
 *
 * The first request to an origin goes over HTTP/1.1 (undici) while a TLS connection
 * offering h2 and HTTP/1.1 learns what the origin speaks (ALPN), so no request waits for
 * that. From then on an HTTP/2 origin's requests go on its sessions, each up to the
 * server's SETTINGS_MAX_CONCURRENT_STREAMS; when all are full another opens at once and
 * takes the next requests (they wait for that connection as an HTTP/1.1 request waits
 * for its own), so nothing queues behind busy streams.
 *
 * Only `https:` origins (providers offer HTTP/2 through TLS's ALPN; plain `http:` stays
 * HTTP/1.1). Connections resolve through the same host policy (`lookup`) as undici's.
 */
export class Http2Origins {
  private readonly origins = new Map<string, OriginState>();
  /** Origins whose protocol a connection is being opened to learn. */
  private readonly probing = new Set<string>();
  private closed = false;

  constructor(
    /** The TLS options of every connection: the host policy's `lookup`, extra CAs. */
    private readonly tlsOptions: Pick<tls.ConnectionOptions, 'lookup' | 'ca'>,
  ) {}

  /**
   * A session to `href`'s origin with room for one more stream, or null: send this request
   * over HTTP/1.1 (the origin's protocol is not known yet, or it is HTTP/1.1). When every
   * session to an HTTP/2 origin is full, another opens at once and takes the request: it
   * waits for that connection as an HTTP/1.1 request waits for its own.
   */
  sessionFor(href: string): Http2Target | null {
    if (!href.startsWith('https:') || this.closed) return null;
    const url = new URL(href);
    const state = this.origins.get(url.origin);
    if (state?.protocol === 'http2') {
      for (const entry of state.sessions) {
        if (entry.open < roomOf(entry.session, state.streamLimit)) return { entry, url };
      }
      return { entry: this.addSession(url, state, connectTls(url, ['h2'], this.tlsOptions)), url };
    }
    const now = Date.now();
    if (!state || (state.protocol === 'unknown' && now >= state.retryAt) || (state.protocol === 'http1' && now >= state.recheckAt)) this.probe(url);
    return null;
  }

  private remember(origin: string, state: OriginState): void {
    if (this.origins.size >= MAX_ORIGINS && !this.origins.has(origin)) {
      for (const [known, knownState] of this.origins) {
        if (knownState.protocol !== 'http2' || knownState.sessions.length === 0) {
          this.origins.delete(known);
          break;
        }
      }
    }
    this.origins.set(origin, state);
  }

  /**
   * Sends one request on `session`. Resolves with the answer once its headers arrive;
   * rejects with Http2NotSent when the request never reached the provider (send it over
   * HTTP/1.1), Http2Aborted when `abort` fired first, or the stream's error.
   */
  request(
    { entry, url }: Http2Target,
    method: string,
    headers: Record<string, string>,
    body: string | Buffer | undefined,
    abort: EventEmitter,
  ): Promise<Http2Answer> {
    const { session } = entry;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(toHttp2Headers(method, url, headers), { endStream: body === undefined });
    } catch {
      return Promise.reject(new Http2NotSent('The HTTP/2 session closed'));
    }
    entry.open += 1;
    stream.once('close', () => (entry.open -= 1));
    if (body !== undefined) stream.end(body);

    return new Promise((resolve, reject) => {
      let answered = false;
      const onAbort = () => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        // After the headers, the body is destroyed like undici's: its reader sees the error.
        if (answered) stream.destroy(new Http2Aborted('The request was aborted'));
        else reject(new Http2Aborted('The request was aborted'));
      };
      abort.once('abort', onAbort);
      stream.once('close', () => abort.off('abort', onAbort));
      stream.once('response', (responseHeaders) => {
        answered = true;
        const { ':status': status, ...rest } = responseHeaders;
        resolve({ status: Number(status), headers: withoutPseudoHeaders(rest), body: stream });
      });
      // Sent again over HTTP/1.1 only when the provider cannot have seen it: the stream refused
      // (also those past a GOAWAY's last stream), or the connection never came up. A
      // connection lost after the request went out may have reached the provider: an error.
      const notSent = () => stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM || !entry.connected;
      stream.on('error', (error: Error) => {
        if (answered) return; // the body's reader sees it
        reject(notSent() ? new Http2NotSent(error.message) : error);
      });
      stream.once('close', () => {
        if (!answered)
          reject(
            notSent() ? new Http2NotSent('The HTTP/2 stream closed before it was sent') : new Error(`The HTTP/2 stream was reset (code ${stream.rstCode})`),
          );
      });
    });
  }

  /** Open HTTP/2 sessions by origin (for the metrics). */
  sessionCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [origin, state] of this.origins) if (state.protocol === 'http2' && state.sessions.length) counts.set(origin, state.sessions.length);
    return counts;
  }

  /** Closes every session: streams still open get a moment to finish (HTTP/2's graceful close), then are cut. */
  async close(): Promise<void> {
    this.closed = true;
    const sessions = [...this.origins.values()].flatMap((state) => (state.protocol === 'http2' ? state.sessions : []));
    this.origins.clear();
    await Promise.all(
      sessions.map(
        ({ session }) =>
          new Promise<void>((resolve) => {
            if (session.destroyed) return resolve();
            const cut = setTimeout(() => session.destroy(), CLOSE_GRACE_MS);
            session.close(() => {
              clearTimeout(cut);
              resolve();
            });
          }),
      ),
    );
  }

  /** Opens a TLS connection offering h2 and HTTP/1.1: the server's pick decides the origin's protocol (the connection becomes its first session). */
  private probe(url: URL): void {
    const origin = url.origin;
    if (this.probing.has(origin)) return;
    this.probing.add(origin);
    const socket = connectTls(url, ['h2', 'http/1.1'], this.tlsOptions);
    const failed = () => {
      this.probing.delete(origin);
      this.remember(origin, { protocol: 'unknown', retryAt: Date.now() + RETRY_AFTER_FAILURE_MS });
    };
    socket.once('error', failed);
    socket.once('secureConnect', () => {
      // From here a failure is the session's (the origin stays HTTP/2; the next request opens another).
      socket.off('error', failed);
      this.probing.delete(origin);
      if (socket.alpnProtocol !== 'h2' || this.closed) {
        socket.destroy();
        if (!this.closed) this.remember(origin, { protocol: 'http1', recheckAt: Date.now() + HTTP1_RECHECK_MS });
        return;
      }
      const state = { protocol: 'http2' as const, sessions: [], streamLimit: DEFAULT_STREAM_LIMIT };
      this.remember(origin, state);
      this.addSession(url, state, socket);
    });
  }

  private addSession(url: URL, state: Extract<OriginState, { protocol: 'http2' }>, socket: tls.TLSSocket): Session {
    const session = http2.connect(url.origin, {
      createConnection: () => socket,
      maxSessionMemory: SESSION_MEMORY_MB,
      settings: { enablePush: false, initialWindowSize: STREAM_WINDOW_BYTES },
    });
    const entry: Session = { session, open: 0, connected: false };
    session.once('connect', () => (entry.connected = true));
    state.sessions.push(entry);
    const remove = () => {
      const index = state.sessions.indexOf(entry);
      if (index !== -1) state.sessions.splice(index, 1);
    };
    session.once(
      'remoteSettings',
      (settings) => (state.streamLimit = Math.min(settings.maxConcurrentStreams ?? DEFAULT_STREAM_LIMIT, MAX_STREAMS_PER_SESSION)),
    );
    // A session the server closes (GOAWAY, e.g. a connection rotated) takes no new stream;
    // the streams it already accepted finish on it. One that fails to connect fails its
    // streams as not sent (they go over HTTP/1.1).
    session.once('goaway', remove);
    session.once('close', remove);
    session.on('error', remove);
    session.setTimeout(IDLE_SESSION_MS, () => {
      if (entry.open === 0) {
        remove();
        session.close();
      }
    });
    // Open sessions do not keep the process alive on their own (the requests on them do).
    session.unref();
    return entry;
  }
}

/** A TLS connection to `url`'s origin offering `alpn`, through the host policy's lookup. */
function connectTls(url: URL, alpn: string[], tlsOptions: Pick<tls.ConnectionOptions, 'lookup' | 'ca'>): tls.TLSSocket {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const socket = tls.connect({ host, port: Number(url.port || 443), servername: isIpLiteral(host) ? undefined : host, ALPNProtocols: alpn, ...tlsOptions });
  socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(new Error('connect timeout')));
  socket.once('secureConnect', () => socket.setTimeout(0));
  return socket;
}

/** Streams `session` may still carry: the server's limit once its SETTINGS arrived, before that the origin's last known one. */
function roomOf(session: http2.ClientHttp2Session, streamLimit: number): number {
  if (session.closed || session.destroyed) return 0;
  return session.connecting ? streamLimit : Math.min(session.remoteSettings.maxConcurrentStreams ?? DEFAULT_STREAM_LIMIT, MAX_STREAMS_PER_SESSION);
}

function toHttp2Headers(method: string, url: URL, headers: Record<string, string>): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = { ':method': method, ':path': `${url.pathname}${url.search}` };
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'host') out[':authority'] = value;
    else if (!CONNECTION_HEADERS.has(lower)) out[lower] = value;
  }
  return out;
}

function withoutPseudoHeaders(headers: http2.IncomingHttpHeaders): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(headers)) if (!name.startsWith(':')) out[name] = value;
  return out;
}

function isIpLiteral(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}
