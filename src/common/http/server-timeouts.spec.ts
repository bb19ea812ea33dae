import { createServer } from 'node:http';
import { applyServerTimeouts } from './server-timeouts';

describe('applyServerTimeouts', () => {
  const timeouts = (headers: number, request: number) => ({
    SERVER_HEADERS_TIMEOUT_MS: headers,
    SERVER_REQUEST_TIMEOUT_MS: request,
    SERVER_KEEPALIVE_TIMEOUT_MS: 65_000,
  });

  it("sets Node's three timeouts", () => {
    const server = createServer();
    applyServerTimeouts(server, timeouts(30_000, 300_000));
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([30_000, 300_000, 65_000]);
  });

  it("sweeps for expired requests every quarter of the shorter timeout, at most every second (Node's default: 30 s)", () => {
    const interval = (headers: number, request: number) => {
      const server = createServer();
      applyServerTimeouts(server, timeouts(headers, request));
      return (server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval;
    };
    expect(interval(30_000, 300_000)).toBe(1_000);
    expect(interval(2_000, 300_000)).toBe(500);
    expect(interval(500, 1_500)).toBe(125);
    expect(interval(1, 1)).toBe(10);
  });
});
