/**
 * Anthropic Messages API bodies for the mock upstream (mock-anthropic.ts): request checks with
 * Anthropic's messages ("<field>: …"), what the "model" answers, and its stream events.
 */
import { randomBytes } from 'node:crypto';
import { splitWords } from './mock-openai-chunks';
import { answerToolScript, argumentFragments, partsText, type ScriptTurn } from './mock-tool-script';

export const MCP_BETA = 'mcp-client-2025-04-04';
export const THINKING_TEXT = 'Let me think about that.';

/** Every body field of the Messages API (`betas` travels as the anthropic-beta header, not here). */
const KNOWN_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'cache_control',
  'compaction',
  'container',
  'context_management',
  'diagnostics',
  'fallback_credit_token',
  'fallbacks',
  'inference_geo',
  'mcp_servers',
  'metadata',
  'output_config',
  'output_format',
  'service_tier',
  'speed',
  'stop_sequences',
  'stream',
  'system',
  'temperature',
  'thinking',
  'tool_choice',
  'tools',
  'top_k',
  'top_p',
  'user_profile_id',
  'workspace_id',
]);
const TOOL_CHOICES = ['auto', 'any', 'tool', 'none'];

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Anthropic-looking ids: "msg_01" + 22 base62 characters (also toolu_01…, mcptoolu_01…, req_01…). */
export function anthropicId(prefix: string): string {
  return prefix + '01' + Array.from(randomBytes(22), (byte) => BASE62[byte % 62]).join('');
}

const isObject = (value: unknown): value is Record<string, any> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isEmpty = (content: unknown) => content === '' || (Array.isArray(content) && content.length === 0);

/**
 * Betas under which a `system` message may stand among the turns: Claude Code 2.1.331
 * sends one (test/fixtures/clients/) with these in its anthropic-beta header; which of
 * them enables it is not documented, so either does here.
 */
const MID_CONVERSATION_SYSTEM_BETAS = ['per-turn-control-2026-07-01', 'mid-conversation-tool-changes-2026-07-01'];

/** The blocks (system, tools, message content) that mark a prompt-cache breakpoint. */
function cacheBreakpoints(body: any): number {
  const marked = (list: unknown) => (Array.isArray(list) ? list.filter((item: any) => item?.cache_control).length : 0);
  return marked(body.system) + marked(body.tools) + body.messages.reduce((n: number, message: any) => n + marked(message?.content), 0);
}

