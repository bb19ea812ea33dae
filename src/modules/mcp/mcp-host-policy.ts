import type { ConfigService } from '@nestjs/config';
import type { Environment } from '../../config/environment';
import { UpstreamHostPolicy } from '../upstream/upstream-host-policy';

/**
 * Where MCP servers may be (CONTRACT section 10): public addresses, private ones inside
 * MCP_ALLOWED_NETWORKS, never link-local or metadata. The registry checks a URL when it is
 * registered, the client pool again on every connection (a name may resolve elsewhere now).
 */
export function mcpHostPolicy(config: ConfigService<Environment, true>): UpstreamHostPolicy {
  const allowed = config.get('MCP_ALLOWED_NETWORKS', { infer: true });
  return new UpstreamHostPolicy(false, allowed ? allowed.split(',').map((cidr) => cidr.trim()) : [], {
    host: 'MCP server host',
    allowListSetting: 'MCP_ALLOWED_NETWORKS',
    privateHint: 'list its network in MCP_ALLOWED_NETWORKS to allow it',
  });
}
