import { createHash } from 'node:crypto';
import { GatewayError } from '../../../common/errors/gateway-error';
import type { ChatCompletionBody, ChatContentPart, ChatMessage, ChatTool, ChatToolCall, ChatToolChoice, ChatToolMessage } from '../../../providers/chat-format';
import { IgnoredParams } from '../../../providers/ignored-params';
import { effortForAnthropicBudget } from '../../../providers/reasoning-effort';
import { finiteNumber, invalid, isObject, present } from '../../../providers/translation-checks';

type Block = Record<string, unknown>;
/** A chat body being built: its messages come last. */
type ChatDraft = Partial<ChatCompletionBody>;

/** Who the bridge is translating for: the provider (named in refusals) and where ignored fields are noted. */
interface Bridge {
  provider: string;
  ignored: IgnoredParams;
}

/** A 400 for what Anthropic's API has and chat completions cannot carry; `what` names it, with its field. */
const unsupported = (provider: string, param: string, what: string) =>
  GatewayError.invalidRequest(
    `${what} needs a provider that speaks Anthropic's Messages API; provider ${provider} is reached through chat completions, which cannot carry it`,
    param,
  );

/** `cache_control` marks (on a block, a tool, the system prompt, the body): hints to Anthropic's prompt cache. */
const CACHE_HINT = "it marks Anthropic's prompt cache; the provider caches prompts by itself";

/** OpenAI's own models take only `max_completion_tokens` when they reason; other chat providers know `max_tokens`. */
const MAX_COMPLETION_TOKENS_PROVIDERS = new Set(['openai', 'azure-openai']);

/**
 * The end user as chat's `user`. OpenAI refuses a `user` past 64 characters, and Claude
 * Code's `user_id` is a JSON object of device, account and session ids (150 or so): a
 * longer one goes as its SHA-256 (64 hex digits), as stable and as distinct per user.
 * The log keeps the id as sent.
 */
function chatUser(userId: string): string {
  return userId.length <= 64 ? userId : createHash('sha256').update(userId).digest('hex');
}

/**
 * Each Messages API field a chat body can carry, and where it goes: mapped, ignored
 * (named through `bridge.ignored`) or refused (a 400). A field missing here (top_k,
 * container, a field newer than this table …) is a 400 naming it rather than a silent
 * drop. `system`, `messages`, `tools` and `tool_choice` are read together below.
 */
const FIELDS: Record<string, (value: unknown, chat: ChatDraft, bridge: Bridge) => void> = {
  // MESSAGE_CREATE_SCHEMA checked `model` (a string) and `stream` (a boolean).
  model: (value, chat) => (chat.model = value as string),
  system: () => undefined,
  messages: () => undefined,
  tools: () => undefined,
  tool_choice: () => undefined,
  max_tokens: (value, chat, { provider }) => {
    chat[MAX_COMPLETION_TOKENS_PROVIDERS.has(provider) ? 'max_completion_tokens' : 'max_tokens'] = finiteNumber(value, 'max_tokens');
  },
  temperature: (value, chat) => (chat.temperature = finiteNumber(value, 'temperature')),
  top_p: (value, chat) => (chat.top_p = finiteNumber(value, 'top_p')),
  stop_sequences: (value, chat) => {
    if (!Array.isArray(value) || !value.every((stop) => typeof stop === 'string'))
      throw invalid('stop_sequences must be an array of strings', 'stop_sequences');
    if (value.length) chat.stop = value;
  },
  stream: (value, chat) => {
    chat.stream = value as boolean;
    // The usage of a stream comes, in its last chunk, only when asked for: the gateway bills by it.
    if (value === true) chat.stream_options = { include_usage: true };
  },
  metadata: (value, chat, { ignored }) => {
    if (!isObject(value)) throw invalid('metadata must be an object', 'metadata');
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'user_id') {
        if (typeof inner === 'string' && inner) chat.user = chatUser(inner);
      } else if (present(inner)) ignored.ignore(`metadata.${key}`, 'Anthropic request metadata other than user_id has no chat counterpart');
    }
  },
  cache_control: (_value, _chat, { ignored }) => ignored.ignore('cache_control', CACHE_HINT),
  service_tier: (_value, _chat, { ignored }) => ignored.ignore('service_tier', "it chooses between Anthropic's priority and standard capacity"),
  context_management: (_value, _chat, { ignored }) =>
    ignored.ignore('context_management', "it tunes Anthropic's server-side clearing of old tool results; the provider is sent the whole context"),
  thinking: (value, chat) => thinking(value, chat),
  output_config: (value, chat, bridge) => outputConfig(value, chat, bridge),
  mcp_servers: (value, _chat, { provider }) => {
    if (Array.isArray(value) && !value.length) return;
    throw GatewayError.invalidRequest(`mcp_servers needs a provider with Anthropic's MCP connector; provider ${provider} has none`, 'mcp_servers');
  },
};

