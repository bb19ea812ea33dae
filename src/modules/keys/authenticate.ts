import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../common/errors/gateway-error';
import { gatewayKeyOf, MISSING_GATEWAY_KEY } from '../../common/guards/gateway-key';
import { parseMetadataHeader } from '../../common/guards/metadata-header';
import { TRACE_ID } from '../../common/ids';
import type { RequestContext } from '../../gateway/request-context';
import type { ApiKeyPrincipal, KeyLookupService } from './key-lookup.service';

/**
 * The gateway key (`x-gateway-api-key`, or a `gk-` key as the client's API key: see
 * gatewayKeyOf) to a live API key (401 otherwise), and the request-wide headers
 * every operation shares (trace id, metadata) checked and noted on the context. Shared by
 * the HTTP guard (ApiKeyGuard) and the realtime WebSocket handshake.
 */
export async function authenticate(keys: KeyLookupService, headers: IncomingHttpHeaders, context: RequestContext | undefined): Promise<ApiKeyPrincipal> {
  const secret = gatewayKeyOf(headers);
  if (secret === null) throw GatewayError.authentication(MISSING_GATEWAY_KEY);
  const key = await keys.apiKeyBySecret(secret);
  if (!key) throw GatewayError.authentication('Invalid or revoked gateway API key');
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) {
    throw GatewayError.authentication(`The API key expired at ${key.expiresAt.toISOString()}`);
  }
  if (context) context.principal = key;

  const traceId = headers['x-gateway-trace-id'];
  if (typeof traceId === 'string' && !TRACE_ID.test(traceId)) {
    throw GatewayError.invalidRequest('x-gateway-trace-id must be 1 to 128 letters, digits or . : _ -', 'x-gateway-trace-id');
  }
  if (context) {
    // The key's own metadata is set by an admin and wins over what the caller sends.
    context.metadata = { ...parseMetadataHeader(headers['x-gateway-metadata']), ...key.metadata };
    context.user = context.metadata._user ?? null;
  }
  return key;
}
