import { IgnoredParams, OPENAI_DELIVERY_PARAMS } from '../ignored-params';
import { ANTHROPIC_THINKING_BUDGETS } from '../reasoning-effort';
import { type AnthropicMessage, type AnthropicSystem, toAnthropicMessages } from './chat-messages';
import { type Fields, chatToolFunction, finiteNumber, forcedFunction, invalid, unsupportedBy } from '../translation-checks';

/** A Messages API request (https://docs.anthropic.com/en/api/messages) being built. */
export interface AnthropicRequest {
  model: string;
  system?: AnthropicSystem;
  messages: AnthropicMessage[];
  max_tokens: number;
  [field: string]: unknown;
}

/** Anthropic requires an output limit; OpenAI clients rarely send one. */
export const DEFAULT_MAX_TOKENS = 4096;

const unsupported = unsupportedBy('anthropic');

/** A number in Anthropic's range; OpenAI's wider one (temperature up to 2) is refused, not clamped. */
function number(value: unknown, param: string, min: number, max: number): number {
  const n = finiteNumber(value, param);
  if (n < min || n > max) throw unsupported(param, `${param} ${n}: it takes ${min} to ${max}`);
  return n;
}

function positiveInteger(value: unknown, param: string): number {
  if (!Number.isInteger(value) || (value as number) < 1) throw invalid(`${param} must be a positive integer`, param);
  return value as number;
}

/** A parameter Anthropic lacks: its default value asks nothing of it and passes; any other is a 400. */
const onlyDefault =
  (param: string, isDefault: (value: unknown) => boolean, what: string) =>
  (value: unknown): void => {
    if (!isDefault(value)) throw unsupported(param, what);
  };

/** Extended thinking budgets for OpenAI's efforts (see reasoning-effort.ts); `none` / `minimal` leave thinking off. */
export const THINKING_BUDGETS: Record<string, number | null> = { none: null, minimal: null, ...ANTHROPIC_THINKING_BUDGETS };

/**
 * Each OpenAI parameter Anthropic has, and where it goes. A parameter missing here is one
 * Anthropic cannot honour (logit_bias, seed, top_logprobs, audio...): a 400 naming it
 * rather than a silent drop.
 */
const PARAMETERS: Record<string, (value: unknown, request: AnthropicRequest, body: Fields, ignored: IgnoredParams) => void> = {
  // Set first by toAnthropicRequest; `stream_options` is the gateway's (Anthropic always streams usage).
  model: () => undefined,
  messages: () => undefined,
  stream_options: () => undefined,
  stream: (value, request) => {
    if (typeof value !== 'boolean') throw invalid('stream must be a boolean', 'stream');
    if (value) request.stream = true;
  },
  user: (value, request) => {
    if (typeof value !== 'string') throw invalid('user must be a string', 'user');
    request.metadata = { user_id: value };
  },
  temperature: (value, request) => (request.temperature = number(value, 'temperature', 0, 1)),
  top_p: (value, request) => (request.top_p = number(value, 'top_p', 0, 1)),
  // Both name the output limit (max_tokens is the older name); the newer one wins when both come.
  max_tokens: (value, request, body) => {
    if (body.max_completion_tokens === undefined || body.max_completion_tokens === null) request.max_tokens = positiveInteger(value, 'max_tokens');
  },
  max_completion_tokens: (value, request) => (request.max_tokens = positiveInteger(value, 'max_completion_tokens')),
  stop: (value, request) => {
    const stops = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(stops) || !stops.every((stop) => typeof stop === 'string')) throw invalid('stop must be a string or an array of strings', 'stop');
    if (stops.length) request.stop_sequences = stops;
  },
  reasoning_effort: (value, request) => {
    const budget = typeof value === 'string' && Object.hasOwn(THINKING_BUDGETS, value) ? THINKING_BUDGETS[value] : undefined;
    if (budget === undefined) throw invalid('reasoning_effort must be none, minimal, low, medium, high or xhigh', 'reasoning_effort');
    if (budget !== null) request.thinking = { type: 'enabled', budget_tokens: budget };
  },
  tools: (value, request, _body, ignored) => tools(value, request, ignored),
  // Both make Anthropic's one tool_choice object: see toolChoice.
  tool_choice: () => undefined,
  parallel_tool_calls: (value) => {
    if (typeof value !== 'boolean') throw invalid('parallel_tool_calls must be a boolean', 'parallel_tool_calls');
  },
  // Defaults some SDKs always send.
  n: onlyDefault('n', (value) => value === 1, 'n other than 1'),
  logprobs: onlyDefault('logprobs', (value) => value === false, 'logprobs'),
  frequency_penalty: onlyDefault('frequency_penalty', (value) => value === 0, 'frequency_penalty'),
  presence_penalty: onlyDefault('presence_penalty', (value) => value === 0, 'presence_penalty'),
  modalities: onlyDefault('modalities', (value) => Array.isArray(value) && value.length === 1 && value[0] === 'text', 'modalities other than ["text"]'),
  response_format: (value) => {
    const type = (value as Record<string, unknown>)?.type;
    if (type !== 'text') throw unsupported('response_format.type', `response_format of type ${JSON.stringify(type)}`);
  },
  ...OPENAI_DELIVERY_PARAMS,
};

