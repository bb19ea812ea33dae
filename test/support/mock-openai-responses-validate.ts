/**
 * Validation of `POST /v1/responses` bodies by the mock upstream, with OpenAI's 400 error
 * bodies: {"error": {"message", "type": "invalid_request_error", "param", "code"}}, `param`
 * naming the offending field the way OpenAI does ("input[0].content[1].type", "tools[0].name").
 *
 *   unknown top-level field                → code unknown_parameter
 *   model / input missing                  → code missing_required_parameter
 *   wrong JSON type                        → code invalid_type
 *   value outside its set or range         → code invalid_value, decimal_above_max_value, …
 *   background with store false            → code invalid_value, param background
 */
import { BAD_JSON_BODY, errorBody } from './mock-openai-chunks';

/** Every field of OpenAI's ResponseCreateParams. */
const KNOWN_FIELDS = new Set([
  'background',
  'client_metadata',
  'context_management',
  'conversation',
  'include',
  'input',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'model',
  'moderation',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning',
  'safety_identifier',
  'service_tier',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
]);
const ROLES = ['assistant', 'system', 'developer', 'user'];
const PART_TYPES = ['input_text', 'input_image', 'input_file', 'input_audio', 'output_text', 'refusal'];
const ITEM_TYPES = [
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'item_reference',
  'web_search_call',
  'file_search_call',
  'mcp_list_tools',
  'mcp_call',
  'mcp_approval_request',
  'mcp_approval_response',
  'computer_call',
  'computer_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'image_generation_call',
  'code_interpreter_call',
  'local_shell_call',
  'local_shell_call_output',
];
const TOOL_TYPES = [
  'function',
  'file_search',
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'mcp',
  'computer_use_preview',
  'code_interpreter',
  'image_generation',
  'local_shell',
  'custom',
  'shell',
  'apply_patch',
  // What Codex 0.169 offers too (test/fixtures/clients/codex-*.json).
  'tool_search',
  'namespace',
];
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];
const TEXT_FORMATS = ['text', 'json_object', 'json_schema'];

class Invalid extends Error {
  constructor(readonly body: string) {
    super(body);
  }
}

function fail(message: string, param: string | null, code: string): never {
  throw new Invalid(errorBody(message, 'invalid_request_error', code, param));
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'string' ? 'a string' : 'a ' + typeof value;
}

const isObject = (value: unknown): value is Record<string, any> => value !== null && typeof value === 'object' && !Array.isArray(value);

function expect(ok: boolean, param: string, value: unknown, expected: string): void {
  if (!ok) fail(`Invalid type for '${param}': expected ${expected}, but got ${typeName(value)} instead.`, param, 'invalid_type');
}

function oneOf(value: unknown, allowed: string[], param: string): void {
  if (typeof value === 'string' && allowed.includes(value)) return;
  const list = allowed.map((v) => `'${v}'`);
  const supported = list.length > 1 ? list.slice(0, -1).join(', ') + ', and ' + list[list.length - 1] : list[0];
  fail(`Invalid value: '${String(value)}'. Supported values are: ${supported}.`, param, 'invalid_value');
}

function required(object: Record<string, any>, field: string, prefix: string): any {
  if (object[field] === undefined) fail(`Missing required parameter: '${prefix}${field}'.`, prefix + field, 'missing_required_parameter');
  return object[field];
}

function optional(body: Record<string, any>, field: string, check: (value: any) => boolean, expected: string): void {
  const value = body[field];
  if (value !== undefined && value !== null) expect(check(value), field, value, expected);
}

function range(body: Record<string, any>, field: string, min: number, max: number, integer: boolean): void {
  const value = body[field];
  if (value === undefined || value === null) return;
  const kind = integer ? 'integer' : 'decimal';
  expect(typeof value === 'number' && (!integer || Number.isInteger(value)), field, value, integer ? 'an integer' : 'a decimal');
  if (value < min)
    fail(`Invalid '${field}': ${kind} below minimum value. Expected a value >= ${min}, but got ${value} instead.`, field, `${kind}_below_min_value`);
  if (value > max)
    fail(`Invalid '${field}': ${kind} above maximum value. Expected a value <= ${max}, but got ${value} instead.`, field, `${kind}_above_max_value`);
}

function validateInputItem(item: any, param: string): void {
  expect(isObject(item), param, item, 'an input item');
  if (item.type !== undefined && item.type !== 'message') {
    oneOf(item.type, ITEM_TYPES, `${param}.type`);
    if (item.type === 'function_call_output') {
      required(item, 'call_id', `${param}.`);
      required(item, 'output', `${param}.`);
    } else if (item.type === 'function_call') {
      for (const field of ['call_id', 'name', 'arguments']) required(item, field, `${param}.`);
    } else if (item.type === 'item_reference') {
      required(item, 'id', `${param}.`);
    }
    return;
  }
  oneOf(required(item, 'role', `${param}.`), ROLES, `${param}.role`);
  const content = required(item, 'content', `${param}.`);
  expect(typeof content === 'string' || Array.isArray(content), `${param}.content`, content, 'one of a string or array of input content');
  if (typeof content === 'string') return;
  content.forEach((part: any, index: number) => {
    const at = `${param}.content[${index}]`;
    expect(isObject(part), at, part, 'an object');
    oneOf(required(part, 'type', `${at}.`), PART_TYPES, `${at}.type`);
    if (part.type === 'input_text' || part.type === 'output_text') {
      const text = required(part, 'text', `${at}.`);
      expect(typeof text === 'string', `${at}.text`, text, 'a string');
    } else if (part.type === 'input_image' && part.image_url == null && part.file_id == null) {
      fail(`Missing required parameter: '${at}.image_url'.`, `${at}.image_url`, 'missing_required_parameter');
    }
  });
}

