/**
 * One MCP tool call as the log keeps it: on the model request's row (`tool_calls`), by
 * round, and pointing at the call's own row (`log_id`, operation `mcp.tools.call`).
 */
export interface ToolCallRecord {
  /** The model round that asked for it (1 = the first answer). */
  round: number;
  /** The id the model gave the call (`tool_calls[].id`, `tool_use.id`, `call_id`). */
  call_id: string;
  server: string;
  tool: string;
  is_error: boolean;
  latency_ms: number;
  log_id: string;
}

/** A tool call to write as a row of its own (see RequestLogger.toolCallLogged). */
export interface ToolCallLogEntry {
  id: string;
  createdAt: Date;
  server: string;
  tool: string;
  arguments: unknown;
  /** The MCP result (`{content, structuredContent?, isError}`), or null when the call was refused before it was sent. */
  result: unknown;
  isError: boolean;
  /** Why it failed, for the row's `error` (a refusal's code, or the result's text). */
  error: { code: string | null; message: string } | null;
  latencyMs: number;
  statusCode: number;
}