/**
 * Extended thinking as OpenAI's `reasoning_effort` (levels in reasoning-effort.ts; each
 * chat translation turns the level into its vendor's budget). `disabled` sends none,
 * which leaves a model that does not reason as it is (OpenAI refuses `reasoning_effort`
 * for those). `adaptive` lets the model choose how much to think, which is what a
 * reasoning model does without a level: it sends none either.
 */
function thinking(value: unknown, chat: ChatDraft): void {
  if (!isObject(value)) throw invalid('thinking must be an object', 'thinking');
  switch (value.type) {
    case 'enabled': {
      const budget = value.budget_tokens;
      if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1)
        throw invalid('thinking.budget_tokens must be a positive integer', 'thinking.budget_tokens');
      chat.reasoning_effort = effortForAnthropicBudget(budget);
      return;
    }
    case 'disabled':
    case 'adaptive':
      return;
    default:
      throw invalid('thinking.type must be enabled, disabled or adaptive', 'thinking.type');
  }
}

/**
 * `output_config.effort` (how many tokens Claude may spend, thinking included) is the
 * same knob as OpenAI's level; a thinking budget, more precise, wins when both come.
 */
function outputConfig(value: unknown, chat: ChatDraft, { provider }: Bridge): void {
  if (!isObject(value)) throw invalid('output_config must be an object', 'output_config');
  for (const [key, inner] of Object.entries(value)) {
    if (!present(inner)) continue;
    if (key !== 'effort') throw unsupported(provider, `output_config.${key}`, `output_config.${key}`);
    if (inner !== 'low' && inner !== 'medium' && inner !== 'high') throw invalid('output_config.effort must be low, medium or high', 'output_config.effort');
    chat.reasoning_effort ??= inner;
  }
}

/**
 * A Messages API request (MessageCreateDto checked only what the gateway acts on) as an
 * OpenAI chat body, for a provider reached through chat completions. Everything it
 * translates it checks, with a 400 naming the field for what it cannot read; what chat
 * completions cannot carry (server tools, MCP servers, documents, top_k …) is a 400
 * naming the field and the provider; what only tunes delivery or caching
 * (`cache_control` anywhere, `eager_input_streaming`, `context_management` …) is noted
 * in `ignored` and dropped.
 */
export function messagesToChatBody(body: Record<string, unknown>, provider: string, ignored = new IgnoredParams()): ChatCompletionBody {
  const bridge: Bridge = { provider, ignored };
  const draft: ChatDraft = {};
  for (const [field, value] of Object.entries(body)) {
    if (!present(value)) continue;
    const apply = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined;
    if (!apply) throw unsupported(provider, field, field);
    apply(value, draft, bridge);
  }
  if (!Array.isArray(body.messages)) throw invalid('messages must be an array', 'messages');
  const chat: ChatCompletionBody = {
    ...draft,
    messages: [...systemMessages(body.system, bridge), ...body.messages.flatMap((message, i) => chatMessages(message, `messages[${i}]`, bridge))],
  };
  // OpenAI refuses an empty `tools`, and `tool_choice` or `parallel_tool_calls` without tools: without tools they mean nothing.
  if (present(body.tools) && !Array.isArray(body.tools)) throw invalid('tools must be an array', 'tools');
  const tools = Array.isArray(body.tools) ? chatTools(body.tools, bridge) : [];
  if (tools.length) {
    chat.tools = tools;
    if (present(body.tool_choice)) Object.assign(chat, toolChoice(body.tool_choice));
  }
  return chat;
}