function validateTool(tool: any, param: string): void {
  expect(isObject(tool), param, tool, 'an object');
  oneOf(required(tool, 'type', `${param}.`), TOOL_TYPES, `${param}.type`);
  if (tool.type === 'function') {
    const name = required(tool, 'name', `${param}.`);
    expect(typeof name === 'string', `${param}.name`, name, 'a string');
  } else if (tool.type === 'file_search') {
    expect(Array.isArray(required(tool, 'vector_store_ids', `${param}.`)), `${param}.vector_store_ids`, tool.vector_store_ids, 'an array');
  } else if (tool.type === 'mcp') {
    const label = required(tool, 'server_label', `${param}.`);
    expect(typeof label === 'string', `${param}.server_label`, label, 'a string');
    if (tool.connector_id === undefined) {
      const url = required(tool, 'server_url', `${param}.`);
      expect(typeof url === 'string', `${param}.server_url`, url, 'a string');
      if (!URL.canParse(url)) fail(`Invalid URL: '${url}'.`, `${param}.server_url`, 'invalid_value');
    }
    if (tool.headers != null) {
      expect(isObject(tool.headers), `${param}.headers`, tool.headers, 'an object');
      for (const [name, value] of Object.entries(tool.headers)) expect(typeof value === 'string', `${param}.headers.${name}`, value, 'a string');
    }
  } else if (tool.type.startsWith('web_search')) {
    if (tool.search_context_size != null) oneOf(tool.search_context_size, ['low', 'medium', 'high'], `${param}.search_context_size`);
    if (tool.user_location != null) {
      expect(isObject(tool.user_location), `${param}.user_location`, tool.user_location, 'an object');
      oneOf(tool.user_location.type, ['approximate'], `${param}.user_location.type`);
    }
  }
}

/** The 400 error body for an invalid create request, or undefined when it is valid. */
export function invalidCreateBody(body: any, badJson: boolean): string | undefined {
  if (badJson || !isObject(body)) return BAD_JSON_BODY;
  try {
    for (const field of Object.keys(body)) {
      if (!KNOWN_FIELDS.has(field)) fail(`Unknown parameter: '${field}'.`, field, 'unknown_parameter');
    }
    const model = required(body, 'model', '');
    expect(typeof model === 'string' && model.length > 0, 'model', model, 'a string');
    const input = required(body, 'input', '');
    expect(typeof input === 'string' || Array.isArray(input), 'input', input, 'one of a string or array of input items');
    if (Array.isArray(input)) input.forEach((item, index) => validateInputItem(item, `input[${index}]`));

    for (const field of ['instructions', 'previous_response_id', 'user', 'prompt_cache_key', 'safety_identifier']) {
      optional(body, field, (v) => typeof v === 'string', 'a string');
    }
    for (const field of ['stream', 'store', 'background', 'parallel_tool_calls']) {
      optional(body, field, (v) => typeof v === 'boolean', 'a boolean');
    }
    range(body, 'temperature', 0, 2, false);
    range(body, 'top_p', 0, 1, false);
    range(body, 'max_output_tokens', 16, 1_000_000, true);
    range(body, 'top_logprobs', 0, 20, true);
    if (body.truncation != null) oneOf(body.truncation, ['auto', 'disabled'], 'truncation');
    if (body.stream_options != null && body.stream !== true) {
      fail("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value');
    }

    optional(body, 'metadata', isObject, 'an object');
    if (isObject(body.metadata)) {
      const entries = Object.entries(body.metadata);
      if (entries.length > 16)
        fail(
          `Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with ${entries.length} properties instead.`,
          'metadata',
          'object_above_max_properties',
        );
      for (const [key, value] of entries) {
        expect(typeof value === 'string', `metadata.${key}`, value, 'a string');
        if (key.length > 64) fail(`Invalid 'metadata': key '${key}' is longer than 64 characters.`, 'metadata', 'invalid_value');
        if ((value as string).length > 512)
          fail(`Invalid 'metadata.${key}': string too long. Expected a string with maximum length 512.`, `metadata.${key}`, 'string_above_max_length');
      }
    }

    optional(body, 'tools', Array.isArray, 'an array');
    if (Array.isArray(body.tools)) body.tools.forEach((tool: unknown, index: number) => validateTool(tool, `tools[${index}]`));
    const choice = body.tool_choice;
    if (typeof choice === 'string') oneOf(choice, ['none', 'auto', 'required'], 'tool_choice');
    else if (choice != null) {
      expect(isObject(choice), 'tool_choice', choice, 'an object');
      required(choice, 'type', 'tool_choice.');
      if (choice.type === 'function') required(choice, 'name', 'tool_choice.');
    }

    optional(body, 'reasoning', isObject, 'an object');
    if (body.reasoning?.effort != null) oneOf(body.reasoning.effort, EFFORTS, 'reasoning.effort');
    optional(body, 'text', isObject, 'an object');
    if (body.text?.format != null) {
      const format = body.text.format;
      expect(isObject(format), 'text.format', format, 'an object');
      oneOf(required(format, 'type', 'text.format.'), TEXT_FORMATS, 'text.format.type');
      if (format.type === 'json_schema') {
        required(format, 'name', 'text.format.');
        required(format, 'schema', 'text.format.');
      }
    }
    if (body.background === true && body.store === false) {
      fail('Background mode requires store to be true; `store` cannot be false.', 'background', 'invalid_value');
    }
    return undefined;
  } catch (error) {
    if (error instanceof Invalid) return error.body;
    throw error;
  }
}
