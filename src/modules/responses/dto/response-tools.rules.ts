import type { Rule } from '../../../common/pipes/body-rules';

/**
 * Checks of the `tools` of a Responses request for the tool kinds the gateway knows
 * (function, web search, file search, remote MCP). Other kinds (computer use, code
 * interpreter, image generation …) pass to the provider, which knows them better.
 */
type Fields = Record<string, unknown>;
type ToolRule = (tool: Fields, path: string) => string | null;

const isPlainObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (tool: Fields, field: string, path: string, required = false): string | null => {
  const v = tool[field];
  if (v === undefined || v === null) return required ? `${path}.${field} is required` : null;
  return typeof v === 'string' && v.length > 0 ? null : `${path}.${field} must be a non-empty string`;
};
const first = (...problems: (string | null)[]): string | null => problems.find((p) => p !== null) ?? null;

const SEARCH_CONTEXT_SIZES = ['low', 'medium', 'high'];

const functionTool: ToolRule = (tool, path) =>
  first(
    str(tool, 'name', path, true),
    str(tool, 'description', path),
    tool.parameters !== undefined && tool.parameters !== null && !isPlainObject(tool.parameters) ? `${path}.parameters must be a JSON Schema object` : null,
    tool.strict !== undefined && tool.strict !== null && typeof tool.strict !== 'boolean' ? `${path}.strict must be a boolean value` : null,
  );

const webSearchTool: ToolRule = (tool, path) => {
  const size = tool.search_context_size;
  if (size !== undefined && (typeof size !== 'string' || !SEARCH_CONTEXT_SIZES.includes(size))) {
    return `${path}.search_context_size must be one of the following values: ${SEARCH_CONTEXT_SIZES.join(', ')}`;
  }
  const location = tool.user_location;
  if (location === undefined || location === null) return null;
  if (!isPlainObject(location)) return `${path}.user_location must be an object`;
  if (location.type !== 'approximate') return `${path}.user_location.type must be "approximate"`;
  for (const field of ['country', 'city', 'region', 'timezone']) {
    const v = location[field];
    if (v !== undefined && v !== null && typeof v !== 'string') return `${path}.user_location.${field} must be a string`;
  }
  return null;
};

const fileSearchTool: ToolRule = (tool, path) => {
  const ids = tool.vector_store_ids;
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id.length > 0)) {
    return `${path}.vector_store_ids must be a non-empty array of vector store ids`;
  }
  const max = tool.max_num_results;
  if (max !== undefined && (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 50)) {
    return `${path}.max_num_results must be an integer from 1 to 50`;
  }
  const filters = tool.filters;
  if (filters !== undefined && filters !== null && !isPlainObject(filters)) return `${path}.filters must be an object`;
  if (isPlainObject(filters) && typeof filters.type !== 'string') return `${path}.filters.type must be a string (e.g. "eq", "and")`;
  return null;
};

const mcpTool: ToolRule = (tool, path) => {
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
};

const TOOL_RULES: Record<string, ToolRule> = {
  function: functionTool,
  web_search_preview: webSearchTool,
  web_search_preview_2025_03_11: webSearchTool,
  web_search: webSearchTool,
  file_search: fileSearchTool,
  mcp: mcpTool,
};

export const eachResponsesTool: Rule = (tools) => {
  const list = tools as unknown[];
  for (let i = 0; i < list.length; i++) {
    const tool = list[i];
    const path = `tools[${i}]`;
    if (!isPlainObject(tool)) return `${path} must be an object`;
    if (typeof tool.type !== 'string' || tool.type === '') return `${path}.type must be a string`;
    const problem = TOOL_RULES[tool.type]?.(tool, path);
    if (problem) return problem;
  }
  return null;
};

const INPUT_ROLES = ['user', 'assistant', 'system', 'developer'];

/** `input`: a string, or items; message items are checked, other item types pass. */
export const responsesInput: Rule = (input, field) => {
  if (typeof input === 'string') return null;
  if (!Array.isArray(input)) return `${field} must be a string or an array of input items`;
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    const path = `${field}[${i}]`;
    if (!isPlainObject(item)) return `${path} must be an object`;
    if (item.role === undefined) {
      if (typeof item.type !== 'string') return `${path} must have a role (a message) or a type (another input item)`;
      continue;
    }
    if (typeof item.role !== 'string' || !INPUT_ROLES.includes(item.role)) return `${path}.role must be one of the following values: ${INPUT_ROLES.join(', ')}`;
    const content = item.content;
    if (typeof content === 'string') continue;
    if (!Array.isArray(content)) return `${path}.content must be a string or an array of content parts`;
    for (let j = 0; j < content.length; j++) {
      const problem = contentPart(content[j], `${path}.content[${j}]`);
      if (problem) return problem;
    }
  }
  return null;
};

function contentPart(part: unknown, path: string): string | null {
  if (!isPlainObject(part)) return `${path} must be an object`;
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return typeof part.text === 'string' ? null : `${path}.text must be a string`;
    case 'input_image':
      return typeof part.image_url === 'string' || typeof part.file_id === 'string' ? null : `${path} needs image_url (a URL or data URL) or file_id`;
    default:
      return typeof part.type === 'string' ? null : `${path}.type must be a string`;
  }
}