/** Text blocks (a system prompt, a system message) as one text, paragraphs joined; their cache marks noted. */
function systemText(content: unknown, at: string, { ignored }: Bridge): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`${at} must be a string or an array of text blocks`, at);
  return content
    .map((block, i) => {
      const blockAt = `${at}[${i}]`;
      if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') throw invalid(`${blockAt} must be a text block`, blockAt);
      if (present(block.cache_control)) ignored.ignore(`${blockAt}.cache_control`, CACHE_HINT);
      return block.text;
    })
    .join('\n\n');
}

/** The system prompt as one leading system message. */
function systemMessages(system: unknown, bridge: Bridge): ChatMessage[] {
  if (!present(system)) return [];
  const text = systemText(system, 'system', bridge);
  return text ? [{ role: 'system', content: text }] : [];
}

/**
 * Custom tools as function tools. Server tools (web search, code execution, bash, text
 * editor …) run at Anthropic, so a tool with a type other than `custom` is refused, as
 * is a tool field with no function counterpart (`input_examples` …).
 * `eager_input_streaming` only changes how the arguments arrive (unbuffered), and chat
 * providers stream them as they come anyway. A tool with `defer_loading: true` is one
 * Anthropic keeps out of the model's view until a tool search finds it (Claude Code
 * sends a `DeferredToolPlaceholder` so): it is left out, which is what the model would
 * have seen.
 */
function chatTools(tools: unknown[], bridge: Bridge): ChatTool[] {
  const { provider, ignored } = bridge;
  return tools.flatMap((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalid(`${at} must be an object`, at);
    if (tool.defer_loading === true) {
      ignored.ignore(
        `${at}.defer_loading`,
        "the tool waits for Anthropic's tool search, which chat providers lack; it is left out, as the model would not see it",
      );
      return [];
    }
    if (present(tool.type) && tool.type !== 'custom') throw unsupported(provider, `${at}.type`, `the server tool ${JSON.stringify(tool.type)} (${at}.type)`);
    if (typeof tool.name !== 'string' || !tool.name) throw invalid(`${at}.name must be a string`, `${at}.name`);
    if (!isObject(tool.input_schema)) throw invalid(`${at}.input_schema must be a JSON schema object`, `${at}.input_schema`);
    const fn: ChatTool['function'] = { name: tool.name };
    for (const [key, value] of Object.entries(tool)) {
      if (!present(value) || key === 'type' || key === 'name') continue;
      if (key === 'description') {
        if (typeof value !== 'string') throw invalid(`${at}.description must be a string`, `${at}.description`);
        fn.description = value;
      } else if (key === 'input_schema') fn.parameters = tool.input_schema;
      // Both promise arguments that follow the schema exactly; passed on as sent, for the provider to check.
      else if (key === 'strict') fn.strict = value as boolean;
      else if (key === 'cache_control') ignored.ignore(`${at}.cache_control`, CACHE_HINT);
      else if (key === 'eager_input_streaming')
        ignored.ignore(`${at}.eager_input_streaming`, 'it only streams tool arguments unbuffered; chat providers stream them as they come');
      else if (key !== 'defer_loading') throw unsupported(provider, `${at}.${key}`, `${at}.${key}`);
    }
    return [{ type: 'function' as const, function: fn }];
  });
}

/** Anthropic's tool_choice as OpenAI's, with `disable_parallel_tool_use` as `parallel_tool_calls: false`. */
function toolChoice(choice: unknown): { tool_choice: ChatToolChoice; parallel_tool_calls?: false } {
  if (!isObject(choice)) throw invalid('tool_choice must be an object', 'tool_choice');
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
  return unsupported(
    provider,
    `${at}.type`,
    `the block type ${JSON.stringify(block.type)} in ${role === 'user' ? 'a user' : 'an assistant'} turn (${at}.type)`,
  );
}

/** A turn's content blocks, each checked to be an object with a type; cache marks noted. */
function blocksOf(content: unknown, at: string, { ignored }: Bridge): Block[] {
  if (!Array.isArray(content)) throw invalid(`${at}.content must be a string or an array of content blocks`, `${at}.content`);
  return content.map((block, j) => {
    const blockAt = `${at}.content[${j}]`;
    if (!isObject(block) || typeof block.type !== 'string') throw invalid(`${blockAt} must be a content block with a type`, `${blockAt}.type`);
    if (present(block.cache_control)) ignored.ignore(`${blockAt}.cache_control`, CACHE_HINT);
    return block;
  });
}

