import type { Rule } from '../../../common/pipes/body-rules';

/**
 * The checks the gateway makes on the `tools` of a Responses request. A Responses request
 * to OpenAI is a pass-through (CONTRACT section 12): the gateway checks only what it acts
 * on, and of the tools that is the remote MCP tool, whose `headers` it must find to keep
 * them out of the log (they carry the MCP server's credentials). Every other tool kind
 * (function, web search, file search, computer use, a kind newer than this file …) goes
 * to the provider as it came, which knows them better; the chat bridge reads the ones it
 * translates itself (`chat-bridge/responses-to-chat.ts`).
 */
type Fields = Record<string, unknown>;

const isPlainObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (tool: Fields, field: string, path: string, required = false): string | null => {
  const v = tool[field];
  if (v === undefined || v === null) return required ? `${path}.${field} is required` : null;
  return typeof v === 'string' && v.length > 0 ? null : `${path}.${field} must be a non-empty string`;
};
const first = (...problems: (string | null)[]): string | null => problems.find((p) => p !== null) ?? null;

function mcpTool(tool: Fields, path: string): string | null {
  const problem = first(str(tool, 'server_label', path, true), str(tool, 'server_url', path, tool.connector_id === undefined));
  if (problem) return problem;
  if (typeof tool.server_url === 'string' && !/^https?:\/\/[^\s/]+/i.test(tool.server_url)) return `${path}.server_url must be an http(s) URL`;
  const approval = tool.require_approval;
  if (approval !== undefined && approval !== null && !['always', 'never'].includes(approval as string) && !isPlainObject(approval)) {
    return `${path}.require_approval must be "always", "never" or an object`;
  }
  const headers = tool.headers;
  if (headers !== undefined && headers !== null) {
    if (!isPlainObject(headers)) return `${path}.headers must be an object of strings`;
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value !== 'string') return `${path}.headers.${name} must be a string`;
    }
  }
  const allowed = tool.allowed_tools;
  if (allowed !== undefined && allowed !== null && !Array.isArray(allowed) && !isPlainObject(allowed)) {
    return `${path}.allowed_tools must be an array of tool names or an object`;
  }
  return null;
}

/** `tools`: objects with a `type`; the MCP ones checked, the rest passed on. */
export const eachResponsesTool: Rule = (tools) => {
  const list = tools as unknown[];
  for (let i = 0; i < list.length; i++) {
    const tool = list[i];
    const path = `tools[${i}]`;
    if (!isPlainObject(tool)) return `${path} must be an object`;
    if (typeof tool.type !== 'string' || tool.type === '') return `${path}.type must be a string`;
    const problem = tool.type === 'mcp' ? mcpTool(tool, path) : null;
    if (problem) return problem;
  }
  return null;
};
