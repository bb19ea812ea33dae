import { createHash, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../../common/errors/gateway-error';
import type { Environment } from '../../config/environment';

export type MetricsSettings = Pick<Environment, 'METRICS_TOKEN' | 'METRICS_PORT'>;

/** Which listener a `/metrics` request came in on: the gateway's port, or METRICS_PORT's own. */
export type MetricsListenerKind = 'main' | 'metrics_port';

/**
 * Who may read `/metrics` (CONTRACT section 15): it tells cost by provider and model,
 * error codes and request counts, so not whoever reaches the gateway. With METRICS_PORT
 * it is served on that listener only (the main port answers 404, as for an unknown
 * route); METRICS_TOKEN, when set, is needed wherever it is served; with neither it is
 * not served at all. Null: the request may read it.
 */
export function metricsRefusal(settings: MetricsSettings, on: MetricsListenerKind, authorization: string | undefined): GatewayError | null {
  if (on === 'main' && (settings.METRICS_PORT !== undefined || settings.METRICS_TOKEN === undefined)) {
    return GatewayError.notFound('Cannot GET /metrics', 'route_not_found');
  }
  if (settings.METRICS_TOKEN !== undefined && !bearerMatches(authorization, settings.METRICS_TOKEN)) {
    return new GatewayError(401, 'authentication_error', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', 'invalid_metrics_token', null, {
      'www-authenticate': 'Bearer',
    });
  }
  return null;
}

/** Digests of equal length, so the comparison takes the same time wherever the strings differ. */
function bearerMatches(authorization: string | undefined, token: string): boolean {
  const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
  if (presented === undefined) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(token));
}