/**
 * One Anthropic turn as chat messages: none, one, or (tool results) several. A system
 * message in the middle of the conversation (Claude Code's reminders, under a beta)
 * stays a system message at its place: chat completions take system messages anywhere.
 */
function chatMessages(message: unknown, at: string, bridge: Bridge): ChatMessage[] {
  if (!isObject(message)) throw invalid(`${at} must be an object`, at);
  switch (message.role) {
    case 'assistant':
      return assistantMessages(message.content, at, bridge);
    case 'user':
      return typeof message.content === 'string' ? [{ role: 'user', content: message.content }] : userMessages(message.content, at, bridge);
    case 'system': {
      const content = systemText(message.content, `${at}.content`, bridge);
      return content ? [{ role: 'system', content }] : [];
    }
    default:
      throw invalid(`${at}.role must be user, assistant or system`, `${at}.role`);
  }
}

/**
 * A user turn's blocks. Its `tool_result` blocks become `tool` messages, placed before
 * the rest of the turn: OpenAI wants them right after the assistant's tool calls. A lone
 * text block is sent as a plain string, which every chat provider takes.
 */
function userMessages(content: unknown, at: string, bridge: Bridge): ChatMessage[] {
  const results: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  blocksOf(content, at, bridge).forEach((block, j) => {
    const blockAt = `${at}.content[${j}]`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: text(block, blockAt) });
        break;
      case 'image':
        parts.push(imagePart(block, blockAt, bridge.provider));
        break;
      case 'tool_result':
        results.push(toolMessage(block, blockAt, bridge));
        break;
      default:
        throw refuseBlock(block, blockAt, 'user', bridge.provider);
    }
  });
  if (!parts.length) return results;
  const userContent = parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts;
  return [...results, { role: 'user', content: userContent }];
}

function imagePart(block: Block, at: string, provider: string): ChatContentPart {
  const source = block.source;
  if (!isObject(source)) throw invalid(`${at}.source must be an object`, `${at}.source`);
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
function toolMessage(block: Block, at: string, bridge: Bridge): ChatToolMessage {
  if (typeof block.tool_use_id !== 'string' || !block.tool_use_id) throw invalid(`${at}.tool_use_id must be a string`, `${at}.tool_use_id`);
  let content = '';
  if (typeof block.content === 'string') content = block.content;
  else if (Array.isArray(block.content)) {
    content = blocksOf(block.content, at, bridge)
      .map((part, k) => {
        const partAt = `${at}.content[${k}]`;
        if (part.type !== 'text')
          throw unsupported(bridge.provider, `${partAt}.type`, `the block type ${JSON.stringify(part.type)} in a tool result (${partAt}.type)`);
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
function assistantMessages(content: unknown, at: string, bridge: Bridge): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'assistant', content }];
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  blocksOf(content, at, bridge).forEach((block, j) => {
    const blockAt = `${at}.content[${j}]`;
    switch (block.type) {
      case 'text':
        texts.push(text(block, blockAt));
        break;
      case 'tool_use':
        if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalid(`${blockAt} needs an id and a name`, blockAt);
        if (present(block.input) && !isObject(block.input)) throw invalid(`${blockAt}.input must be an object`, `${blockAt}.input`);
        toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
        break;
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        throw refuseBlock(block, blockAt, 'assistant', bridge.provider);
    }
  });
  if (!texts.length && !toolCalls.length) return [];
  const message: ChatMessage = { role: 'assistant', content: texts.length ? texts.join('') : null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  return [message];
}

/**
 * Whether the client asked to see thinking: then reasoning text the provider sends back
 * becomes thinking blocks. `display: "omitted"` (Claude Code's) asks for thinking
 * without its text, which a provider's reasoning text has no other form for.
 */
export function wantsThinking(body: Record<string, unknown>): boolean {
  if (!isObject(body.thinking) || body.thinking.display === 'omitted') return false;
  return body.thinking.type === 'enabled' || body.thinking.type === 'adaptive';
}
