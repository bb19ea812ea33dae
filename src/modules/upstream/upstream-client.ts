import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { Agent, errors, request } from 'undici';
import { ClientClosedRequestError, GatewayError } from '../../common/errors/gateway-error';
import { ThrottledWarning } from '../../common/logging/throttled-warning';
import type { Environment } from '../../config/environment';
import { UpstreamHostPolicy, UpstreamHostRefusedError } from './upstream-host-policy';
import { type Http2Answer, Http2NotSent, Http2Origins } from './http2-origins';
import { certificateAuthorities } from '../../config/certificate-authorities';
import type { UpstreamRequest } from '../../providers/provider-adapter';
import { Readiness } from '../health/readiness';

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** undici's body, or the HTTP/2 stream: read it, iterate it, or destroy it to abort. */
  body: Readable;
  /** Stops the request timer once the caller has what the timeout guards (the body, or the first byte of a stream). */
  clearTimeout(): void;
  timedOut(): boolean;
}

export interface SendOptions {
  /** The client's signal: aborted when the client goes away. */
  signal: AbortSignal;
  timeoutMs: number;
  /** An admin chose this host (RouteTarget.privateNetworkAllowed): private addresses are reachable. */
  privateNetworkAllowed: boolean;
  /** The provider id, naming the origin in the waiting-requests metric and warning. */
  provider?: string;
}

/** A host policy and the connections that resolve through it: undici's HTTP/1.1 pool, HTTP/2 sessions (null when off). */
interface Route {
  policy: UpstreamHostPolicy;
  agent: Agent;
  http2: Http2Origins | null;
}

/**
 * The one HTTP client for providers: undici's pooled keep-alive connections (far less
 * CPU per request than `fetch` and web streams), a timeout per request, and the
 * client's disconnect passed through as an abort.
 */
@Injectable()
export class UpstreamClient implements OnApplicationShutdown {
  /** For hosts named per request by a non-admin key (and the gateway's own calls out): the operator's policy. */
  private readonly requested: Route;
  /**
   * For hosts an admin chose (built-in providers such as `ollama`, virtual keys, stored
   * configs, an admin key's per-request host): private networks too (CONTRACT section 12).
   * Link-local and metadata addresses stay refused.
   */
  private readonly adminChosen: Route;
  private readonly maxResponseBytes: number;
  /** UPSTREAM_MAX_CONNECTIONS per origin; 0: no limit, so nothing ever waits for a connection. */
  private readonly maxConnections: number;
  /** The provider last seen sending to each origin (with a limit, or over HTTP/2), for the waiting-requests and sessions metrics. */
  private readonly providerOfOrigin = new Map<string, string>();
  private readonly saturated = new ThrottledWarning(new Logger(UpstreamClient.name), 30_000);

  constructor(
    config: ConfigService<Environment, true>,
    private readonly readiness: Readiness,
  ) {
    this.maxResponseBytes = config.get('UPSTREAM_MAX_RESPONSE_BYTES', { infer: true });
    this.maxConnections = config.get('UPSTREAM_MAX_CONNECTIONS', { infer: true });
    const allowed = config.get('UPSTREAM_ALLOWED_NETWORKS', { infer: true });
    const allowedNetworks = allowed ? allowed.split(',').map((cidr) => cidr.trim()) : [];
    const allowPrivate = config.get('UPSTREAM_ALLOW_PRIVATE_NETWORKS', { infer: true });
    const connections: ConnectionOptions = {
      maxConnections: this.maxConnections,
      http2: config.get('UPSTREAM_HTTP2', { infer: true }),
      ca: certificateAuthorities(config.get('UPSTREAM_CA_FILE', { infer: true })),
    };
    this.requested = route(new UpstreamHostPolicy(allowPrivate, allowedNetworks), connections);
    this.adminChosen = allowPrivate ? this.requested : route(new UpstreamHostPolicy(true, allowedNetworks), connections);
  }

  /** Requests waiting for a free connection (past UPSTREAM_MAX_CONNECTIONS), by provider; origins with none are left out. */
  waitingByProvider(): Map<string, number> {
    const waiting = new Map<string, number>();
    for (const agent of new Set([this.requested.agent, this.adminChosen.agent])) {
      for (const [origin, stats] of Object.entries(agent.stats)) {
        const queued = waitingIn(stats);
        if (!queued) continue;
        const provider = this.providerOfOrigin.get(origin) ?? 'other';
        waiting.set(provider, (waiting.get(provider) ?? 0) + queued);
      }
    }
    return waiting;
  }

  /**
   * With a connection limit, a request dispatched while every connection to its origin is
   * busy waits in undici's pool: say so (throttled), since the client only sees a late answer.
   */
  private noteWaiting(agent: Agent, url: string, provider: string | undefined): void {
    const origin = new URL(url).origin;
    this.noteProvider(origin, provider);
    const stats = agent.stats[origin];
    const queued = stats ? waitingIn(stats) : 0;
    if (queued > 0) {
      this.saturated.warn(
        `${queued} request(s) to ${provider ?? origin} wait for a connection: all ${this.maxConnections} are busy (UPSTREAM_MAX_CONNECTIONS)`,
      );
    }
  }

