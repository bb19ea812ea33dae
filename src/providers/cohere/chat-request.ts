import { IgnoredParams, OPENAI_DELIVERY_PARAMS } from '../ignored-params';
import { ignoreCacheMarks } from '../prompt-cache';
import { ANTHROPIC_THINKING_BUDGETS } from '../reasoning-effort';
import { toCohereMessages } from './chat-messages';
import { type Fields, chatToolFunction, finiteNumber, forcedFunction, integer, invalid, isObject, unsupportedBy } from '../translation-checks';

/** A v2 chat request (https://docs.cohere.com/reference/chat) being built. */
export type CohereChatRequest = Record<string, unknown> & { model: string; messages: unknown[] };

const unsupported = unsupportedBy('cohere');

const number = finiteNumber;

/**
 * Each OpenAI parameter Cohere has, and where it goes. A parameter missing here is one
 * Cohere cannot honour: a 400 naming it rather than a silent drop.
 */
const PARAMETERS: Record<string, (value: unknown, request: CohereChatRequest, body: Fields, ignored: IgnoredParams) => void> = {
  // Consumed by the gateway: model and messages are built apart, `user` is logged, and Cohere always streams usage.
  model: () => undefined,
  messages: () => undefined,
  stream: (value, request) => {
    if (value === true) request.stream = true;
  },
  stream_options: () => undefined,
  user: () => undefined,
  temperature: (value, request) => (request.temperature = number(value, 'temperature')),
  top_p: (value, request) => (request.p = number(value, 'top_p')),
  // Both name the output limit (max_tokens is the older name); the newer one wins when both come.
  max_tokens: (value, request, body) => {
    if (body.max_completion_tokens === undefined || body.max_completion_tokens === null) request.max_tokens = integer(value, 'max_tokens');
  },
  max_completion_tokens: (value, request) => (request.max_tokens = integer(value, 'max_completion_tokens')),
  stop: (value, request) => {
    const stops = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(stops) || !stops.every((stop) => typeof stop === 'string')) throw invalid('stop must be a string or an array of strings', 'stop');
    if (stops.length) request.stop_sequences = stops;
  },
  // Cohere answers with one generation.
  n: (value) => {
    if (integer(value, 'n') !== 1) throw unsupported('n', 'n > 1 (one choice per request)');
  },
  presence_penalty: (value, request) => (request.presence_penalty = number(value, 'presence_penalty')),
  frequency_penalty: (value, request) => (request.frequency_penalty = number(value, 'frequency_penalty')),
  seed: (value, request) => (request.seed = integer(value, 'seed')),
  // Cohere gives the chosen tokens' log probabilities, not alternatives.
  logprobs: (value) => {
    if (typeof value !== 'boolean') throw invalid('logprobs must be a boolean', 'logprobs');
    if (value) throw unsupported('logprobs', "logprobs in OpenAI's shape");
  },
  top_logprobs: () => {
    throw unsupported('top_logprobs');
  },
  // Command A Reasoning's thinking budget, at Anthropic's budgets per level (reasoning-effort.ts).
  reasoning_effort: (value, request) => {
    if (value === 'none' || value === 'minimal') request.thinking = { type: 'disabled' };
    else if (typeof value === 'string' && Object.hasOwn(ANTHROPIC_THINKING_BUDGETS, value)) {
      request.thinking = { type: 'enabled', token_budget: ANTHROPIC_THINKING_BUDGETS[value as keyof typeof ANTHROPIC_THINKING_BUDGETS] };
    } else throw invalid('reasoning_effort must be none, minimal, low, medium, high or xhigh', 'reasoning_effort');
  },
  response_format: (value, request) => responseFormat(value, request),
  tools: (value, request, _body, ignored) => tools(value, request, ignored),
  tool_choice: (value, request, body) => toolChoice(value, request, body),
  // Cohere may call several tools in one turn and cannot be told not to: only the default can be honoured.
  parallel_tool_calls: (value) => {
    if (value !== true) throw unsupported('parallel_tool_calls', 'parallel_tool_calls: false');
  },
  ...OPENAI_DELIVERY_PARAMS,
};

function responseFormat(value: unknown, request: CohereChatRequest): void {
  const format = isObject(value) ? value : {};
  if (format.type === 'text') return;
  if (format.type === 'json_object') {
    request.response_format = { type: 'json_object' };
    return;
  }
  if (format.type === 'json_schema') {
    const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
    if (!schema || typeof schema !== 'object' || Array.isArray(schema))
      throw invalid('response_format.json_schema.schema must be an object', 'response_format.json_schema.schema');
    request.response_format = { type: 'json_object', json_schema: schema };
    return;
  }
  throw unsupported('response_format.type', `response_format of type ${JSON.stringify(format.type)}`);
}

/**
 * Function tools in Cohere's v2 shape, which is OpenAI's. Cohere's strict mode
 * (`strict_tools`) holds for all tools at once: it is on when every tool asks for it;
 * a `strict` on only some is ignored (and named), since their schemas still guide the model.
 */
function tools(value: unknown, request: CohereChatRequest, ignored: IgnoredParams): void {
  if (!Array.isArray(value)) throw invalid('tools must be an array', 'tools');
  const declared = value.map((tool: unknown, i) => {
    const fn = chatToolFunction(tool, i, unsupported);
    const declaration: Record<string, unknown> = { name: fn.name };
    if (typeof fn.description === 'string') declaration.description = fn.description;
    if (fn.parameters) declaration.parameters = fn.parameters;
    return { tool: { type: 'function', function: declaration }, strict: fn.strict === true };
  });
  if (!declared.length) return;
  request.tools = declared.map(({ tool }) => tool);
  if (declared.every(({ strict }) => strict)) request.strict_tools = true;
  else
    declared.forEach(
      ({ strict }, i) => strict && ignored.ignore(`tools[${i}].function.strict`, 'Cohere is strict for all tools or none; the schema still guides the model'),
    );
}

/** Cohere forces a tool call (REQUIRED) or none (NONE), not a named tool, unless it is the only one. */
function toolChoice(value: unknown, request: CohereChatRequest, body: Fields): void {
  if (value === 'auto') return;
  if (value === 'required') return void (request.tool_choice = 'REQUIRED');
  if (value === 'none') return void (request.tool_choice = 'NONE');
  const forced = forcedFunction(value);
  const tools: unknown[] = Array.isArray(body.tools) ? body.tools : [];
  if (forced !== undefined && tools.length === 1 && isObject(tools[0]) && isObject(tools[0].function) && tools[0].function.name === forced) {
    request.tool_choice = 'REQUIRED';
    return;
  }
  throw unsupported('tool_choice', `tool_choice ${JSON.stringify(value)} (Cohere can require a tool call, not a named tool among several)`);
}

/**
 * An OpenAI chat body as a Cohere v2 chat request. A null parameter is OpenAI's
 * "default" and is skipped; every other field must be one Cohere can honour.
 */
export function toCohereChatRequest(body: Fields, ignored = new IgnoredParams()): CohereChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object', 'body');
  if (typeof body.model !== 'string' || !body.model) throw invalid('model must be a string naming a Cohere model', 'model');
  ignoreCacheMarks(body.messages, ignored);
  const request: CohereChatRequest = { model: body.model, messages: toCohereMessages(body.messages) };
  for (const [field, value] of Object.entries(body)) {
    if (value === null || value === undefined) continue;
    const apply = Object.hasOwn(PARAMETERS, field) ? PARAMETERS[field] : undefined;
    if (!apply) throw unsupported(field);
    apply(value, request, body, ignored);
  }
  return request;
}
