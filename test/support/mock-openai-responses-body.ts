/**
 * OpenAI Responses API wire-format builders of the mock upstream (see mock-openai-responses.ts
 * for the routes, reply rules and switches). Everything here is plain data:
 *
 *  - `planResponse()` decides WHAT the "model" answers (the output items and the usage),
 *  - `responseObject()` renders the `response` object (the non-streaming reply, and the one the
 *    lifecycle events carry),
 *  - `responseEvents()` lists the streaming events of a response, in OpenAI's order, each with
 *    its `sequence_number`; `sseEvent()` renders one as `event: <type>\ndata: <json>\n\n`,
 *  - `inputItems()` turns a request's `input` into the items `GET …/input_items` lists.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_REPLY, REASONING_TOKENS, TOOL_CALL_ARGUMENTS, splitWords } from './mock-openai-chunks';
import { answerToolScript, argumentFragments, partsText, type ScriptTurn } from './mock-tool-script';

/** OpenAI-looking ids: `resp_` + 48 hex digits, `msg_…`, `rs_…`, `fc_…`, `call_…` (24 letters and digits)… */
export const newId = (prefix: string): string => prefix + randomBytes(24).toString('hex');
const callId = (): string =>
  'call_' +
  randomBytes(18)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, 'x')
    .slice(0, 24);

export const MCP_TOOL_NAME = 'echo';
const MCP_TOOL_LIST = [
  {
    name: MCP_TOOL_NAME,
    input_schema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'The text to echo back' } },
      required: ['text'],
      additionalProperties: false,
    },
    annotations: null,
    description: 'Echoes the given text back',
  },
];

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponsesPlan {
  /** The final output items, in order. */
  output: any[];
  usage: ResponseUsage;
  /** Text of the last user message ('' when none): the mock-flaky-* key. */
  lastUserText: string;
}

// ---------------------------------------------------------------------------
// Input: text, last user message, listed items
// ---------------------------------------------------------------------------

/** Text of a message's `content`: a string, or the `text` of its parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (part && typeof part.text === 'string') text += part.text;
  return text;
}

const isMessage = (item: any): boolean => item.type === undefined || item.type === 'message';

/** Text of the last user message of a (validated) `input`. */
export function lastUserText(input: string | any[]): string {
  if (typeof input === 'string') return input;
  for (let i = input.length - 1; i >= 0; i--) {
    if (isMessage(input[i]) && input[i].role === 'user') return contentText(input[i].content);
  }
  return '';
}

/** Characters the input tokens are counted from: instructions, message texts, tool outputs. */
function inputChars(body: any): number {
  let chars = typeof body.instructions === 'string' ? body.instructions.length : 0;
  if (typeof body.input === 'string') return chars + body.input.length;
  for (const item of body.input) {
    if (isMessage(item)) chars += contentText(item.content).length;
    else if (item.type === 'function_call_output' && typeof item.output === 'string') chars += item.output.length;
  }
  return chars;
}

/**
 * The input as the tool script reads it: user messages are user text; a run of consecutive
 * function_call items is one call turn; each function_call_output a result (its output text).
 */
function scriptTurns(input: any[]): ScriptTurn[] {
  const turns: ScriptTurn[] = [];
  input.forEach((item, i) => {
    if (isMessage(item) && item.role === 'user') turns.push({ kind: 'user', text: contentText(item.content) });
    else if (item.type === 'function_call' && input[i - 1]?.type !== 'function_call') turns.push({ kind: 'calls' });
    else if (item.type === 'function_call_output') turns.push({ kind: 'result', text: partsText(item.output) });
  });
  return turns;
}

const ITEM_ID_PREFIX: Record<string, string> = {
  message: 'msg_',
  function_call: 'fc_',
  function_call_output: 'fco_',
  reasoning: 'rs_',
  mcp_approval_response: 'mcpr_',
};

/**
 * The request's input as stored items (what `GET /v1/responses/{id}/input_items` lists):
 * messages become {id, type: "message", role, status: "completed", content: [parts]}, a string
 * content one `input_text` part (`output_text` for the assistant); other items keep their
 * fields and get an id when they had none.
 */
export function inputItems(input: string | any[]): any[] {
  const messages = typeof input === 'string' ? [{ role: 'user', content: input }] : input;
  return messages.map((item) => {
    if (!isMessage(item)) return { id: item.id ?? newId(ITEM_ID_PREFIX[item.type] ?? 'item_'), ...item, status: item.status ?? 'completed' };
    const assistant = item.role === 'assistant';
    const parts: any[] = typeof item.content === 'string' ? [{ type: assistant ? 'output_text' : 'input_text', text: item.content }] : item.content;
    const content = parts.map((part) => {
      if (part.type === 'input_image')
        return { type: 'input_image', detail: part.detail ?? 'auto', file_id: part.file_id ?? null, image_url: part.image_url ?? null };
      if (part.type === 'output_text') return { type: 'output_text', annotations: part.annotations ?? [], text: part.text };
      return part;
    });
    return { id: item.id ?? newId('msg_'), type: 'message', role: item.role, status: 'completed', content };
  });
}

