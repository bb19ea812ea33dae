import { GatewayError } from '../../../common/errors/gateway-error';
import type { ChatCompletionBody } from '../../../providers/chat-format';

type Block = Record<string, any>;
type ChatMessage = Record<string, unknown>;

const invalid = (message: string, param: string) => GatewayError.invalidRequest(message, param);
/** A 400 for what Anthropic's API has and chat completions cannot carry; `what` names it, with its field. */
const unsupported = (provider: string, param: string, what: string) =>
  GatewayError.invalidRequest(`${what} needs a provider that speaks Anthropic's Messages API; provider ${provider} is reached through chat completions, which cannot carry it`, param);
const present = (value: unknown) => value !== undefined && value !== null;

/**
 * Each Messages API field a chat body can carry, and where it goes. A field missing here
 * (top_k, container, context_management, a field newer than this table …) is a 400
 * naming it rather than a silent drop. `system`, `messages`, `tools` and `tool_choice`
 * are read together below.
 */
const FIELDS: Record<string, (value: any, chat: ChatCompletionBody, provider: string) => void> = {
  model: (value, chat) => (chat.model = value),
  system: () => undefined,
  messages: () => undefined,
  tools: () => undefined,
  tool_choice: () => undefined,
  max_tokens: (value, chat) => (chat.max_tokens = value),
  temperature: (value, chat) => (chat.temperature = value),
  top_p: (value, chat) => (chat.top_p = value),
  stop_sequences: (value, chat) => {
    if (value.length) chat.stop = value;
  },
  stream: (value, chat) => {
    chat.stream = value;
    // The usage of a stream comes, in its last chunk, only when asked for: the gateway bills by it.
    if (value === true) chat.stream_options = { include_usage: true };
  },
  metadata: (value, chat) => {
    if (typeof value.user_id === 'string' && value.user_id) chat.user = value.user_id;
  },
  // Prompt caching marks are hints: the answer is the same without them, and chat providers cache prompts by themselves.
  cache_control: () => undefined,
  // `auto` / `standard_only` choose between Anthropic's priority and standard capacity; another provider has only its own.
  service_tier: () => undefined,
  thinking: (value, _chat, provider) => {
    if (value.type !== 'disabled') throw unsupported(provider, 'thinking', 'extended thinking (thinking)');
  },
  mcp_servers: (value, _chat, provider) => {
    if (Array.isArray(value) && !value.length) return;
    throw GatewayError.invalidRequest(`mcp_servers needs a provider with Anthropic's MCP connector; provider ${provider} has none`, 'mcp_servers');
  },
};

/**
 * A Messages API request (validated by MessageCreateDto) as an OpenAI chat body, for a
 * provider reached through chat completions. What chat completions cannot carry (server
 * tools, MCP servers, documents, extended thinking, top_k …) is a 400 naming the field
 * and the provider. `cache_control` marks are dropped wherever they are (top level,
 * system, tools, blocks): they are hints, not semantics.
 */
export function messagesToChatBody(body: Record<string, unknown>, provider: string): ChatCompletionBody {
  const chat: ChatCompletionBody = {};
  for (const [field, value] of Object.entries(body)) {
    if (!present(value)) continue;
    const apply = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined;
    if (!apply) throw unsupported(provider, field, field);
    apply(value, chat, provider);
  }
  chat.messages = [...systemMessages(body.system), ...(body.messages as Block[]).flatMap((message, i) => chatMessages(message, `messages[${i}]`, provider))];
  // OpenAI refuses an empty `tools`, and `tool_choice` or `parallel_tool_calls` without tools: without tools they mean nothing.
  if (Array.isArray(body.tools) && body.tools.length) {
    chat.tools = chatTools(body.tools, provider);
    if (present(body.tool_choice)) Object.assign(chat, toolChoice(body.tool_choice as Block));
  }
  return chat;
}

/** The system prompt (a string, or text blocks joined as paragraphs) as one leading system message. */
function systemMessages(system: unknown): ChatMessage[] {
  if (!present(system)) return [];
  const text =
    typeof system === 'string'
      ? system
      : (system as Block[])
          .map((block, i) => {
            if (block?.type !== 'text' || typeof block.text !== 'string') throw invalid(`system[${i}] must be a text block`, `system[${i}]`);
            return block.text;
          })
          .join('\n\n');
  return text ? [{ role: 'system', content: text }] : [];
}

/**
 * Custom tools as function tools. Server tools (web search, code execution, bash, text
 * editor …) run at Anthropic, so a tool with a type other than `custom` is refused, as
 * is a tool field with no function counterpart (`defer_loading`, `input_examples` …).
 */
function chatTools(tools: Block[], provider: string): Record<string, unknown>[] {
  return tools.map((tool, i) => {
    const at = `tools[${i}]`;
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) throw invalid(`${at} must be an object`, at);
    if (present(tool.type) && tool.type !== 'custom') throw unsupported(provider, `${at}.type`, `the server tool ${JSON.stringify(tool.type)} (${at}.type)`);
    if (typeof tool.name !== 'string' || !tool.name) throw invalid(`${at}.name must be a string`, `${at}.name`);
    if (typeof tool.input_schema !== 'object' || tool.input_schema === null) throw invalid(`${at}.input_schema must be a JSON schema object`, `${at}.input_schema`);
    const fn: Record<string, unknown> = { name: tool.name };
    for (const [key, value] of Object.entries(tool)) {
      if (!present(value)) continue;
      if (key === 'description') fn.description = value;
      else if (key === 'input_schema') fn.parameters = value;
      // Both promise arguments that follow the schema exactly.
      else if (key === 'strict') fn.strict = value;
      else if (key !== 'type' && key !== 'name' && key !== 'cache_control') throw unsupported(provider, `${at}.${key}`, `${at}.${key}`);
    }
    return { type: 'function', function: fn };
  });
}

