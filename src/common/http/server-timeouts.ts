import type { Server } from 'node:http';

/** CONTRACT section 15's server timeouts, in milliseconds (`Environment` has them under these names). */
export interface ServerTimeouts {
  SERVER_HEADERS_TIMEOUT_MS: number;
  SERVER_REQUEST_TIMEOUT_MS: number;
  SERVER_KEEPALIVE_TIMEOUT_MS: number;
}

/** The longest gap between two of Node's sweeps for expired requests. */
const MAX_SWEEP_INTERVAL_MS = 1_000;

/**
 * Puts the server timeouts on a listener (the gateway's, each worker's, any other port it
 * opens); call it before `listen`. Node 20 does the work, as measured
 * (test/security/slow-clients.e2e-spec.ts):
 * - `headersTimeout` and `requestTimeout` apply to every connection with a request under
 *   way, and a new connection counts as one from its first moment: one that sends nothing
 *   is closed after the headers timeout (408 through the `clientError` handler, then
 *   closed), one that trickles its body after the request timeout. A request leaves that
 *   list once its body is in, so a slow answer or a long stream is never cut by them; an
 *   upgraded (WebSocket) connection leaves it too.
 * - Node finds expired requests by a sweep every `connectionsCheckingInterval` (30 s by
 *   default, read when listening starts), which would let a 30 s timeout run to a minute:
 *   the sweep runs every quarter of the shorter timeout, at most every second.
 * - `keepAliveTimeout` is armed on the socket after each response, by Node itself. Node 24
 *   holds the socket `keepAliveTimeoutBuffer` (1 s) longer than the timeout it advertises in
 *   `Keep-Alive: timeout=…`, so that a client honouring the header closes first; kept.
 */
export function applyServerTimeouts(server: Server, timeouts: ServerTimeouts): void {
  server.headersTimeout = timeouts.SERVER_HEADERS_TIMEOUT_MS;
  server.requestTimeout = timeouts.SERVER_REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = timeouts.SERVER_KEEPALIVE_TIMEOUT_MS;
  const shorter = Math.min(timeouts.SERVER_HEADERS_TIMEOUT_MS, timeouts.SERVER_REQUEST_TIMEOUT_MS);
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(
    10,
    Math.min(MAX_SWEEP_INTERVAL_MS, Math.floor(shorter / 4)),
  );
}
