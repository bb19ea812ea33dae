import { randomBytes } from 'node:crypto';
import { type ChatAssistantMessage, type ChatChoice, type ChatCompletion, type ChatUsage, reasoningText } from '../../../providers/chat-format';
import { type Fields, fieldOf, isObject } from '../../../providers/translation-checks';
import type { NamespacedName } from './responses-to-chat';

/** A part of a message item: output text, or the refusal the model gave. */
export type OutputPart = { type: 'output_text'; annotations: unknown[]; logprobs: unknown[]; text: string } | { type: 'refusal'; refusal: string };
export interface MessageItem {
  id: string;
  type: 'message';
  status: string;
  role: 'assistant';
  content: OutputPart[];
}
export interface ReasoningItem {
  id: string;
  type: 'reasoning';
  summary: { type: 'summary_text'; text: string }[];
}
export interface FunctionCallItem {
  id: string;
  type: 'function_call';
  status: string;
  arguments: string;
  call_id: string;
  name: string;
  namespace?: string;
}
/** One item of a Response's `output`, as the bridge writes them. */
export type OutputItem = MessageItem | ReasoningItem | FunctionCallItem;
/** A Response object as the bridge writes it: what it reads typed, the request's settings echoed beside. */
export interface ResponseObject extends Fields {
  id: string;
  object: 'response';
  created_at: number;
  status: string;
  model: string;
  output: OutputItem[];
}

/** OpenAI-looking ids: `resp_…`, `msg_…`, `fc_…`, `rs_…` and 48 hex digits. */
export const newItemId = (prefix: 'resp_' | 'msg_' | 'fc_' | 'rs_' | 'call_'): string => prefix + randomBytes(24).toString('hex');

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * OpenAI's chat usage as the Responses API's: input tokens with the cached ones among
 * them (and Anthropic's cache writes, which the gateway counts in `prompt_tokens` too),
 * output tokens with the reasoning ones among them.
 */
export function responseUsage(usage: ChatUsage | null | undefined): Fields | null {
  if (!usage || typeof usage !== 'object') return null;
  const input = count(usage.prompt_tokens);
  const output = count(usage.completion_tokens);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: count(usage.prompt_tokens_details?.cached_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(usage.completion_tokens_details?.reasoning_tokens) },
    total_tokens: count(usage.total_tokens) || input + output,
  };
}

/**
 * A chat finish reason as the Response's status: the output limit and the content filter
 * leave it `incomplete`, with the reason OpenAI gives; anything else is `completed`.
 */
export function responseStatus(finishReason: unknown): { status: 'completed' | 'incomplete'; incomplete_details: { reason: string } | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/**
 * The request's settings as a Response echoes them, with OpenAI's defaults. The request
 * passed `responsesToChatBody`, so what is echoed has been checked. Nothing is stored:
 * `store` is false whatever was asked.
 */
export function responseSettings(request: Fields): Fields {
  const tools = Array.isArray(request.tools) ? request.tools : [];
  return {
    background: false,
    error: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: request.max_tool_calls ?? null,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: fieldOf(request.reasoning, 'effort') ?? null, summary: fieldOf(request.reasoning, 'summary') ?? null },
    safety_identifier: request.safety_identifier ?? null,
    service_tier: 'default',
    store: false,
    temperature: request.temperature ?? 1,
    text: { format: { type: 'text' }, verbosity: 'medium', ...(isObject(request.text) ? request.text : {}) },
    tool_choice: request.tool_choice ?? 'auto',
    tools: tools.filter(isObject).map((tool) => ({ strict: null, description: null, parameters: null, ...tool })),
    top_logprobs: 0,
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

/** A Response object from its parts: the settings echoed, then what the provider answered. */
export function responseObject(id: string, createdAt: number, model: string, settings: Fields, answer: Partial<ResponseObject>): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    completed_at: null,
    model,
    output: [],
    usage: null,
    incomplete_details: null,
    ...settings,
    ...answer,
  };
}

/** The assistant's text as a message item: output text, or the refusal it gave. */
export function messageItem(id: string, text: string, refusal: boolean, status: string): MessageItem {
  const part: OutputPart = refusal ? { type: 'refusal', refusal: text } : { type: 'output_text', annotations: [], logprobs: [], text };
  return { id, type: 'message', status, role: 'assistant', content: [part] };
}

export function reasoningItem(id: string, text: string): ReasoningItem {
  return { id, type: 'reasoning', summary: [{ type: 'summary_text', text }] };
}

/** A function call item; a namespaced function's chat name (`<namespace>__<function>`) is named as the client declared it. */
export function functionCallItem(
  id: string,
  callId: string,
  chatName: string,
  args: string,
  namespaced: Map<string, NamespacedName>,
  status = 'completed',
): FunctionCallItem {
  const declared = namespaced.get(chatName);
  const name = declared ? { name: declared.name, namespace: declared.namespace } : { name: chatName };
  return { id, type: 'function_call', status, arguments: args, call_id: callId, ...name };
}

/**
 * A `chat.completion` as a Response: the first choice's reasoning (when the provider
 * returned some) as a reasoning item, its text (or refusal) as a message item, its tool
 * calls as function_call items, in that order, as OpenAI's models answer.
 */
export function chatCompletionToResponse(
  completion: ChatCompletion,
  request: Fields,
  model: string,
  namespaced: Map<string, NamespacedName> = new Map(),
): ResponseObject {
  // The provider's answer came unchecked: each field is read with care.
  const choice: Partial<ChatChoice> = completion.choices?.[0] ?? {};
  const answer: Partial<ChatAssistantMessage> = choice.message ?? {};
  const { status, incomplete_details } = responseStatus(choice.finish_reason);
  const output: OutputItem[] = [];
  const reasoning = reasoningText(answer);
  if (reasoning) output.push(reasoningItem(newItemId('rs_'), reasoning));
  const refused = !answer.content && typeof answer.refusal === 'string' && answer.refusal !== '';
  const text = refused ? answer.refusal : answer.content;
  if (typeof text === 'string' && text) output.push(messageItem(newItemId('msg_'), text, refused, status));
  const calls = Array.isArray(answer.tool_calls) ? answer.tool_calls : [];
  for (const call of calls) {
    const args = call?.function?.arguments;
    const callId = typeof call?.id === 'string' && call.id ? call.id : newItemId('call_');
    output.push(
      functionCallItem(newItemId('fc_'), callId, String(call?.function?.name ?? ''), typeof args === 'string' ? args : JSON.stringify(args ?? {}), namespaced),
    );
  }
  const served = typeof completion.model === 'string' && completion.model ? completion.model : model;
  const createdAt = typeof completion.created === 'number' ? completion.created : Math.floor(Date.now() / 1000);
  const settings = responseSettings(request);
  return responseObject(newItemId('resp_'), createdAt, served, settings, {
    status,
    incomplete_details,
    ...(status === 'completed' ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    output,
    usage: responseUsage(completion.usage),
  });
}