/** Anthropic's tool_choice as OpenAI's, with `disable_parallel_tool_use` as `parallel_tool_calls: false`. */
function toolChoice(choice: Block): { tool_choice: unknown; parallel_tool_calls?: false } {
  const serial = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false as const } : {};
  switch (choice.type) {
    case 'auto':
      return { tool_choice: 'auto', ...serial };
    case 'any':
      return { tool_choice: 'required', ...serial };
    case 'tool':
      if (typeof choice.name !== 'string' || !choice.name) throw invalid('tool_choice.name must name a tool', 'tool_choice.name');
      return { tool_choice: { type: 'function', function: { name: choice.name } }, ...serial };
    case 'none':
      return { tool_choice: 'none' };
    default:
      throw invalid('tool_choice.type must be one of auto, any, tool, none', 'tool_choice.type');
  }
}

function text(block: Block, at: string): string {
  if (typeof block.text !== 'string') throw invalid(`${at}.text must be a string`, `${at}.text`);
  return block.text;
}

/** A block type chat completions have no place for in this turn (documents, search results, server tool blocks …). */
function refuseBlock(block: Block, at: string, role: 'user' | 'assistant', provider: string): GatewayError {
  return unsupported(provider, `${at}.type`, `the block type ${JSON.stringify(block.type)} in ${role === 'user' ? 'a user' : 'an assistant'} turn (${at}.type)`);
}

/** One Anthropic turn as chat messages: none, one, or (tool results) several. */
function chatMessages(message: Block, at: string, provider: string): ChatMessage[] {
  if (message.role === 'assistant') return assistantMessages(message.content, at, provider);
  if (typeof message.content === 'string') return [{ role: 'user', content: message.content }];
  return userMessages(message.content, at, provider);
}

/**
 * A user turn's blocks. Its `tool_result` blocks become `tool` messages, placed before
 * the rest of the turn: OpenAI wants them right after the assistant's tool calls. A lone
 * text block is sent as a plain string, which every chat provider takes.
 */
function userMessages(blocks: Block[], at: string, provider: string): ChatMessage[] {
  const results: ChatMessage[] = [];
  const parts: Record<string, unknown>[] = [];
  blocks.forEach((block, j) => {
    const blockAt = `${at}.content[${j}]`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: text(block, blockAt) });
        break;
      case 'image':
        parts.push(imagePart(block, blockAt, provider));
        break;
      case 'tool_result':
        results.push(toolMessage(block, blockAt, provider));
        break;
      default:
        throw refuseBlock(block, blockAt, 'user', provider);
    }
  });
  if (!parts.length) return results;
  const content = parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts;
  return [...results, { role: 'user', content }];
}

function imagePart(block: Block, at: string, provider: string): Record<string, unknown> {
  const source = block.source ?? {};
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || typeof source.data !== 'string') throw invalid(`${at}.source needs media_type and data`, `${at}.source`);
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (source.type === 'url') {
    if (typeof source.url !== 'string') throw invalid(`${at}.source.url must be a string`, `${at}.source.url`);
    return { type: 'image_url', image_url: { url: source.url } };
  }
  // A `file` source points into Anthropic's Files API, which the provider cannot read.
  throw unsupported(provider, `${at}.source.type`, `the image source type ${JSON.stringify(source.type)} (${at}.source.type)`);
}

/**
 * A tool result as a `tool` message. Chat tool messages carry text only: text blocks are
 * joined as paragraphs, anything else (an image …) is refused. Chat has no error flag,
 * so a failed call (`is_error`) says so in its text: "Error: …".
 */
function toolMessage(block: Block, at: string, provider: string): ChatMessage {
  if (typeof block.tool_use_id !== 'string' || !block.tool_use_id) throw invalid(`${at}.tool_use_id must be a string`, `${at}.tool_use_id`);
  let content = '';
  if (typeof block.content === 'string') content = block.content;
  else if (Array.isArray(block.content)) {
    content = block.content
      .map((part: Block, k) => {
        const partAt = `${at}.content[${k}]`;
        if (part?.type !== 'text') throw unsupported(provider, `${partAt}.type`, `the block type ${JSON.stringify(part?.type)} in a tool result (${partAt}.type)`);
        return text(part, partAt);
      })
      .join('\n\n');
  } else if (present(block.content)) throw invalid(`${at}.content must be a string or an array of blocks`, `${at}.content`);
  return { role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error === true ? `Error: ${content}` : content };
}

/**
 * An assistant turn as one assistant message: its text, and its `tool_use` blocks as
 * tool calls. Text blocks are joined as they are: Anthropic splits one answer into
 * several around citations. Thinking blocks are dropped: they are the model's own, signed
 * for Anthropic, and no other provider can read them. A turn left with nothing (only
 * thinking) is no message, since OpenAI refuses an empty assistant message.
 */
function assistantMessages(content: string | Block[], at: string, provider: string): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'assistant', content }];
  const texts: string[] = [];
  const toolCalls: Record<string, unknown>[] = [];
  content.forEach((block, j) => {
    const blockAt = `${at}.content[${j}]`;
    switch (block.type) {
      case 'text':
        texts.push(text(block, blockAt));
        break;
      case 'tool_use':
        if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalid(`${blockAt} needs an id and a name`, blockAt);
        toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
        break;
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        throw refuseBlock(block, blockAt, 'assistant', provider);
    }
  });
  if (!texts.length && !toolCalls.length) return [];
  const message: ChatMessage = { role: 'assistant', content: texts.length ? texts.join('') : null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  return [message];
}