/** The first problem of a create body, as Anthropic words it ("<field>: …"), or null. */
export function invalidBody(body: any, betaHeader: unknown = undefined): string | null {
  const systemRole = MID_CONVERSATION_SYSTEM_BETAS.some((beta) => String(betaHeader ?? '').includes(beta));
  if (!isObject(body)) return 'body: Input should be a valid dictionary';
  const extra = Object.keys(body).find((field) => !KNOWN_FIELDS.has(field));
  if (extra) return `${extra}: Extra inputs are not permitted`;
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    return body.max_tokens === undefined ? 'max_tokens: Field required' : 'max_tokens: Input should be a positive integer';
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  for (const [i, message] of body.messages.entries()) {
    if (systemRole && message?.role === 'system') {
      if (i === 0) return 'messages: first message must use the "user" role';
    } else if (message?.role !== 'user' && message?.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (typeof message.content !== 'string' && !Array.isArray(message.content)) return `messages.${i}.content: Input should be a valid list`;
    if (Array.isArray(message.content)) {
      const j = message.content.findIndex((block: unknown) => !isObject(block) || typeof block.type !== 'string');
      if (j !== -1) return `messages.${i}.content.${j}.type: Field required`;
    }
    const finalAssistant = i === body.messages.length - 1 && message.role === 'assistant';
    if (isEmpty(message.content) && !finalAssistant) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
  }
  // Consecutive turns of one role are merged by Anthropic, so only the first role is checked.
  if (body.messages[0].role !== 'user') return 'messages: first message must use the "user" role';
  if (body.system !== undefined && typeof body.system !== 'string') {
    if (!Array.isArray(body.system)) return 'system: Input should be a valid list';
    if (body.system.some((block: any) => block?.type !== 'text' || typeof block.text !== 'string'))
      return "system: Input tag does not match the expected tag 'text'";
  }
  for (const field of ['temperature', 'top_p']) {
    const value = body[field];
    if (value !== undefined && (typeof value !== 'number' || value < 0 || value > 1)) {
      return `${field}: Input should be ${typeof value === 'number' && value < 0 ? 'greater than or equal to 0' : 'less than or equal to 1'}`;
    }
  }
  if (body.top_k !== undefined && !(Number.isInteger(body.top_k) && body.top_k >= 0)) return 'top_k: Input should be a non-negative integer';
  // Opus 4.1, Sonnet 4.5 and the models after them take one of the two.
  if (body.temperature !== undefined && body.top_p !== undefined && /claude-(?:opus|sonnet|haiku)-(?:4-[1-9]|[5-9])/.test(body.model))
    return '`temperature` and `top_p` cannot both be specified for this model. Please use only one.';
  const breakpoints = cacheBreakpoints(body);
  if (breakpoints > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return 'stream: Input should be a valid boolean';
  if (body.stop_sequences !== undefined && !(Array.isArray(body.stop_sequences) && body.stop_sequences.every((s: unknown) => typeof s === 'string'))) {
    return 'stop_sequences: Input should be a valid list of strings';
  }
  return invalidTools(body) ?? invalidThinking(body);
}

function invalidTools(body: any): string | null {
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return 'tools: Input should be a valid list';
    for (const [i, tool] of body.tools.entries()) {
      if (!isObject(tool)) return `tools.${i}: Input should be a valid dictionary`;
      if (typeof tool.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name))
        return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
      if ((tool.type === undefined || tool.type === 'custom') && !isObject(tool.input_schema)) return `tools.${i}.custom.input_schema: Field required`;
    }
  }
  const choice = body.tool_choice;
  if (choice === undefined) return null;
  if (!isObject(choice) || !TOOL_CHOICES.includes(choice.type))
    return "tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'";
  if (!Array.isArray(body.tools) || body.tools.length === 0) {
    if (choice.type !== 'none' && choice.type !== 'auto') return 'tool_choice: tool_choice may only be specified while providing tools.';
  }
  if (choice.type === 'tool') {
    if (typeof choice.name !== 'string') return 'tool_choice.tool.name: Field required';
    if (!body.tools.some((tool: any) => tool.name === choice.name)) return `tool_choice: Tool '${choice.name}' not found in tools`;
  }
  return null;
}