/**
 * Function tools as Anthropic tools. Anthropic requires a schema where OpenAI lets a
 * function without parameters take none. `strict` has no Anthropic counterpart: it is
 * ignored (and named), since the schema still guides the model and refusing it would
 * shut out SDKs that always send it.
 */
function tools(value: unknown, request: AnthropicRequest, ignored: IgnoredParams): void {
  if (!Array.isArray(value)) throw invalid('tools must be an array', 'tools');
  const declared = value.map((tool: unknown, i) => {
    const fn = chatToolFunction(tool, i, unsupported);
    const parameters = fn.parameters ?? { type: 'object', properties: {} };
    const anthropicTool: Record<string, unknown> = { name: fn.name, input_schema: parameters };
    if (typeof fn.description === 'string') anthropicTool.description = fn.description;
    if (fn.strict === true) ignored.ignore(`tools[${i}].function.strict`, 'Anthropic has no strict schema mode; the schema still guides the model');
    return anthropicTool;
  });
  if (declared.length) request.tools = declared;
}

/**
 * `tool_choice` and `parallel_tool_calls: false` as Anthropic's one `tool_choice`
 * object. The latter only means something with tools, and Anthropic refuses a
 * tool_choice without them: SDKs that always send it must still reach tool-less models.
 */
function toolChoice(body: Fields, hasTools: boolean): Record<string, unknown> | undefined {
  const value = body.tool_choice;
  const forced = forcedFunction(value);
  let choice: Record<string, unknown> | undefined;
  if (value === undefined || value === null) choice = undefined;
  else if (value === 'auto') choice = { type: 'auto' };
  else if (value === 'required') choice = { type: 'any' };
  else if (value === 'none') choice = { type: 'none' };
  else if (forced !== undefined) choice = { type: 'tool', name: forced };
  else throw unsupported('tool_choice', `tool_choice ${JSON.stringify(value)}`);
  // `none` takes no other field: no tool calls at all is fewer than one.
  if (body.parallel_tool_calls === false && hasTools && choice?.type !== 'none') choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return choice;
}

/**
 * An OpenAI chat body as an Anthropic Messages request. A null parameter is OpenAI's
 * "default" and is skipped; every other field must be one Anthropic can honour.
 */
export function toAnthropicRequest(body: Fields, ignored = new IgnoredParams()): AnthropicRequest {
  if (typeof body !== 'object' || body === null) throw invalid('the body must be a JSON object', 'body');
  if (typeof body.model !== 'string' || !body.model) throw invalid('model must be a string naming a Claude model', 'model');
  const { system, messages } = toAnthropicMessages(body.messages);
  const request: AnthropicRequest = { model: body.model, ...(system !== undefined ? { system } : {}), messages, max_tokens: DEFAULT_MAX_TOKENS };
  for (const [field, value] of Object.entries(body)) {
    if (value === null || value === undefined) continue;
    const apply = Object.hasOwn(PARAMETERS, field) ? PARAMETERS[field] : undefined;
    if (!apply) throw unsupported(field);
    apply(value, request, body, ignored);
  }
  const choice = toolChoice(body, request.tools !== undefined);
  if (choice) request.tool_choice = choice;
  if (request.thinking) fitThinking(request, body, ignored);
  if (request.temperature !== undefined && request.top_p !== undefined && takesOneSampler(body.model)) {
    delete request.top_p;
    ignored.ignore('top_p', 'this Claude model takes temperature or top_p, not both (Anthropic answers 400); temperature is kept');
  }
  return request;
}

