import type { Rule } from '../../../common/pipes/body-rules';

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `mcp_servers` of a Messages request (Anthropic's MCP connector): type `url` only, an
 * `https://` url, a name unique within the request, and the `tool_configuration` shape.
 */
export const mcpServers: Rule = (servers) => {
  const list = servers as unknown[];
  const names = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const server = list[i];
    const path = `mcp_servers[${i}]`;
    if (!isPlainObject(server)) return `${path} must be an object`;
    if (server.type !== 'url') return `${path}.type must be "url" (the only MCP server type supported)`;
    if (typeof server.url !== 'string' || !/^https:\/\/[^\s/]+/i.test(server.url)) return `${path}.url must be an https:// URL`;
    if (typeof server.name !== 'string' || server.name === '') return `${path}.name must be a non-empty string`;
    if (names.has(server.name)) return `${path}.name '${server.name}' is used by another MCP server of this request; names must be unique`;
    names.add(server.name);
    if (server.authorization_token !== undefined && typeof server.authorization_token !== 'string') return `${path}.authorization_token must be a string`;
    const config = server.tool_configuration;
    if (config === undefined || config === null) continue;
    if (!isPlainObject(config)) return `${path}.tool_configuration must be an object`;
    if (config.enabled !== undefined && config.enabled !== null && typeof config.enabled !== 'boolean')
      return `${path}.tool_configuration.enabled must be a boolean value`;
    const allowed = config.allowed_tools;
    if (allowed !== undefined && allowed !== null && (!Array.isArray(allowed) || !allowed.every((t) => typeof t === 'string'))) {
      return `${path}.tool_configuration.allowed_tools must be an array of tool names`;
    }
  }
  return null;
};
