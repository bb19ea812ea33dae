import { GatewayError } from '../../../common/errors/gateway-error';
import type { ChatCompletionBody } from '../../../providers/chat-format';

type Block = Record<string, any>;

const invalid = (message: string, param: string) => GatewayError.invalidRequest(message, param);

/**
 * A Messages API request as an OpenAI chat body, for a provider reached through chat
 * completions. What chat completions cannot carry is a 400 naming the field and the
 * provider. `cache_control` marks are dropped: they are caching hints, and the chat
 * providers cache prompts by themselves.
 */
export function messagesToChatBody(body: Record<string, unknown>, provider: string): ChatCompletionBody {
  const unsupported = (param: string, what = param) =>
    GatewayError.invalidRequest(`Provider ${provider} is reached through chat completions, which cannot carry ${what}`, param);
  const chat: ChatCompletionBody = { model: body.model };
  const messages: Record<string, unknown>[] = [];

  for (const [field, value] of Object.entries(body)) {
    if (value === null || value === undefined) continue;
    switch (field) {
      case 'model':
      case 'messages':
      case 'tool_choice':
        break;
      case 'system':
        messages.push({ role: 'system', content: systemText(value) });
        break;
      case 'max_tokens':
      case 'temperature':
      case 'top_p':
        chat[field] = value;
        break;
      case 'stop_sequences':
        chat.stop = value;
        break;
      case 'stream':
        chat.stream = value;
        // The usage of a stream comes in its last chunk only when asked for.
        if (value === true) chat.stream_options = { include_usage: true };
        break;
      case 'metadata': {
        const userId = (value as Block).user_id;
        if (typeof userId === 'string' && userId) chat.user = userId;
        break;
      }
      case 'tools':
        chat.tools = tools(value, unsupported);
        break;
      case 'mcp_servers':
        throw GatewayError.invalidRequest(`mcp_servers needs a provider with Anthropic's MCP connector; provider ${provider} has none`, 'mcp_servers');
      case 'thinking':
        if ((value as Block).type === 'disabled') break;
        throw unsupported('thinking', 'extended thinking (thinking)');
      default:
        throw unsupported(field);
    }
  }

  const choice = toolChoice(body.tool_choice as Block | undefined, unsupported);
  if (choice.tool_choice !== undefined) chat.tool_choice = choice.tool_choice;
  if (choice.parallel_tool_calls === false) chat.parallel_tool_calls = false;
  (body.messages as Block[]).forEach((message, i) => messages.push(...chatMessages(message, `messages[${i}]`, unsupported)));
  chat.messages = messages;
  return chat;
}

type Unsupported = (param: string, what?: string) => GatewayError;

function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  return (system as Block[]).map((block, i) => {
    if (block?.type !== 'text' || typeof block.text !== 'string') throw invalid(`system[${i}] must be a text block`, `system[${i}]`);
    return block.text;
  }).join('\n\n');
}

function tools(value: unknown, unsupported: Unsupported): Record<string, unknown>[] {
  if (!Array.isArray(value)) throw invalid('tools must be an array', 'tools');
  return value.map((tool: Block, i) => {
    // Server tools (web search, code execution, bash…) run at Anthropic; a chat provider has none of them.
    if (tool?.type !== undefined && tool.type !== 'custom') throw unsupported(`tools[${i}].type`, `Anthropic's server tool ${JSON.stringify(tool.type)}`);
    if (typeof tool?.name !== 'string') throw invalid(`tools[${i}].name must be a string`, `tools[${i}].name`);
    const fn: Record<string, unknown> = { name: tool.name };
    if (typeof tool.description === 'string') fn.description = tool.description;
    fn.parameters = tool.input_schema ?? { type: 'object', properties: {} };
    return { type: 'function', function: fn };
  });
}

function toolChoice(choice: Block | undefined, unsupported: Unsupported): { tool_choice?: unknown; parallel_tool_calls?: boolean } {
  if (!choice) return {};
  const parallel = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case 'auto':
      return { tool_choice: 'auto', ...parallel };
    case 'any':
      return { tool_choice: 'required', ...parallel };
    case 'none':
      return { tool_choice: 'none' };
    case 'tool':
      return { tool_choice: { type: 'function', function: { name: choice.name } }, ...parallel };
    default:
      throw unsupported('tool_choice.type', `tool_choice of type ${JSON.stringify(choice.type)}`);
  }
}

/** The text of a tool result's content (a string or text blocks). */
function toolResultText(content: unknown, param: string, unsupported: Unsupported): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`${param} must be a string or an array of blocks`, param);
  return content.map((block: Block, k) => {
    if (block?.type !== 'text') throw unsupported(`${param}[${k}].type`, `tool results holding ${JSON.stringify(block?.type)} blocks`);
    return String(block.text ?? '');
  }).join('\n');
}

function imagePart(block: Block, param: string, unsupported: Unsupported): Record<string, unknown> {
  const source = block.source ?? {};
  if (source.type === 'base64') return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source.type === 'url') return { type: 'image_url', image_url: { url: source.url } };
  throw unsupported(`${param}.source.type`, `image sources of type ${JSON.stringify(source.type)}`);
}

/**
 * One Anthropic turn as chat messages. A user turn's `tool_result` blocks become `tool`
 * messages, placed before the rest of the turn as OpenAI expects them right after the
 * assistant's tool calls (a failed one, `is_error`, says so in its text: chat has no
 * such flag). An assistant's thinking blocks are dropped: they are signed
 * for Anthropic and no other provider can read them.
 */
function chatMessages(message: Block, param: string, unsupported: Unsupported): Record<string, unknown>[] {
  const blocks: Block[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  const out: Record<string, unknown>[] = [];
  const parts: Record<string, unknown>[] = [];
  const toolCalls: Record<string, unknown>[] = [];
  blocks.forEach((block, j) => {
    const blockParam = `${param}.content[${j}]`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: String(block.text ?? '') });
        break;
      case 'image':
        if (message.role !== 'user') throw unsupported(`${blockParam}.type`, 'images in assistant turns');
        parts.push(imagePart(block, blockParam, unsupported));
        break;
      case 'tool_result': {
        const text = toolResultText(block.content, `${blockParam}.content`, unsupported);
        out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error === true ? `Error: ${text}` : text });
        break;
      }
      case 'tool_use':
        toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
        break;
      case 'thinking':
      case 'redacted_thinking':
        if (message.role === 'assistant') break;
        throw unsupported(`${blockParam}.type`, `${block.type} blocks in user turns`);
      default:
        throw unsupported(`${blockParam}.type`, `content blocks of type ${JSON.stringify(block.type)}`);
    }
  });
  if (message.role === 'user') {
    if (parts.length) out.push({ role: 'user', content: parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts });
    return out;
  }
  const assistant: Record<string, unknown> = { role: 'assistant', content: parts.length ? joinText(parts) : null };
  if (toolCalls.length) assistant.tool_calls = toolCalls;
  return [assistant];
}

const joinText = (parts: Record<string, unknown>[]) => parts.map((part) => part.text).join('');
