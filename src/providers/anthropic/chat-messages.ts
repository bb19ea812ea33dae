import { readToolCall } from '../openai-tool-calls';
import type { ChatToolMessage } from '../chat-format';
import { cacheMarkOf, type CacheMark } from '../prompt-cache';
import { chatMessage, type Fields, fieldOf, invalid, isObject, unsupportedBy } from '../translation-checks';

type Block = Record<string, unknown>;
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}
/** Anthropic's top-level `system`: a string, or text blocks when the client sent content parts. */
export type AnthropicSystem = string | Block[];

const unsupported = unsupportedBy('anthropic');

/**
 * A block with the part's `cache_control` kept: OpenAI's format has no prompt caching,
 * and Anthropic's marker on a content part is how OpenAI-format clients ask for it.
 */
function block(fields: Block, part: Record<string, unknown>, param: string): Block {
  const mark = cacheMarkOf(part, param);
  return mark ? { ...fields, cache_control: mark } : fields;
}

/** A message's own breakpoint (`messages[i].cache_control`) on the last block it became: the prefix up to it is cached. */
function markLast(blocks: Block[], mark: CacheMark | null): Block[] {
  if (mark && blocks.length) blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: mark };
  return blocks;
}

/** An image URL as Anthropic's image source: base64 for a data URL, a URL source for http(s). */
function imageSource(url: unknown, param: string): Block {
  if (typeof url !== 'string') throw invalid(`${param} must be a string`, param);
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { type: 'base64', media_type: data[1], data: data[2] };
  if (/^https?:\/\//i.test(url)) return { type: 'url', url };
  throw invalid(`${param} must be a base64 data URL or an http(s) URL`, param);
}

/**
 * One part of a message's content array; null for empty text, which Anthropic refuses as
 * a block. `detail` on an image is a resolution hint Anthropic chooses for itself.
 */
function contentBlock(value: unknown, param: string, role: string): Block | null {
  const part: Fields = isObject(value) ? value : {};
  const type = part.type;
  if (type === 'text' && typeof part.text === 'string') return part.text ? block({ type: 'text', text: part.text }, part, param) : null;
  // An assistant turn echoed back may hold the refusal it was given: it is what the model said.
  if (type === 'refusal' && role === 'assistant' && typeof part.refusal === 'string') return part.refusal ? { type: 'text', text: part.refusal } : null;
  if (type === 'image_url' && role === 'user')
    return block({ type: 'image', source: imageSource(fieldOf(part.image_url, 'url'), `${param}.image_url.url`) }, part, param);
  throw unsupported(`${param}.type`, `content parts of type ${JSON.stringify(type)} in ${role} messages (${param}.type)`);
}

/** A message's content (a string or parts) as Anthropic content blocks. */
function contentBlocks(content: unknown, param: string, role: string): Block[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) throw invalid(`${param} must be a string or an array of content parts`, param);
  return content.map((part, j) => contentBlock(part, `${param}[${j}]`, role)).filter((b): b is Block => b !== null);
}

function toolUseBlocks(calls: unknown, param: string): Block[] {
  if (calls === null || calls === undefined) return [];
  if (!Array.isArray(calls)) throw invalid(`${param} must be an array`, param);
  return calls.map((call: unknown, j) => {
    const callParam = `${param}[${j}]`;
    // Anthropic pairs each tool result with its call by this id.
    const given = fieldOf(call, 'id');
    if (fieldOf(call, 'type') === 'function' && (typeof given !== 'string' || !given)) throw invalid(`${callParam}.id must be a string`, `${callParam}.id`);
    const { id, name, args } = readToolCall(call, callParam, 'anthropic');
    return { type: 'tool_use', id, name, input: args };
  });
}

/** A tool message as a tool result: its text as a string, or its text parts as blocks. */
function toolResult(message: ChatToolMessage, param: string): Block {
  if (typeof message.tool_call_id !== 'string' || !message.tool_call_id) throw invalid(`${param}.tool_call_id must be a string`, `${param}.tool_call_id`);
  const content = typeof message.content === 'string' ? message.content : contentBlocks(message.content, `${param}.content`, 'tool');
  return { type: 'tool_result', tool_use_id: message.tool_call_id, content };
}

/**
 * The one system prompt from every system and developer message, in order: a string
 * when all were strings (joined by blank lines), else text blocks, so that parts stay
 * apart with their `cache_control`.
 */
function systemPrompt(contents: { content: unknown; param: string; mark: CacheMark | null }[]): AnthropicSystem | undefined {
  if (contents.every(({ content, mark }) => typeof content === 'string' && !mark)) {
    const text = contents.map(({ content }) => content as string).filter(Boolean);
    return text.length ? text.join('\n\n') : undefined;
  }
  const blocks = contents.flatMap(({ content, param, mark }) => markLast(contentBlocks(content, param, 'system'), mark));
  return blocks.length ? blocks : undefined;
}

/**
 * OpenAI's messages as Anthropic's `system` and turns. Tool results are user turns in
 * Anthropic's format, and its turns must alternate, so consecutive messages of one
 * role (a run of tool results and the user message after them) merge into one turn;
 * a message with nothing to say (an empty assistant turn) is no turn at all.
 */
export function toAnthropicMessages(messages: unknown): { system?: AnthropicSystem; messages: AnthropicMessage[] } {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  const system: { content: unknown; param: string; mark: CacheMark | null }[] = [];
  const turns: AnthropicMessage[] = [];
  const append = (role: AnthropicMessage['role'], blocks: Block[]) => {
    if (!blocks.length) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };

  messages.forEach((value: unknown, i) => {
    const param = `messages[${i}]`;
    const message = chatMessage(value, i, unsupported);
    const { role } = message;
    const mark = cacheMarkOf(message, param);
    if (role === 'system' || role === 'developer') {
      system.push({ content: message.content ?? '', param: `${param}.content`, mark });
    } else if (role === 'user') {
      append('user', markLast(contentBlocks(message.content, `${param}.content`, role), mark));
    } else if (role === 'assistant') {
      const blocks = contentBlocks(message.content, `${param}.content`, role);
      if (typeof message.refusal === 'string' && message.refusal) blocks.push({ type: 'text', text: message.refusal });
      append('assistant', markLast([...blocks, ...toolUseBlocks(message.tool_calls, `${param}.tool_calls`)], mark));
    } else {
      append('user', markLast([toolResult(message, param)], mark));
    }
  });
  if (!turns.length) throw invalid('messages must hold at least one user or assistant message with content', 'messages');
  const prompt = systemPrompt(system);
  return prompt === undefined ? { messages: turns } : { system: prompt, messages: turns };
}
