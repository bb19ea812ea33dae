import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatCompletionBody } from '../chat-format';
import { toGeminiContents } from './chat-messages';

/** A GenerateContentRequest (https://ai.google.dev/api/generate-content#request-body) being built. */
export interface GeminiRequest {
  contents: unknown[];
  systemInstruction?: unknown;
  tools?: unknown[];
  toolConfig?: { functionCallingConfig: Record<string, unknown> };
  generationConfig?: Record<string, unknown>;
}

const invalid = (message: string, param: string) => GatewayError.invalidRequest(message, param);
const unsupported = (param: string, what = param) => GatewayError.invalidRequest(`Provider google does not support ${what}`, param);

function number(value: unknown, param: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`${param} must be a number`, param);
  return value;
}

function integer(value: unknown, param: string): number {
  if (!Number.isInteger(value)) throw invalid(`${param} must be an integer`, param);
  return value as number;
}

/**
 * Thinking budgets in tokens for OpenAI's efforts. `minimal` (and GPT-5.1's `none`) is
 * 0, which turns thinking off where a model allows it (2.5 Flash and Flash-Lite); 2.5 Pro
 * cannot think less than 128 tokens and answers 400 itself, which is clearer than the
 * gateway quietly thinking anyway.
 */
const THINKING_BUDGETS: Record<string, number> = { none: 0, minimal: 0, low: 1024, medium: 8192, high: 24576 };

const config = (request: GeminiRequest) => (request.generationConfig ??= {});

/**
 * Each OpenAI parameter Gemini has, and where it goes. A parameter missing here is one
 * Gemini cannot honour: a 400 naming it rather than a silent drop.
 */
const PARAMETERS: Record<string, (value: unknown, request: GeminiRequest, body: ChatCompletionBody) => void> = {
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
  reasoning_effort: (value, request) => {
    const budget = typeof value === 'string' && Object.hasOwn(THINKING_BUDGETS, value) ? THINKING_BUDGETS[value] : undefined;
    if (budget === undefined) throw invalid('reasoning_effort must be none, minimal, low, medium or high', 'reasoning_effort');
    config(request).thinkingConfig = { thinkingBudget: budget };
  },
  response_format: (value, request) => responseFormat(value, request),
  tools: (value, request) => tools(value, request),
  tool_choice: (value, request) => (request.toolConfig = { functionCallingConfig: toolChoice(value) }),
  // Gemini may call several functions in one turn and cannot be told not to: only the default can be honoured.
  parallel_tool_calls: (value) => {
    if (value !== true) throw unsupported('parallel_tool_calls', 'parallel_tool_calls: false');
  },
};

function responseFormat(value: unknown, request: GeminiRequest): void {
  const format = value as Record<string, any>;
  if (format?.type === 'text') return;
  if (format?.type === 'json_object') {
    config(request).responseMimeType = 'application/json';
    return;
  }
  if (format?.type === 'json_schema') {
    const schema = format.json_schema?.schema;
    if (!schema || typeof schema !== 'object') throw invalid('response_format.json_schema.schema must be an object', 'response_format.json_schema.schema');
    // responseJsonSchema takes JSON Schema as OpenAI clients write it; responseSchema is an OpenAPI subset that rejects much of it.
    Object.assign(config(request), { responseMimeType: 'application/json', responseJsonSchema: schema });
    return;
  }
  throw unsupported('response_format.type', `response_format of type ${JSON.stringify(format?.type)}`);
}

/**
 * Function tools as one Gemini tool of function declarations. Parameters go in
 * `parametersJsonSchema`, which takes JSON Schema as OpenAI tools carry it
 * (`additionalProperties`, `$defs`, ...): `parameters` is an OpenAPI subset that rejects
 * those. `strict` has no Gemini counterpart and is left out: the declared schema still
 * guides the model, and refusing it would shut out SDKs that always send it.
 */
function tools(value: unknown, request: GeminiRequest): void {
  if (!Array.isArray(value)) throw invalid('tools must be an array', 'tools');
  const declarations = value.map((tool: any, i) => {
    if (tool?.type !== 'function') throw unsupported(`tools[${i}].type`, `tools of type ${JSON.stringify(tool?.type)} (tools[${i}].type)`);
    const fn = tool.function;
    if (typeof fn?.name !== 'string' || !fn.name) throw invalid(`tools[${i}].function.name must be a string`, `tools[${i}].function.name`);
    const declaration: Record<string, unknown> = { name: fn.name, description: typeof fn.description === 'string' ? fn.description : '' };
    if (fn.parameters !== undefined && fn.parameters !== null) declaration.parametersJsonSchema = fn.parameters;
    return declaration;
  });
  if (declarations.length) request.tools = [{ functionDeclarations: declarations }];
}

function toolChoice(value: unknown): Record<string, unknown> {
  if (value === 'auto') return { mode: 'AUTO' };
  if (value === 'required') return { mode: 'ANY' };
  if (value === 'none') return { mode: 'NONE' };
  const choice = value as Record<string, any>;
  if (choice?.type === 'function' && typeof choice.function?.name === 'string') return { mode: 'ANY', allowedFunctionNames: [choice.function.name] };
  throw unsupported('tool_choice', `tool_choice ${JSON.stringify(value)}`);
}

/**
 * An OpenAI chat body as a Gemini GenerateContentRequest. A null parameter is OpenAI's
 * "default" and is skipped; every other field must be one Gemini can honour.
 */
export function toGeminiRequest(body: ChatCompletionBody): GeminiRequest {
  const request: GeminiRequest = { ...toGeminiContents(body.messages) };
  for (const [field, value] of Object.entries(body)) {
    if (value === null || value === undefined) continue;
    const apply = Object.hasOwn(PARAMETERS, field) ? PARAMETERS[field] : undefined;
    if (!apply) throw unsupported(field);
    apply(value, request, body);
  }
  return request;
}