  private noteProvider(origin: string, provider: string | undefined): void {
    if (!provider || this.providerOfOrigin.get(origin) === provider) return;
    if (this.providerOfOrigin.size >= 1000 && !this.providerOfOrigin.has(origin)) this.providerOfOrigin.clear();
    this.providerOfOrigin.set(origin, provider);
  }

  /** The host policy for connections made outside undici (the realtime WebSocket): check the URL, then resolve with `lookupFor`. */
  checkHost(url: string, privateNetworkAllowed = false): void {
    try {
      this.routeFor(privateNetworkAllowed).policy.checkUrl(url);
    } catch (error) {
      throw hostRefused(error as Error);
    }
  }

  lookupFor(privateNetworkAllowed: boolean): UpstreamHostPolicy['lookup'] {
    return this.routeFor(privateNetworkAllowed).policy.lookup;
  }

  private routeFor(privateNetworkAllowed: boolean): Route {
    return privateNetworkAllowed ? this.adminChosen : this.requested;
  }

  /** A connection error of a socket opened with `lookup`, as the gateway reports it. */
  describeConnectError(error: Error): GatewayError {
    return error instanceof UpstreamHostRefusedError
      ? hostRefused(error)
      : GatewayError.upstreamUnreachable(`The provider could not be reached (${describe(error)})`);
  }

  /**
   * A JSON POST for the gateway's own calls out (guardrail webhooks), through the same
   * pool and host policy as provider requests. Answers above 1 MiB are refused.
   */
  readonly postJson = async (url: string, headers: Record<string, string>, body: unknown, timeoutMs: number): Promise<{ status: number; json: unknown }> => {
    this.checkHost(url);
    const response = await request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      dispatcher: this.requested.agent,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += chunk.length;
      if (size > 1024 * 1024) {
        response.body.destroy();
        throw new Error('The answer is larger than 1 MiB');
      }
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: response.statusCode, json };
  };

  async send(upstream: UpstreamRequest, options: SendOptions): Promise<UpstreamResponse> {
    const { signal, timeoutMs } = options;
    if (signal.aborted) throw new ClientClosedRequestError();
    if (this.readiness.pastDeadline) throw shutDown();
    const { policy, agent, http2 } = this.routeFor(options.privateNetworkAllowed);
    try {
      policy.checkUrl(upstream.url);
    } catch (error) {
      throw hostRefused(error as Error);
    }
    // One abort per attempt: the client leaving and this attempt's timeout both abort
    // it, while a timeout leaves the request free for a retry or a fallback.
    const abort = new AttemptAbort();
    const onClientGone = () => abort.abort();
    signal.addEventListener('abort', onClientGone, { once: true });
    // At the shutdown deadline a request still waiting on its provider ends with a 503 the
    // client can retry elsewhere (and its row says why), not a connection closed under it.
    const stopWatchingDeadline = this.readiness.onDeadline(onClientGone);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, timeoutMs);
    const clear = () => clearTimeout(timer);
    const detach = () => {
      clear();
      signal.removeEventListener('abort', onClientGone);
      stopWatchingDeadline();
    };

    const viaHttp1 = async () => {
      // undici ties the signal to the body too: aborting later destroys the body stream.
      const sent = request(upstream.url, {
        method: upstream.method,
        headers: upstream.headers,
        body: upstream.body,
        dispatcher: agent,
        signal: abort,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      // Dispatching is synchronous: the request is on a connection or in the pool's queue by now.
      if (this.maxConnections) this.noteWaiting(agent, upstream.url, options.provider);
      const response = await sent;
      return { status: response.statusCode, headers: response.headers, body: response.body as Readable };
    };

    try {
      const overHttp2 = this.viaHttp2(http2, upstream, abort, options.provider);
      const response = overHttp2
        ? await overHttp2.catch((error: unknown) => {
            // Refused before the provider saw it (the session closing): safe to send again.
            if (!(error instanceof Http2NotSent) || abort.aborted) throw error;
            return viaHttp1();
          })
        : await viaHttp1();
      response.body.once('close', detach);
      return { ...response, clearTimeout: clear, timedOut: () => timedOut };
    } catch (error) {
      detach();
      if (timedOut || error instanceof errors.HeadersTimeoutError) throw GatewayError.upstreamTimeout(timeoutMs);
      if (signal.aborted) throw new ClientClosedRequestError();
      if (this.readiness.pastDeadline) throw shutDown();
      if (error instanceof UpstreamHostRefusedError) throw hostRefused(error);
      throw GatewayError.upstreamUnreachable(`The provider could not be reached (${describe(error)})`);
    }
  }

  /** The request sent on an HTTP/2 session with room, or null: it goes over HTTP/1.1 (see Http2Origins). */
  private viaHttp2(http2: Http2Origins | null, upstream: UpstreamRequest, abort: AttemptAbort, provider: string | undefined): Promise<Http2Answer> | null {
    // A streamed body (a multipart upload) stays on HTTP/1.1: it cannot be sent again if a session refuses it.
    if (!http2 || upstream.body instanceof Readable) return null;
    const target = http2.sessionFor(upstream.url);
    if (!target) return null;
    this.noteProvider(target.url.origin, provider);
    return http2.request(target, upstream.method, upstream.headers, upstream.body, abort);
  }

  /**
   * Reads a whole (non-streamed) body, mapping a timeout or a reset to gateway errors.
   * A body past UPSTREAM_MAX_RESPONSE_BYTES is a 502: a provider gone wrong must not
   * take the gateway's memory with it.
   */
  async readBody(response: UpstreamResponse, timeoutMs: number, signal: AbortSignal): Promise<Buffer> {
    try {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > this.maxResponseBytes) {
          response.body.destroy();
          throw GatewayError.upstreamMalformed(`The provider's answer is larger than ${this.maxResponseBytes} bytes (UPSTREAM_MAX_RESPONSE_BYTES)`);
        }
        chunks.push(chunk as Buffer);
      }
      return Buffer.concat(chunks, size);
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      if (response.timedOut() || error instanceof errors.BodyTimeoutError) throw GatewayError.upstreamTimeout(timeoutMs);
      if (signal.aborted) throw new ClientClosedRequestError();
      if (this.readiness.pastDeadline) throw shutDown();
      throw GatewayError.upstreamUnreachable(`The provider's answer broke off (${describe(error)})`);
    } finally {
      response.clearTimeout();
    }
  }

  /** Open HTTP/2 sessions by provider, for `gateway_upstream_http2_sessions`. */
  http2SessionsByProvider(): Map<string, number> {
    const sessions = new Map<string, number>();
    for (const http2 of new Set([this.requested.http2, this.adminChosen.http2])) {
      for (const [origin, count] of http2?.sessionCounts() ?? []) {
        const provider = this.providerOfOrigin.get(origin) ?? 'other';
        sessions.set(provider, (sessions.get(provider) ?? 0) + count);
      }
    }
    return sessions;
  }

  async onApplicationShutdown(): Promise<void> {
    const routes = [...new Set([this.requested, this.adminChosen])];
    await Promise.all(routes.flatMap((route) => (route.http2 ? [route.agent.close(), route.http2.close()] : [route.agent.close()])));
  }
}

