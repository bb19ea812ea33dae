import { createHash } from 'node:crypto';
import { sseFrame } from '../../common/http/sse-frame';
import { isObject } from '../../common/config-fields';
import type { McpCallResult } from './mcp-types';

/**
 * How each model operation names tools, asks for calls and takes results: the gateway's
 * tool loop (McpToolLoop) works on the operation's own body and answer, so the executor
 * below it routes and translates to any provider as for any other request.
 */

/** An MCP tool as the model sees it: `name` is what the model calls (`{slug}__{tool}`, made safe for every vendor). */
export interface OfferedTool {
  name: string;
  server: string;
  tool: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** A tool call in a model's answer; `arguments` parsed (`argumentsError` when they were not JSON). */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: unknown;
  argumentsError?: string;
}

/** A call's result as the model reads it on the next round. */
export interface ToolResultText {
  call: ModelToolCall;
  text: string;
  isError: boolean;
}

type Body = Record<string, unknown>;

export interface ToolDialect {
  /** The names of the client's own function tools (an MCP tool may not take one of them). */
  clientToolNames(body: Body): string[];
  /** The body with the MCP tools added after the client's. */
  withTools(body: Body, tools: OfferedTool[]): Body;
  /** Every tool call in an answer, in order. */
  toolCalls(answer: unknown): ModelToolCall[];
  /** The next round's body: the conversation so far, the model's turn and the results. */
  continued(body: Body, answer: unknown, results: ToolResultText[]): Body;
  /** The answer without the calls `ids` (MCP calls left out of an answer that goes back to the client). */
  withoutCalls(answer: unknown, ids: ReadonlySet<string>): unknown;
  /** The answer as the operation's SSE frames, for a stream whose answer the gateway changed. */
  frames(answer: unknown, body: Body): string[];
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const records = (value: unknown): Body[] => list(value).filter(isObject);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Parses a JSON arguments string; the model's malformed JSON becomes an error result it can correct. */
function parsedArguments(raw: unknown): Pick<ModelToolCall, 'arguments' | 'argumentsError'> {
  if (isObject(raw)) return { arguments: raw };
  if (typeof raw !== 'string' || raw.trim() === '') return { arguments: {} };
  try {
    return { arguments: JSON.parse(raw) as unknown };
  } catch {
    return { arguments: raw, argumentsError: `The arguments are not valid JSON: ${raw.slice(0, 200)}` };
  }
}

/** `POST /v1/chat/completions`: `tools[].function`, `choices[0].message.tool_calls`, `role: "tool"` results. */
export const CHAT_TOOLS: ToolDialect = {
  clientToolNames: (body) => records(body.tools).map((tool) => text((tool.function as Body | undefined)?.name)),
  withTools: (body, tools) => ({
    ...body,
    tools: [
      ...list(body.tools),
      ...tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description ?? '', parameters: tool.inputSchema } })),
    ],
  }),
  toolCalls: (answer) =>
    records(chatMessage(answer)?.tool_calls).map((call) => {
      const fn = isObject(call.function) ? call.function : {};
      return { id: text(call.id), name: text(fn.name), ...parsedArguments(fn.arguments) };
    }),
  continued: (body, answer, results) => {
    const message = chatMessage(answer) ?? {};
    const turn = { role: 'assistant', content: message.content ?? null, tool_calls: message.tool_calls };
    const replies = results.map((result) => ({ role: 'tool', tool_call_id: result.call.id, content: result.text }));
    return { ...body, messages: [...list(body.messages), turn, ...replies] };
  },
  withoutCalls: (answer, ids) => {
    const completion = answer as Body;
    const choices = records(completion.choices).map((choice, index) => {
      if (index !== 0 || !isObject(choice.message)) return choice;
      return { ...choice, message: { ...choice.message, tool_calls: records(choice.message.tool_calls).filter((call) => !ids.has(text(call.id))) } };
    });
    return { ...completion, choices };
  },
  frames: (answer, body) => {
    const completion = answer as Body;
    const head = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model };
    const frames = records(completion.choices).flatMap((choice) => {
      const message = isObject(choice.message) ? choice.message : {};
      const toolCalls = records(message.tool_calls).map((call, index) => ({ index, ...call }));
      const delta = { role: 'assistant', content: message.content ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
      return [
        sseFrame(JSON.stringify({ ...head, choices: [{ index: choice.index ?? 0, delta, finish_reason: null }] })),
        sseFrame(JSON.stringify({ ...head, choices: [{ index: choice.index ?? 0, delta: {}, finish_reason: choice.finish_reason ?? 'stop' }] })),
      ];
    });
    const wantsUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
    if (wantsUsage && completion.usage) frames.push(sseFrame(JSON.stringify({ ...head, choices: [], usage: completion.usage })));
    return [...frames, sseFrame('[DONE]')];
  },
};