// ---------------------------------------------------------------------------
// Planning: what will the "model" answer?
// ---------------------------------------------------------------------------

const countWords = (text: string): number => text.match(/\S+/g)?.length ?? 0;

/**
 * Decide the reply for a validated create request. `behaviourModel`: the model without a `provider/`
 * prefix; `earlier`: the items of the previous_response_id chain (its inputs and outputs), which
 * only the tool script reads.
 */
export function planResponse(body: any, behaviourModel: string, earlier: any[] = []): ResponsesPlan {
  const userText = lastUserText(body.input);
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const toolsAllowed = body.tool_choice !== 'none';
  const last = Array.isArray(body.input) ? body.input[body.input.length - 1] : undefined;
  // After a tool result the model answers in text (otherwise agent loops never end).
  const answeringToolResult = last?.type === 'function_call_output';
  const functions = tools.filter((tool) => tool.type === 'function');
  const script = answerToolScript(
    scriptTurns([...earlier, ...(typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input)]),
    toolsAllowed ? functions.map((tool) => tool.name) : [],
  );
  const text = script && 'text' in script ? script.text : userText.startsWith('echo:') ? userText.slice(5).trimStart() : DEFAULT_REPLY;

  const output: any[] = [];
  const mcpServers = toolsAllowed ? tools.filter((tool) => tool.type === 'mcp') : [];
  for (const server of mcpServers) {
    output.push({ id: newId('mcpl_'), type: 'mcp_list_tools', server_label: server.server_label, tools: MCP_TOOL_LIST });
  }
  let reasoningTokens = 0;
  if (body.reasoning != null) {
    output.push({ id: newId('rs_'), type: 'reasoning', summary: [] });
    reasoningTokens = REASONING_TOKENS;
  }
  const annotations: any[] = [];
  if (toolsAllowed && tools.some((tool) => typeof tool.type === 'string' && tool.type.startsWith('web_search'))) {
    output.push({ id: newId('ws_'), type: 'web_search_call', status: 'completed', action: { type: 'search', query: userText } });
    annotations.push({
      type: 'url_citation',
      start_index: 0,
      end_index: text.length,
      url: 'https://example.com/search-result?utm_source=openai',
      title: 'Example search result',
    });
  }
  if (toolsAllowed && tools.some((tool) => tool.type === 'file_search')) {
    output.push({ id: newId('fs_'), type: 'file_search_call', status: 'completed', queries: [userText], results: null });
    annotations.push({ type: 'file_citation', index: text.length, file_id: 'file-mock0123456789abcdef', filename: 'mock-document.pdf' });
  }
  for (const server of mcpServers) {
    const authorized = (server.headers && Object.keys(server.headers).length > 0) || typeof server.authorization === 'string';
    output.push({
      id: newId('mcp_'),
      type: 'mcp_call',
      status: authorized ? 'completed' : 'failed',
      approval_request_id: null,
      arguments: JSON.stringify({ text: userText }),
      error: authorized ? null : 'Unauthorized',
      name: MCP_TOOL_NAME,
      output: authorized ? `echo from ${server.server_label}` : null,
      server_label: server.server_label,
    });
  }

  const forced = body.tool_choice?.type === 'function' ? body.tool_choice.name : undefined;
  const calls =
    script && 'calls' in script
      ? script.calls.map((call) => ({ name: call.name, json: call.json }))
      : !script && toolsAllowed && functions.length > 0 && !answeringToolResult && /\bweather\b/i.test(userText)
        ? [{ name: forced ?? functions[0].name, json: TOOL_CALL_ARGUMENTS }]
        : [];
  let outputTokens = 0;
  if (calls.length) {
    // One function_call item per call (parallel calls: several items).
    for (const call of calls) {
      output.push({ id: newId('fc_'), type: 'function_call', status: 'completed', arguments: call.json, call_id: callId(), name: call.name });
      outputTokens += argumentFragments(call.json).length;
    }
  } else {
    output.push({
      id: newId('msg_'),
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', annotations, logprobs: [], text }],
      role: 'assistant',
    });
    outputTokens = countWords(text);
  }

  const inputTokens = Math.max(1, Math.ceil(inputChars(body) / 4));
  const cached = behaviourModel === 'mock-cached' ? Math.floor(inputTokens / 2) : 0;
  outputTokens += reasoningTokens;
  const usage: ResponseUsage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: inputTokens + outputTokens,
  };
  return { output, usage, lastUserText: userText };
}

// ---------------------------------------------------------------------------
// The `response` object
// ---------------------------------------------------------------------------