/**
 * An attempt's abort signal as undici also takes it, an EventEmitter: an AbortController
 * per attempt, with the listeners undici adds to and removes from its EventTarget,
 * cost more CPU than the rest of sending the request. Aborting destroys the request
 * and its body with undici's RequestAbortedError.
 */
class AttemptAbort extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

interface ConnectionOptions {
  /** UPSTREAM_MAX_CONNECTIONS (HTTP/1.1 connections per origin; 0: no limit). */
  maxConnections: number;
  http2: boolean;
  /** Certificate authorities to trust (the system's plus UPSTREAM_CA_FILE's), or undefined: the system's. */
  ca: string[] | undefined;
}

/**
 * Every connection resolves through its host policy (see UpstreamHostPolicy). Without a
 * limit (`connections: null`) each open HTTP/1.1 request has a connection of its own: a
 * stream holds its connection for its whole length, so a fixed pool queued every stream past it.
 */
function route(policy: UpstreamHostPolicy, options: ConnectionOptions): Route {
  const tlsOptions = { lookup: policy.lookup, ...(options.ca ? { ca: options.ca } : {}) };
  return {
    policy,
    agent: new Agent({ keepAliveTimeout: 30_000, connections: options.maxConnections || null, connect: { timeout: 10_000, ...tlsOptions } }),
    http2: options.http2 ? new Http2Origins(tlsOptions) : null,
  };
}

/**
 * Requests in an origin's pool that wait for a busy connection. A pool counts them as
 * `queued`; with a limit of 1 undici keeps a single client instead, whose `pending`
 * also holds the request its connection is being opened for.
 */
function waitingIn(stats: Agent['stats'][string]): number {
  if ('queued' in stats) return stats.queued;
  return stats.connected ? stats.pending : Math.max(0, stats.pending - 1);
}

/** A host outside the policy is the request's (or the key's) fault, not an outage: 400, and no retry. */
function hostRefused(error: Error): GatewayError {
  return GatewayError.invalidRequest(error.message, 'custom_host', 'upstream_host_not_allowed');
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  return code ?? (error instanceof Error ? error.message : String(error));
}

function shutDown(): GatewayError {
  return GatewayError.shuttingDown('The gateway instance shut down before the provider answered (its shutdown grace period is over); send the request again');
}
