import { IgnoredParams, OPENAI_DELIVERY_PARAMS } from '../ignored-params';
import { ignoreCacheMarks } from '../prompt-cache';
import { GEMINI_THINKING_BUDGETS } from '../reasoning-effort';
import { toGeminiContents } from './chat-messages';
import { type Fields, chatToolFunction, finiteNumber, forcedFunction, integer, invalid, isObject, unsupportedBy } from '../translation-checks';

/** A GenerateContentRequest (https://ai.google.dev/api/generate-content#request-body) being built. */
export interface GeminiRequest {
  contents: unknown[];
  systemInstruction?: unknown;
  tools?: unknown[];
  toolConfig?: { functionCallingConfig: Record<string, unknown> };
  generationConfig?: Record<string, unknown>;
}

const unsupported = unsupportedBy('google');
const number = finiteNumber;

const config = (request: GeminiRequest) => (request.generationConfig ??= {});

/**
 * Each OpenAI parameter Gemini has, and where it goes. A parameter missing here is one
 * Gemini cannot honour: a 400 naming it rather than a silent drop.
 */
const PARAMETERS: Record<string, (value: unknown, request: GeminiRequest, body: Fields, ignored: IgnoredParams) => void> = {
  // Consumed by the gateway: the model and `stream` choose the URL, `user` is logged, and Gemini always streams usage.
  model: () => undefined,
  stream: () => undefined,
  stream_options: () => undefined,
  user: () => undefined,
  messages: () => undefined,
  temperature: (value, request) => (config(request).temperature = number(value, 'temperature')),
  top_p: (value, request) => (config(request).topP = number(value, 'top_p')),
  // Both name the output limit (max_tokens is the older name); the newer one wins when both come.
  max_tokens: (value, request, body) => {
    if (body.max_completion_tokens === undefined || body.max_completion_tokens === null) config(request).maxOutputTokens = integer(value, 'max_tokens');
  },
  max_completion_tokens: (value, request) => (config(request).maxOutputTokens = integer(value, 'max_completion_tokens')),
  stop: (value, request) => {
    const stops = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(stops) || !stops.every((stop) => typeof stop === 'string')) throw invalid('stop must be a string or an array of strings', 'stop');
    if (stops.length) config(request).stopSequences = stops;
  },
  n: (value, request) => (config(request).candidateCount = integer(value, 'n')),
  presence_penalty: (value, request) => (config(request).presencePenalty = number(value, 'presence_penalty')),
  frequency_penalty: (value, request) => (config(request).frequencyPenalty = number(value, 'frequency_penalty')),
  seed: (value, request) => (config(request).seed = integer(value, 'seed')),
  logprobs: (value, request) => {
    if (typeof value !== 'boolean') throw invalid('logprobs must be a boolean', 'logprobs');
    config(request).responseLogprobs = value;
  },
  top_logprobs: (value, request) => (config(request).logprobs = integer(value, 'top_logprobs')),
  // The budget per level is in reasoning-effort.ts. Thinking that is on comes back as
  // thought summaries (`includeThoughts`), which the answer carries as `reasoning_content`.
  reasoning_effort: (value, request) => {
    const budget = typeof value === 'string' && Object.hasOwn(GEMINI_THINKING_BUDGETS, value) ? GEMINI_THINKING_BUDGETS[value] : undefined;
    if (budget === undefined) throw invalid('reasoning_effort must be none, minimal, low, medium, high or xhigh', 'reasoning_effort');
    config(request).thinkingConfig = budget > 0 ? { thinkingBudget: budget, includeThoughts: true } : { thinkingBudget: budget };
  },
  response_format: (value, request) => responseFormat(value, request),
  tools: (value, request, _body, ignored) => tools(value, request, ignored),
  tool_choice: (value, request) => (request.toolConfig = { functionCallingConfig: toolChoice(value) }),
  // Gemini may call several functions in one turn and cannot be told not to: only the default can be honoured.
  parallel_tool_calls: (value) => {
    if (value !== true) throw unsupported('parallel_tool_calls', 'parallel_tool_calls: false');
  },
  ...OPENAI_DELIVERY_PARAMS,
};

function responseFormat(value: unknown, request: GeminiRequest): void {
  const format = isObject(value) ? value : {};
  if (format.type === 'text') return;
  if (format.type === 'json_object') {
    config(request).responseMimeType = 'application/json';
    return;
  }
  if (format.type === 'json_schema') {
    const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
    if (!schema || typeof schema !== 'object') throw invalid('response_format.json_schema.schema must be an object', 'response_format.json_schema.schema');
    // responseJsonSchema takes JSON Schema as OpenAI clients write it; responseSchema is an OpenAPI subset that rejects much of it.
    Object.assign(config(request), { responseMimeType: 'application/json', responseJsonSchema: schema });
    return;
  }
  throw unsupported('response_format.type', `response_format of type ${JSON.stringify(format.type)}`);
}

/**
 * Function tools as one Gemini tool of function declarations. Parameters go in
 * `parametersJsonSchema`, which takes JSON Schema as OpenAI tools carry it
 * (`additionalProperties`, `$defs`, ...): `parameters` is an OpenAPI subset that rejects
 * those. `strict` has no Gemini counterpart: it is ignored (and named), since the declared
 * schema still guides the model and refusing it would shut out SDKs that always send it.
 */
function tools(value: unknown, request: GeminiRequest, ignored: IgnoredParams): void {
  if (!Array.isArray(value)) throw invalid('tools must be an array', 'tools');
  const declarations = value.map((tool: unknown, i) => {
    const fn = chatToolFunction(tool, i, unsupported);
    const declaration: Record<string, unknown> = { name: fn.name, description: typeof fn.description === 'string' ? fn.description : '' };
    if (fn.parameters) declaration.parametersJsonSchema = fn.parameters;
    if (fn.strict === true) ignored.ignore(`tools[${i}].function.strict`, 'Gemini has no strict schema mode; the schema still guides the model');
    return declaration;
  });
  if (declarations.length) request.tools = [{ functionDeclarations: declarations }];
}

function toolChoice(value: unknown): Record<string, unknown> {
  if (value === 'auto') return { mode: 'AUTO' };
  if (value === 'required') return { mode: 'ANY' };
  if (value === 'none') return { mode: 'NONE' };
  const forced = forcedFunction(value);
  if (forced !== undefined) return { mode: 'ANY', allowedFunctionNames: [forced] };
  throw unsupported('tool_choice', `tool_choice ${JSON.stringify(value)}`);
}

/**
 * An OpenAI chat body as a Gemini GenerateContentRequest. A null parameter is OpenAI's
 * "default" and is skipped; every other field must be one Gemini can honour.
 */
export function toGeminiRequest(body: Fields, ignored = new IgnoredParams()): GeminiRequest {
  if (typeof body !== 'object' || body === null) throw invalid('the body must be a JSON object', 'body');
  ignoreCacheMarks(body.messages, ignored);
  const request: GeminiRequest = { ...toGeminiContents(body.messages) };
  for (const [field, value] of Object.entries(body)) {
    if (value === null || value === undefined) continue;
    const apply = Object.hasOwn(PARAMETERS, field) ? PARAMETERS[field] : undefined;
    if (!apply) throw unsupported(field);
    apply(value, request, body, ignored);
  }
  return request;
}
