import { type RawData, WebSocket } from 'ws';
import { GatewayError, UpstreamHttpError } from '../../common/errors/gateway-error';
import type { RequestContext } from '../../context/request-context';
import type { RouteTarget } from '../../context/route-plan';
import { CredentialScrubber } from './credential-scrubber';
import type { UpstreamClient } from './upstream-client';

/** How much of a provider's refusal of a socket (its HTTP error body) is kept. */
const ERROR_BODY_BYTES = 64 * 1024;

/** A provider message that arrived before the session existed. */
export interface EarlyMessage {
  data: RawData;
  isBinary: boolean;
}

/** The provider's socket, open, with what it sent during the handshake. */
export interface UpstreamSocket {
  socket: WebSocket;
  early: EarlyMessage[];
  stopHolding(): void;
  /** Hides the credentials the gateway opened the socket with from the provider's events. */
  scrubber: CredentialScrubber;
}

/**
 * Opens a provider's WebSocket (the Realtime API, the Responses API's WebSocket mode) under
 * the host policy of its target, through the gateway's DNS lookup. What the provider sends
 * before the session takes the socket is held (`early`). Its refusal becomes the gateway's
 * (passed through like an HTTP error, UpstreamHttpError); the client leaving aborts it.
 */
export function openProviderSocket(
  upstreamClient: UpstreamClient,
  context: RequestContext,
  target: RouteTarget,
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<UpstreamSocket> {
  upstreamClient.checkHost(url, target.privateNetworkAllowed);
  const scrubber = CredentialScrubber.of({ method: 'GET', url, headers }, target);
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, {
      headers,
      handshakeTimeout: timeoutMs,
      lookup: upstreamClient.lookupFor(target.privateNetworkAllowed),
      maxPayload: 64 * 1024 * 1024,
    });
    // The provider may speak first (realtime's `session.created`), before the session exists: held until it does.
    const early: EarlyMessage[] = [];
    const hold = (data: RawData, isBinary: boolean) => early.push({ data, isBinary });
    socket.on('message', hold);
    socket.once('open', () => resolve({ socket, early, stopHolding: () => socket.off('message', hold), scrubber }));
    socket.once('unexpected-response', (_request, response) => {
      // The provider's refusal, passed on: its first ERROR_BODY_BYTES only, and a
      // connection cut mid-body is a 502 (unheard, the response's error would end the process).
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < ERROR_BODY_BYTES) chunks.push(chunk.subarray(0, ERROR_BODY_BYTES - kept));
        kept += chunk.length;
      });
      response.once('end', () => {
        const type = String(response.headers['content-type'] ?? 'application/json');
        reject(new UpstreamHttpError(response.statusCode ?? 502, scrubber.bytes(Buffer.concat(chunks)), type, {}));
        socket.terminate();
      });
      response.once('error', (error) => {
        reject(GatewayError.upstreamUnreachable(`The provider's refusal of the socket broke off (${error.message})`));
        socket.terminate();
      });
    });
    socket.once('error', (error) => reject(upstreamClient.describeConnectError(error)));
    context.abort.signal.addEventListener('abort', () => socket.terminate(), { once: true });
  });
}