/**
 * Claude models from Opus 4.1 and Sonnet 4.5 on refuse `temperature` and `top_p` together;
 * clients that always send both (the Gemini CLI: temperature 1, topP 0.95) would get a 400.
 */
export const takesOneSampler = (model: string): boolean => /claude-(?:opus|sonnet|haiku)-(?:4-[1-9]|[5-9])/.test(model);

/** Anthropic's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1024;

/**
 * A thinking budget and the output limit it fits in (the budget is part of `max_tokens` and
 * below it): without a limit of the client's (`clientMaxTokens` null) the limit grows to
 * leave room for the answer; a budget that does not fit the client's limit is cut to half
 * of it; null (named as ignored) when even the smallest budget does not fit. Shared by
 * every route to Claude (Anthropic, Bedrock's Converse).
 */
export function thinkingWithin(budget: number, clientMaxTokens: number | null, ignored: IgnoredParams): { budget: number; maxTokens: number } | null {
  if (clientMaxTokens === null) return { budget, maxTokens: budget + DEFAULT_MAX_TOKENS };
  if (budget < clientMaxTokens) return { budget, maxTokens: clientMaxTokens };
  if (Math.floor(clientMaxTokens / 2) >= MIN_THINKING_BUDGET) return { budget: Math.floor(clientMaxTokens / 2), maxTokens: clientMaxTokens };
  ignored.ignore(
    'reasoning_effort',
    `max_tokens ${clientMaxTokens} leaves no room for Anthropic's smallest thinking budget (${MIN_THINKING_BUDGET}) and an answer`,
  );
  return null;
}

/**
 * Extended thinking (mapped from `reasoning_effort`) under the rules Anthropic sets and
 * OpenAI's effort does not know:
 *  - a turn that calls tools must start with the signed thinking block that led to the
 *    calls; a chat history carries none, so while a tool call is pending thinking stays
 *    off (named as ignored: the answer comes, with less deliberation);
 *  - the budget is part of `max_tokens` and below it: without a limit of the client's the
 *    limit grows to leave room for the answer; a budget that does not fit the client's
 *    limit is cut to half of it, and thinking stays off (ignored) when even the smallest
 *    budget does not fit;
 *  - a temperature other than 1, a top_p below 0.95 and a forced tool call do not go with
 *    thinking: a 400 naming the field, as OpenAI answers for its reasoning models.
 */
function fitThinking(request: AnthropicRequest, body: Fields, ignored: IgnoredParams): void {
  const thinking = request.thinking as { type: 'enabled'; budget_tokens: number };
  const lastAssistant = request.messages.findLast((message) => message.role === 'assistant');
  if (lastAssistant?.content.some((block) => block.type === 'tool_use')) {
    delete request.thinking;
    ignored.ignore('reasoning_effort', "a turn that calls tools must start with Anthropic's signed thinking, which a chat history does not carry");
    return;
  }
  const clientLimit = body.max_tokens == null && body.max_completion_tokens == null ? null : request.max_tokens;
  const fit = thinkingWithin(thinking.budget_tokens, clientLimit, ignored);
  if (!fit) {
    delete request.thinking;
    return;
  }
  thinking.budget_tokens = fit.budget;
  request.max_tokens = fit.maxTokens;
  if (request.temperature !== undefined && request.temperature !== 1)
    throw invalid('temperature must be 1 or unset with reasoning_effort on Anthropic (extended thinking)', 'temperature');
  if (typeof request.top_p === 'number' && request.top_p < 0.95)
    throw invalid('top_p must be at least 0.95 or unset with reasoning_effort on Anthropic (extended thinking)', 'top_p');
  const forced = (request.tool_choice as { type?: string } | undefined)?.type;
  if (forced === 'any' || forced === 'tool')
    throw invalid('tool_choice cannot force a tool call with reasoning_effort on Anthropic (extended thinking)', 'tool_choice');
}
