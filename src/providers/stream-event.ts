import { GatewayError } from '../common/errors/gateway-error';

/**
 * The JSON object of one upstream stream event. Anything else is a 502
 * `upstream_malformed_response`, which ends the client's stream with an error event.
 * `provider` names the sender in the message when known.
 */
export function parseStreamEvent(data: string, provider?: string): Record<string, any> {
  const sender = provider ? `Provider ${provider}` : 'The provider';
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw GatewayError.upstreamMalformed(`${sender} sent a stream event that is not JSON: ${data.slice(0, 200)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw GatewayError.upstreamMalformed(`${sender} sent a stream event that is not a JSON object: ${data.slice(0, 200)}`);
  }
  return value as Record<string, any>;
}
