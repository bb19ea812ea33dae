/** Which MCP servers, and which of their tools, a key may use (CONTRACT section 10); null: no restriction at this level. */
export interface McpAccessFields {
  /** Server slugs (null: every server for admin keys, none for user keys; no restriction on a virtual key). */
  allowedMcpServers: string[] | null;
  /** Per server slug, the tools allowed (a slug absent: every tool the registry allows). */
  allowedMcpTools: Record<string, string[]> | null;
}

/** The MCP access fields of a create or update body, as entity fields. */
export function mcpAccessOf(dto: { allowed_mcp_servers?: string[] | null; allowed_tools?: Record<string, string[]> | null }): Partial<McpAccessFields> {
  return {
    ...(dto.allowed_mcp_servers !== undefined && { allowedMcpServers: dto.allowed_mcp_servers }),
    ...(dto.allowed_tools !== undefined && { allowedMcpTools: dto.allowed_tools }),
  };
}