function chatMessage(answer: unknown): Body | null {
  const choice = isObject(answer) ? records(answer.choices)[0] : undefined;
  return choice && isObject(choice.message) ? choice.message : null;
}

/** `POST /v1/messages`: `tools[]` with `input_schema`, `tool_use` blocks, `tool_result` blocks in a user turn. */
export const MESSAGES_TOOLS: ToolDialect = {
  clientToolNames: (body) => records(body.tools).map((tool) => text(tool.name)),
  withTools: (body, tools) => ({
    ...body,
    tools: [...list(body.tools), ...tools.map((tool) => ({ name: tool.name, description: tool.description ?? '', input_schema: tool.inputSchema }))],
  }),
  toolCalls: (answer) =>
    records(isObject(answer) ? answer.content : undefined)
      .filter((block) => block.type === 'tool_use')
      .map((block) => ({ id: text(block.id), name: text(block.name), ...parsedArguments(block.input) })),
  continued: (body, answer, results) => {
    const turn = { role: 'assistant', content: (answer as Body).content };
    const replies = results.map((result) => ({
      type: 'tool_result',
      tool_use_id: result.call.id,
      content: result.text,
      ...(result.isError ? { is_error: true } : {}),
    }));
    return { ...body, messages: [...list(body.messages), turn, { role: 'user', content: replies }] };
  },
  withoutCalls: (answer, ids) => {
    const message = answer as Body;
    return { ...message, content: records(message.content).filter((block) => block.type !== 'tool_use' || !ids.has(text(block.id))) };
  },
  frames: (answer) => {
    const message = answer as Body;
    const usage = isObject(message.usage) ? message.usage : {};
    const event = (type: string, data: Body) => sseFrame(JSON.stringify({ type, ...data }), type);
    const frames = [
      event('message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } } }),
    ];
    records(message.content).forEach((block, index) => {
      const { start, delta } = messageBlockParts(block);
      frames.push(event('content_block_start', { index, content_block: start }));
      for (const part of delta) frames.push(event('content_block_delta', { index, delta: part }));
      frames.push(event('content_block_stop', { index }));
    });
    frames.push(
      event('message_delta', {
        delta: { stop_reason: message.stop_reason ?? 'end_turn', stop_sequence: message.stop_sequence ?? null },
        usage: { output_tokens: usage.output_tokens ?? 0 },
      }),
    );
    frames.push(event('message_stop', {}));
    return frames;
  },
};

/** A content block as its start event and the deltas that rebuild it (Anthropic's streaming shape). */
function messageBlockParts(block: Body): { start: Body; delta: Body[] } {
  if (block.type === 'text') return { start: { ...block, text: '' }, delta: [{ type: 'text_delta', text: text(block.text) }] };
  if (block.type === 'tool_use')
    return { start: { ...block, input: {} }, delta: [{ type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) }] };
  if (block.type === 'thinking') {
    const deltas: Body[] = [{ type: 'thinking_delta', thinking: text(block.thinking) }];
    if (typeof block.signature === 'string') deltas.push({ type: 'signature_delta', signature: block.signature });
    return { start: { ...block, thinking: '', signature: '' }, delta: deltas };
  }
  return { start: block, delta: [] };
}

