import { IgnoredParams, OPENAI_DELIVERY_PARAMS } from '../ignored-params';
import { THINKING_BUDGETS, thinkingWithin } from '../anthropic/chat-request';
import { cachesByBreakpoint, ContentBlock, ConverseMessage, toConverseMessages } from './converse-messages';
import { ignoreCacheMarks } from '../prompt-cache';
import { isBedrockClaude } from './invoke-messages';
import { type Fields, chatToolFunction, finiteNumber, forcedFunction, integer, invalid, isObject, unsupportedBy } from '../translation-checks';

/** A Converse request body (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html), the model being in the path. */
export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: ContentBlock[];
  inferenceConfig?: Record<string, unknown>;
  toolConfig?: { tools: unknown[]; toolChoice?: Record<string, unknown> };
  /** Fields the model itself takes beyond Converse's (Claude's `thinking`). */
  additionalModelRequestFields?: Record<string, unknown>;
}

const unsupported = unsupportedBy('bedrock');

const number = finiteNumber;

const inference = (request: ConverseRequest) => (request.inferenceConfig ??= {});

/**
 * Each OpenAI parameter Converse has, and where it goes. Converse is the same for every
 * model family (Claude, Llama, Mistral, Nova …); a parameter missing here is one it
 * cannot honour: a 400 naming it rather than a silent drop.
 */
const PARAMETERS: Record<string, (value: unknown, request: ConverseRequest, body: Fields, ignored: IgnoredParams) => void> = {
  // Consumed by the gateway: the model and `stream` choose the URL, `user` is logged, and ConverseStream always sends usage.
  model: () => undefined,
  stream: () => undefined,
  stream_options: () => undefined,
  user: () => undefined,
  messages: () => undefined,
  temperature: (value, request) => (inference(request).temperature = number(value, 'temperature')),
  top_p: (value, request) => (inference(request).topP = number(value, 'top_p')),
  // Both name the output limit (max_tokens is the older name); the newer one wins when both come.
  max_tokens: (value, request, body) => {
    if (body.max_completion_tokens === undefined || body.max_completion_tokens === null) inference(request).maxTokens = integer(value, 'max_tokens');
  },
  max_completion_tokens: (value, request) => (inference(request).maxTokens = integer(value, 'max_completion_tokens')),
  stop: (value, request) => {
    const stops = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(stops) || !stops.every((stop) => typeof stop === 'string')) throw invalid('stop must be a string or an array of strings', 'stop');
    if (stops.length) inference(request).stopSequences = stops;
  },
  // One answer per request: only n = 1 keeps the meaning.
  n: (value) => {
    if (integer(value, 'n') !== 1) throw unsupported('n', 'n other than 1');
  },
  logprobs: (value) => {
    if (value !== false) throw unsupported('logprobs');
  },
  tools: (value, request, _body, ignored) => tools(value, request, ignored),
  tool_choice: (value, request) => toolChoice(value, request),
  // Converse models may call several tools in one turn and cannot be told not to: only the default can be honoured.
  parallel_tool_calls: (value) => {
    if (value !== true) throw unsupported('parallel_tool_calls', 'parallel_tool_calls: false');
  },
  // Claude's extended thinking, passed to the model as its own field; other Converse models have no budget to set.
  reasoning_effort: (value, request, body) => {
    if (typeof body.model !== 'string' || !isBedrockClaude(body.model)) throw unsupported('reasoning_effort', 'reasoning_effort for models other than Claude');
    const budget = typeof value === 'string' && Object.hasOwn(THINKING_BUDGETS, value) ? THINKING_BUDGETS[value] : undefined;
    if (budget === undefined) throw invalid('reasoning_effort must be none, minimal, low, medium, high or xhigh', 'reasoning_effort');
    if (budget !== null)
      request.additionalModelRequestFields = { ...request.additionalModelRequestFields, thinking: { type: 'enabled', budget_tokens: budget } };
  },
  response_format: (value) => {
    if ((value as Record<string, unknown>)?.type !== 'text')
      throw unsupported('response_format.type', `response_format of type ${JSON.stringify((value as Record<string, unknown>)?.type)}`);
  },
  ...OPENAI_DELIVERY_PARAMS,
};

/**
 * Function tools as Converse tool specs; the JSON schema goes as it is (`inputSchema.json`).
 * `strict` has no Converse counterpart: it is ignored (and named), the schema still guides the model.
 */
function tools(value: unknown, request: ConverseRequest, ignored: IgnoredParams): void {
  if (!Array.isArray(value)) throw invalid('tools must be an array', 'tools');
  const specs = value.map((tool: unknown, i) => {
    const fn = chatToolFunction(tool, i, unsupported);
    const parameters = fn.parameters ?? { type: 'object', properties: {} };
    const spec: Record<string, unknown> = { name: fn.name, inputSchema: { json: parameters } };
    if (typeof fn.description === 'string' && fn.description) spec.description = fn.description;
    if (fn.strict === true) ignored.ignore(`tools[${i}].function.strict`, 'Converse has no strict schema mode; the schema still guides the model');
    return { toolSpec: spec };
  });
  if (specs.length) request.toolConfig = { ...request.toolConfig, tools: specs };
}

