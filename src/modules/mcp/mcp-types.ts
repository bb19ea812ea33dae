/**
 * The records the MCP module's parts hand each other: a registered server as the request
 * path uses it (credentials decrypted, from the registry's cache), a tool as the gateway
 * offers it, the result of one call, and what a caller may use.
 */

/** A registered MCP server, ready to connect to (headers decrypted: never log them). */
export interface McpServerTarget {
  id: string;
  slug: string;
  name: string;
  url: string;
  /** Credential headers sent to the server. */
  headers: Record<string, string>;
  /** The tools the registry allows on this server (null: every tool it lists). */
  allowedTools: string[] | null;
  description: string | null;
}

/** A tool of a registered server, as its `tools/list` gave it. */
export interface McpTool {
  /** The server's slug. */
  server: string;
  name: string;
  description?: string;
  /** JSON Schema of the arguments (`type: "object"`). */
  inputSchema: Record<string, unknown>;
}

/** What one tool call gave back: the MCP `CallToolResult`, and how long it took. */
export interface McpCallResult {
  /** MCP content blocks (`{type: "text", text}` …). */
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError: boolean;
  latencyMs: number;
}

/**
 * What a caller may use: per server slug, the tools allowed (null: every tool the
 * registry allows on it). A slug absent from the map is not allowed at all.
 */
export type McpAccess = ReadonlyMap<string, readonly string[] | null>;