/** `POST /v1/responses`: `tools[]` of type function, `function_call` output items, `function_call_output` input items. */
export const RESPONSES_TOOLS: ToolDialect = {
  clientToolNames: (body) =>
    records(body.tools)
      .filter((tool) => tool.type === 'function')
      .map((tool) => text(tool.name)),
  withTools: (body, tools) => ({
    ...body,
    tools: [
      ...list(body.tools),
      ...tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description ?? '', parameters: tool.inputSchema, strict: false })),
    ],
  }),
  toolCalls: (answer) =>
    records(isObject(answer) ? answer.output : undefined)
      .filter((item) => item.type === 'function_call')
      .map((item) => ({ id: text(item.call_id), name: text(item.name), ...parsedArguments(item.arguments) })),
  continued: (body, answer, results) => {
    const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : list(body.input);
    // The model's messages and calls go back as input; reasoning items stay out (a bridged provider cannot read them, OpenAI does without).
    const turn = records((answer as Body).output).filter((item) => item.type === 'message' || item.type === 'function_call');
    const replies = results.map((result) => ({ type: 'function_call_output', call_id: result.call.id, output: result.text }));
    return { ...body, input: [...input, ...turn, ...replies] };
  },
  withoutCalls: (answer, ids) => {
    const response = answer as Body;
    return { ...response, output: records(response.output).filter((item) => item.type !== 'function_call' || !ids.has(text(item.call_id))) };
  },
  frames: (answer) => {
    const response = answer as Body;
    let sequence = 0;
    const event = (type: string, data: Body) => sseFrame(JSON.stringify({ type, sequence_number: sequence++, ...data }), type);
    const frames = [event('response.created', { response: { ...response, status: 'in_progress', output: [] } })];
    records(response.output).forEach((item, outputIndex) => {
      frames.push(...responseItemFrames(item, outputIndex, event));
    });
    frames.push(event('response.completed', { response }));
    return frames;
  },
};

/** One output item as the typed events that rebuild it. */
function responseItemFrames(item: Body, outputIndex: number, event: (type: string, data: Body) => string): string[] {
  const at = { output_index: outputIndex };
  if (item.type === 'function_call') {
    return [
      event('response.output_item.added', { ...at, item: { ...item, arguments: '', status: 'in_progress' } }),
      event('response.function_call_arguments.delta', { ...at, item_id: item.id, delta: text(item.arguments) }),
      event('response.function_call_arguments.done', { ...at, item_id: item.id, arguments: text(item.arguments) }),
      event('response.output_item.done', { ...at, item }),
    ];
  }
  if (item.type !== 'message') return [event('response.output_item.added', { ...at, item }), event('response.output_item.done', { ...at, item })];
  const frames = [event('response.output_item.added', { ...at, item: { ...item, content: [], status: 'in_progress' } })];
  records(item.content).forEach((part, contentIndex) => {
    const where = { ...at, item_id: item.id, content_index: contentIndex };
    const isText = part.type === 'output_text';
    frames.push(event('response.content_part.added', { ...where, part: isText ? { ...part, text: '' } : part }));
    if (isText) {
      frames.push(event('response.output_text.delta', { ...where, delta: text(part.text) }));
      frames.push(event('response.output_text.done', { ...where, text: text(part.text) }));
    }
    frames.push(event('response.content_part.done', { ...where, part }));
  });
  frames.push(event('response.output_item.done', { ...at, item }));
  return frames;
}

/**
 * `{slug}__{tool}`, in the characters and length every vendor accepts for a tool name
 * (`^[a-zA-Z0-9_-]{1,64}$`); a longer one keeps a hash of the whole so names stay apart.
 */
export function modelToolName(slug: string, tool: string): string {
  const name = `${slug}__${tool}`.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (name.length <= 64) return name;
  return `${name.slice(0, 55)}_${createHash('sha256').update(`${slug}\0${tool}`).digest('hex').slice(0, 8)}`;
}

/** What the model reads of a result: its text blocks; other blocks named; structured content when there is no text. */
export function resultText(result: Pick<McpCallResult, 'content' | 'structuredContent'>): string {
  const parts = result.content.map((block) => {
    if (block.type === 'text' && typeof block.text === 'string') return block.text;
    if (block.type === 'resource' && typeof block.resource === 'object' && block.resource !== null) {
      const resource = block.resource as Record<string, unknown>;
      return typeof resource.text === 'string' ? resource.text : `[resource ${String(resource.uri)}]`;
    }
    if (block.type === 'resource_link') return `[resource ${String(block.uri)}]`;
    return `[${String(block.type)}${typeof block.mimeType === 'string' ? ` ${block.mimeType}` : ''}]`;
  });
  if (!parts.length && result.structuredContent) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}