/** `auto`, `required` (Converse `any`) or one function (`tool`); Converse has no way to forbid tools it was given. */
function toolChoice(value: unknown, request: ConverseRequest): void {
  const forced = forcedFunction(value);
  let choice: Record<string, unknown>;
  if (value === 'auto') choice = { auto: {} };
  else if (value === 'required') choice = { any: {} };
  else if (forced !== undefined) choice = { tool: { name: forced } };
  else throw unsupported('tool_choice', `tool_choice ${JSON.stringify(value)}`);
  request.toolConfig = { tools: request.toolConfig?.tools ?? [], toolChoice: choice };
}

/**
 * An OpenAI chat body as a Converse request. A null parameter is OpenAI's "default" and
 * is skipped; every other field must be one Converse can honour.
 */
/**
 * A config's `cache_breakpoints: "auto"` on a Converse request to a model that caches by
 * breakpoints, when the client marked none: cache points after the system blocks, the tools
 * and the conversation so far (as withAutoBreakpoints does for Anthropic's format).
 */
export function withAutoCachePoints(request: ConverseRequest): ConverseRequest {
  const point = { cachePoint: { type: 'default' } };
  const hasPoint = (blocks: unknown) => Array.isArray(blocks) && blocks.some((block) => isObject(block) && block.cachePoint !== undefined);
  if (hasPoint(request.system) || request.messages.some((message) => hasPoint(message.content))) return request;
  const out: ConverseRequest = { ...request };
  if (request.system?.length) out.system = [...request.system, point];
  if (request.toolConfig?.tools.length) out.toolConfig = { ...request.toolConfig, tools: [...request.toolConfig.tools, point] };
  const last = request.messages[request.messages.length - 1];
  if (last?.content.length) out.messages = [...request.messages.slice(0, -1), { ...last, content: [...last.content, point] }];
  return out;
}

export function toConverseRequest(body: Fields, ignored = new IgnoredParams()): ConverseRequest {
  if (typeof body !== 'object' || body === null) throw invalid('the body must be a JSON object', 'body');
  const caching = cachesByBreakpoint(body.model);
  if (!caching) ignoreCacheMarks(body.messages, ignored);
  const request: ConverseRequest = { ...toConverseMessages(body.messages, caching) };
  for (const [field, value] of Object.entries(body)) {
    if (value === null || value === undefined) continue;
    const apply = Object.hasOwn(PARAMETERS, field) ? PARAMETERS[field] : undefined;
    if (!apply) throw unsupported(field);
    apply(value, request, body, ignored);
  }
  if (request.toolConfig && !request.toolConfig.tools.length) throw invalid('tool_choice needs tools', 'tool_choice');
  if (request.additionalModelRequestFields?.thinking) fitThinking(request, ignored);
  return request;
}

/**
 * Claude's extended thinking on Converse under Anthropic's rules (as the Anthropic adapter
 * applies them): no thinking while a tool call is pending (the history has no signed
 * thinking block to start the turn with), the budget fitted below `maxTokens`, and
 * temperature, top_p and a forced tool call that do not go with thinking refused.
 */
function fitThinking(request: ConverseRequest, ignored: IgnoredParams): void {
  const thinking = request.additionalModelRequestFields!.thinking as { type: 'enabled'; budget_tokens: number };
  const dropThinking = () => {
    const { thinking: _dropped, ...rest } = request.additionalModelRequestFields!;
    if (Object.keys(rest).length) request.additionalModelRequestFields = rest;
    else delete request.additionalModelRequestFields;
  };
  const lastAssistant = request.messages.findLast((message) => message.role === 'assistant');
  if (lastAssistant?.content.some((block) => 'toolUse' in block)) {
    dropThinking();
    ignored.ignore('reasoning_effort', "a turn that calls tools must start with Claude's signed thinking, which a chat history does not carry");
    return;
  }
  const config = inference(request);
  const fit = thinkingWithin(thinking.budget_tokens, typeof config.maxTokens === 'number' ? config.maxTokens : null, ignored);
  if (!fit) {
    dropThinking();
    if (!Object.keys(config).length) delete request.inferenceConfig;
    return;
  }
  thinking.budget_tokens = fit.budget;
  config.maxTokens = fit.maxTokens;
  if (config.temperature !== undefined && config.temperature !== 1)
    throw invalid('temperature must be 1 or unset with reasoning_effort on Claude (extended thinking)', 'temperature');
  if (typeof config.topP === 'number' && config.topP < 0.95)
    throw invalid('top_p must be at least 0.95 or unset with reasoning_effort on Claude (extended thinking)', 'top_p');
  const choice = request.toolConfig?.toolChoice;
  if (choice && ('any' in choice || 'tool' in choice))
    throw invalid('tool_choice cannot force a tool call with reasoning_effort on Claude (extended thinking)', 'tool_choice');
}
