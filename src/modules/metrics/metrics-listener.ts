import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { GatewayError } from '../../common/errors/gateway-error';
import { applyServerTimeouts } from '../../common/http/server-timeouts';
import { metricsRefusal, type MetricsSettings } from './metrics-access';

/**
 * The METRICS_PORT listener: `GET /metrics` and nothing else, on its own port and host
 * (loopback by default), so that the gateway's public port never serves it. A plain
 * `node:http` server, not Nest: with WORKERS > 1 it runs in the cluster's primary, which
 * sums every worker's metrics and has no Nest application. Errors in OpenAI's shape.
 */
export async function listenForMetrics(settings: MetricsSettings & { METRICS_HOST: string }, text: () => Promise<string>): Promise<Server> {
  const server = createServer((req, res) => void answer(settings, text, req, res));
  // A scraper asks in a second; a socket that sends nothing, or idles, is not kept.
  applyServerTimeouts(server, { SERVER_HEADERS_TIMEOUT_MS: 10_000, SERVER_REQUEST_TIMEOUT_MS: 10_000, SERVER_KEEPALIVE_TIMEOUT_MS: 5_000 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.METRICS_PORT, settings.METRICS_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

async function answer(settings: MetricsSettings, text: () => Promise<string>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
    return sendError(res, GatewayError.notFound(`Cannot ${req.method} ${path}`, 'route_not_found'));
  }
  const refusal = metricsRefusal(settings, 'metrics_port', req.headers.authorization);
  if (refusal) return sendError(res, refusal);
  try {
    const body = await text();
    res.writeHead(200, { 'content-type': Registry.PROMETHEUS_CONTENT_TYPE });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch (error) {
    sendError(res, error instanceof GatewayError ? error : GatewayError.unavailable(`The metrics could not be collected (${(error as Error).message})`));
  }
}

function sendError(res: ServerResponse, error: GatewayError): void {
  res.writeHead(error.status, { 'content-type': 'application/json', ...error.headers });
  res.end(JSON.stringify({ error: { message: error.message, type: error.type, param: null, code: error.code } }));
}

/** The listener's address, for the log line and the tests. */
export function metricsAddress(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics`;
}