/** Tools as the response echoes them: an mcp tool without its headers and with only the origin of its URL. */
function echoedTools(tools: any[] | undefined): any[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((tool) => {
    if (tool.type !== 'mcp') return tool;
    const { headers: _headers, authorization: _authorization, ...rest } = tool;
    const echoed: Record<string, unknown> = { ...rest, headers: null };
    if (typeof tool.server_url === 'string') echoed.server_url = new URL(tool.server_url).origin;
    return echoed;
  });
}

export type ResponseStatus = 'completed' | 'failed' | 'in_progress' | 'cancelled' | 'queued' | 'incomplete';

/**
 * The response object for a validated create request: the request's settings echoed (with
 * OpenAI's defaults), `output` and `usage` as given (usage null while not finished).
 */
export function responseObject(
  body: any,
  id: string,
  createdAt: number,
  status: ResponseStatus,
  output: any[],
  usage: ResponseUsage | null,
  error: { code: string; message: string } | null = null,
): Record<string, any> {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: body.background === true,
    completed_at: status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    error,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    model: body.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: body.reasoning?.effort ?? (body.reasoning != null ? 'medium' : null), summary: body.reasoning?.summary ?? null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: 'default',
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' }, verbosity: 'medium', ...body.text },
    tool_choice: body.tool_choice ?? 'auto',
    tools: echoedTools(body.tools),
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

// ---------------------------------------------------------------------------
// Streaming events
// ---------------------------------------------------------------------------

export interface StreamEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

export function sseEvent(event: StreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** An item as `response.output_item.added` shows it: nothing produced yet. */
function startedItem(item: any): any {
  switch (item.type) {
    case 'message':
      return { ...item, status: 'in_progress', content: [] };
    case 'function_call':
      return { ...item, status: 'in_progress', arguments: '' };
    case 'mcp_call':
      return { ...item, status: 'in_progress', arguments: '', error: null, output: null };
    case 'mcp_list_tools':
      return { ...item, tools: [] };
    case 'web_search_call':
      return { ...item, status: 'in_progress', action: { type: 'search' } };
    case 'file_search_call':
      return { ...item, status: 'in_progress', queries: [], results: null };
    default:
      return item;
  }
}

/**
 * Every event of a streamed response, in OpenAI's order: `response.created` and
 * `response.in_progress` (the response in progress, output []), per output item
 * `response.output_item.added`, the item's own events, `response.output_item.done`, then
 * `response.completed` with `final` (or `response.failed` when its status is "failed",
 * without any item events).
 */
export function responseEvents(final: Record<string, any>): StreamEvent[] {
  const events: StreamEvent[] = [];
  const push = (type: string, fields: Record<string, unknown>): void => {
    events.push({ type, sequence_number: events.length, ...fields });
  };
  const started = { ...final, status: 'in_progress', completed_at: null, error: null, output: [], usage: null };
  if (final.background) started.status = 'queued';
  push('response.created', { response: started });
  if (final.background) push('response.queued', { response: started });
  push('response.in_progress', { response: { ...started, status: 'in_progress' } });
  if (final.status === 'failed') {
    push('response.failed', { response: final });
    return events;
  }
  if (final.status !== 'completed' && final.status !== 'incomplete') return events; // still running (a replay)

  final.output.forEach((item: any, output_index: number) => {
    const at = { item_id: item.id, output_index };
    push('response.output_item.added', { output_index, item: startedItem(item) });
    switch (item.type) {
      case 'message': {
        const part = item.content[0];
        push('response.content_part.added', { ...at, content_index: 0, part: { ...part, annotations: [], text: '' } });
        for (const delta of splitWords(part.text)) push('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] });
        part.annotations.forEach((annotation: unknown, annotation_index: number) => {
          push('response.output_text.annotation.added', { ...at, content_index: 0, annotation_index, annotation });
        });
        push('response.output_text.done', { ...at, content_index: 0, text: part.text, logprobs: [] });
        push('response.content_part.done', { ...at, content_index: 0, part });
        break;
      }
      case 'function_call':
        for (const delta of argumentFragments(item.arguments)) push('response.function_call_arguments.delta', { ...at, delta });
        push('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
        break;
      case 'mcp_list_tools':
        push('response.mcp_list_tools.in_progress', at);
        push('response.mcp_list_tools.completed', at);
        break;
      case 'mcp_call':
        push('response.mcp_call.in_progress', at);
        push('response.mcp_call_arguments.delta', { ...at, delta: item.arguments });
        push('response.mcp_call_arguments.done', { ...at, arguments: item.arguments });
        push(item.error ? 'response.mcp_call.failed' : 'response.mcp_call.completed', at);
        break;
      case 'web_search_call':
      case 'file_search_call':
        push(`response.${item.type}.in_progress`, at);
        push(`response.${item.type}.searching`, at);
        push(`response.${item.type}.completed`, at);
        break;
    }
    push('response.output_item.done', { output_index, item });
  });
  push(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
  return events;
}