function invalidThinking(body: any): string | null {
  const thinking = body.thinking;
  if (thinking === undefined || thinking?.type === 'disabled' || thinking?.type === 'adaptive') return null;
  if (thinking?.type !== 'enabled') return "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'";
  if (!Number.isInteger(thinking.budget_tokens) || thinking.budget_tokens < 1024)
    return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (thinking.budget_tokens >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  return invalidWithThinking(body);
}

/** What Anthropic refuses beside enabled thinking, in its words. */
function invalidWithThinking(body: any): string | null {
  if (body.temperature !== undefined && body.temperature !== 1)
    return '`temperature` may only be set to 1 when thinking is enabled or in interleaved thinking mode.';
  if (body.top_p !== undefined && body.top_p < 0.95) return '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.';
  if (body.top_k !== undefined) return '`top_k` must be unset when thinking is enabled.';
  if (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
  const messages: any[] = body.messages;
  const last = messages
    .map((message, i) => [message, i] as const)
    .filter(([message]) => message.role === 'assistant')
    .at(-1);
  if (last && Array.isArray(last[0].content) && last[0].content.some((block: any) => block?.type === 'tool_use')) {
    const first = last[0].content[0]?.type;
    if (first !== 'thinking' && first !== 'redacted_thinking') {
      return `messages.${last[1]}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`;
    }
  }
  return null;
}

/** MCP servers without the beta header: Anthropic does not know the field then. */
export function mcpBetaMissing(body: any, betaHeader: unknown): string | null {
  if (body.mcp_servers === undefined) return null;
  if (!String(betaHeader ?? '').includes(MCP_BETA))
    return `mcp_servers: Extra inputs are not permitted (the MCP connector needs the anthropic-beta header ${MCP_BETA})`;
  if (!Array.isArray(body.mcp_servers)) return 'mcp_servers: Input should be a valid list';
  const i = body.mcp_servers.findIndex((server: any) => server?.type !== 'url' || typeof server.url !== 'string' || typeof server.name !== 'string');
  return i === -1 ? null : `mcp_servers.${i}: type "url", url and name are required`;
}

/** The user-written text of a turn's content: its text blocks (tool_result blocks are not user text). */
export function userText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((block: any) => block?.type === 'text' && typeof block.text === 'string')
    .map((block: any) => block.text)
    .join('');
}

/** Text of the last user turn ('' when there is none). */
export function lastUserText(messages: any[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'user') return userText(messages[i].content);
  return '';
}

/**
 * The conversation as the tool script reads it: a user turn without tool_result blocks is user
 * text; an assistant turn with tool_use blocks a call turn; each tool_result a result (its text
 * content, "error: " first when is_error).
 */
function scriptTurns(messages: any[]): ScriptTurn[] {
  const turns: ScriptTurn[] = [];
  for (const message of messages) {
    const blocks: any[] = Array.isArray(message.content) ? message.content : [];
    if (message.role === 'assistant') {
      if (blocks.some((block) => block?.type === 'tool_use')) turns.push({ kind: 'calls' });
    } else if (message.role === 'user') {
      const results = blocks.filter((block) => block?.type === 'tool_result');
      if (!results.length) turns.push({ kind: 'user', text: userText(message.content) });
      for (const result of results) turns.push({ kind: 'result', text: (result.is_error === true ? 'error: ' : '') + partsText(result.content) });
    }
  }
  return turns;
}

/** Characters a block stands for in input_tokens: texts, tool inputs and tool results (images count nothing). */
function blockChars(block: any): number {
  if (typeof block === 'string') return block.length;
  switch (block?.type) {
    case 'text':
      return String(block.text ?? '').length;
    case 'thinking':
      return String(block.thinking ?? '').length;
    case 'tool_use':
    case 'server_tool_use':
    case 'mcp_tool_use':
      return JSON.stringify(block.input ?? {}).length;
    case 'tool_result':
    case 'mcp_tool_result':
      return typeof block.content === 'string'
        ? block.content.length
        : Array.isArray(block.content)
          ? block.content.reduce((n: number, b: any) => n + blockChars(b), 0)
          : 0;
    default:
      return 0;
  }
}

function contentChars(content: unknown): number {
  if (typeof content === 'string') return content.length;
  return Array.isArray(content) ? content.reduce((n: number, block) => n + blockChars(block), 0) : 0;
}

const countWords = (text: string) => (text.match(/\S+/g) ?? []).length;

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface Plan {
  blocks: Record<string, any>[];
  stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
  stopSequence: string | null;
  usage: Usage;
}

/** What the "model" answers to a (valid) body. `behaviourModel` is the model without a "provider/" prefix. */
export function plan(body: any, behaviourModel: string): Plan {
  const messages: any[] = body.messages;
  const last = messages[messages.length - 1];
  const lastText = lastUserText(messages);
  const toolResultTurn = Array.isArray(last.content) && last.content.some((block: any) => block?.type === 'tool_result');
  const tools = (body.tools ?? []).filter((tool: any) => tool.type === undefined || tool.type === 'custom');
  const cached = behaviourModel === 'mock-cache-tokens' || JSON.stringify([body.cache_control, body.system, messages]).includes('"cache_control"');
  const usage: Usage = {
    input_tokens: Math.max(1, Math.ceil((contentChars(body.system) + messages.reduce((n, m) => n + contentChars(m.content), 0)) / 4)),
    output_tokens: 0,
    cache_creation_input_tokens: cached ? 50 : 0,
    cache_read_input_tokens: cached ? 200 : 0,
  };

  const blocks: Record<string, any>[] = [];
  let outputTokens = 0;
  if (body.thinking?.type === 'enabled') {
    blocks.push({ type: 'thinking', thinking: THINKING_TEXT, signature: randomBytes(48).toString('base64') });
    outputTokens += countWords(THINKING_TEXT);
  }
  for (const server of body.mcp_servers ?? []) {
    const useId = anthropicId('mcptoolu_');
    blocks.push({ type: 'mcp_tool_use', id: useId, name: 'echo', server_name: server.name, input: { text: lastText } });
    blocks.push({ type: 'mcp_tool_result', tool_use_id: useId, is_error: false, content: [{ type: 'text', text: `echo from ${server.name}` }] });
  }

  const script = answerToolScript(scriptTurns(messages), body.tool_choice?.type === 'none' ? [] : tools.map((tool: any) => tool.name));
  let calls: { name: string; input: Record<string, unknown> }[] = [];
  if (script && 'calls' in script) calls = script.calls.map((call) => ({ name: call.name, input: call.arguments }));
  else if (!script && tools.length && /weather/i.test(lastText) && !toolResultTurn && body.tool_choice?.type !== 'none') {
    calls = [{ name: body.tool_choice?.type === 'tool' ? body.tool_choice.name : tools[0].name, input: { location: 'Paris' } }];
  }
  if (calls.length) {
    for (const call of calls) blocks.push({ type: 'tool_use', id: anthropicId('toolu_'), name: call.name, input: call.input });
    const fragments = calls.reduce((n, call) => n + argumentFragments(JSON.stringify(call.input)).length, 0);
    return { blocks, stopReason: 'tool_use', stopSequence: null, usage: { ...usage, output_tokens: outputTokens + fragments } };
  }

  let text = script && 'text' in script ? script.text : lastText.startsWith('echo:') ? lastText.slice(5).trim() : 'Hello from mock';
  let stopReason: Plan['stopReason'] = 'end_turn';
  let stopSequence: string | null = null;
  // The earliest stop sequence in the text ends it (the sequence itself is not part of the answer).
  for (const sequence of body.stop_sequences ?? []) {
    const at = sequence ? text.indexOf(sequence) : -1;
    if (at !== -1 && (stopSequence === null || at < text.indexOf(stopSequence))) stopSequence = sequence;
  }
  if (stopSequence !== null) {
    text = text.slice(0, text.indexOf(stopSequence));
    stopReason = 'stop_sequence';
  }
  // One token per word: max_tokens cuts the answer there.
  const words = splitWords(text);
  const budget = body.max_tokens - outputTokens;
  if (words.length > budget) {
    text = words.slice(0, Math.max(0, budget)).join('');
    stopReason = 'max_tokens';
    stopSequence = null;
  }
  blocks.push({ type: 'text', text });
  return { blocks, stopReason, stopSequence, usage: { ...usage, output_tokens: outputTokens + countWords(text) } };
}

/** One SSE event as Anthropic frames it: the event name repeats the data's `type`. */
export const sseEvent = (data: Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * The events of one content block: content_block_start (the block with its streamed parts
 * empty), its deltas, content_block_stop.
 *   text                        a text_delta per word, whitespace kept (the deltas join to the text)
 *   thinking                    a thinking_delta per word, then one signature_delta
 *   tool_use / mcp_tool_use     input {} in the start, then the input JSON in input_json_delta
 *                               fragments (tool_use: token-like, see argumentFragments(); mcp_tool_use:
 *                               one, as server tools send it)
 *   mcp_tool_result and others  whole in content_block_start, no delta
 */
export function blockEvents(block: Record<string, any>, index: number): string[] {
  const start = (content_block: unknown) => sseEvent({ type: 'content_block_start', index, content_block });
  const delta = (delta: unknown) => sseEvent({ type: 'content_block_delta', index, delta });
  const stop = sseEvent({ type: 'content_block_stop', index });
  switch (block.type) {
    case 'text':
      return [start({ type: 'text', text: '' }), ...splitWords(block.text).map((text) => delta({ type: 'text_delta', text })), stop];
    case 'thinking':
      return [
        start({ type: 'thinking', thinking: '', signature: '' }),
        ...splitWords(block.thinking).map((thinking) => delta({ type: 'thinking_delta', thinking })),
        delta({ type: 'signature_delta', signature: block.signature }),
        stop,
      ];
    case 'tool_use':
      return [
        start({ ...block, input: {} }),
        ...argumentFragments(JSON.stringify(block.input)).map((partial_json) => delta({ type: 'input_json_delta', partial_json })),
        stop,
      ];
    case 'mcp_tool_use':
      return [start({ ...block, input: {} }), delta({ type: 'input_json_delta', partial_json: JSON.stringify(block.input) }), stop];
    default:
      return [start(block), stop];
  }
}

/** A whole stream: message_start, ping, every block's events, message_delta, message_stop. */
export function messageEvents(message: Record<string, any>, plan: Plan): string[] {
  const startMessage = { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...plan.usage, output_tokens: 1 } };
  return [
    sseEvent({ type: 'message_start', message: startMessage }),
    sseEvent({ type: 'ping' }),
    ...plan.blocks.flatMap(blockEvents),
    sseEvent({
      type: 'message_delta',
      delta: { stop_reason: plan.stopReason, stop_sequence: plan.stopSequence },
      usage: { output_tokens: plan.usage.output_tokens },
    }),
    sseEvent({ type: 'message_stop' }),
  ];
}

/** The body fields of `POST /v1/messages/count_tokens` (no max_tokens, stream or sampling settings). */
const COUNT_TOKENS_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'mcp_servers',
  'cache_control',
  'context_management',
  'output_config',
  'output_format',
]);

/** The first problem of a count_tokens body, as Anthropic words it, or null. */
export function invalidCountTokensBody(body: any): string | null {
  if (!isObject(body)) return 'body: Input should be a valid dictionary';
  const extra = Object.keys(body).find((field) => !COUNT_TOKENS_FIELDS.has(field));
  if (extra) return `${extra}: Extra inputs are not permitted`;
  // The create checks, with a max_tokens that lets any thinking budget pass.
  return invalidBody({ ...body, max_tokens: Number.MAX_SAFE_INTEGER });
}

/** count_tokens' input_tokens: the create's input count (chars / 4) plus the tool definitions' JSON / 4. */
export function countInputTokens(body: any): number {
  const messages: any[] = body.messages;
  const chars = contentChars(body.system) + messages.reduce((n, m) => n + contentChars(m.content), 0) + (body.tools ? JSON.stringify(body.tools).length : 0);
  return Math.max(1, Math.ceil(chars / 4));
}

/** The models of the mock's Models API, newest first as Anthropic lists them. */
export const ANTHROPIC_MODELS = [
  { type: 'model', id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5', created_at: '2025-10-15T00:00:00Z' },
  { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
  { type: 'model', id: 'claude-opus-4-1-20250805', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z' },
];

/**
 * A page of ANTHROPIC_MODELS for `limit` (default 20, 1…1000), `after_id` (the page after it)
 * or `before_id` (the page right before it), or the problem with the query.
 */
export function modelsPage(query: URLSearchParams): { page: Record<string, unknown> } | { problem: string } {
  return anthropicPage(ANTHROPIC_MODELS, query, 'model');
}

/**
 * A page of `items` (newest first) as Anthropic's lists answer: `limit` (default 20, 1…1000),
 * `after_id` (the page after it) or `before_id` (the page right before it); {data, has_more,
 * first_id, last_id}, or the problem with the query (`what` names the items in it).
 */
export function anthropicPage(items: readonly { id: string }[], query: URLSearchParams, what: string): { page: Record<string, unknown> } | { problem: string } {
  const limitText = query.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    return { problem: 'limit: Input should be less than or equal to 1000 and greater than or equal to 1' };
  const beforeId = query.get('before_id');
  const afterId = query.get('after_id');
  if (beforeId && afterId) return { problem: 'before_id and after_id cannot both be set' };
  const index = (id: string) => items.findIndex((item) => item.id === id);
  let data: readonly { id: string }[];
  let hasMore: boolean;
  if (beforeId) {
    const end = index(beforeId);
    if (end === -1) return { problem: `before_id: no ${what} ${beforeId}` };
    const start = Math.max(0, end - limit);
    data = items.slice(start, end);
    hasMore = start > 0;
  } else {
    const start = afterId ? index(afterId) + 1 : 0;
    if (afterId && start === 0) return { problem: `after_id: no ${what} ${afterId}` };
    data = items.slice(start, start + limit);
    hasMore = start + limit < items.length;
  }
  return { page: { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null } };
}
