import { readToolCall } from '../openai-tool-calls';
import { cacheMarkOf } from '../prompt-cache';
import { chatMessage, type Fields, fieldOf, invalid, isObject, unsupportedBy } from '../translation-checks';

/** One Converse ContentBlock (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html). */
export type ContentBlock = Record<string, unknown>;
export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

const unsupported = unsupportedBy('bedrock');

/** The image formats Converse reads (ImageBlock.format), by data URL media type. */
const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
/** The document formats Converse reads (DocumentBlock.format), by data URL media type. */
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

function dataUrl(url: string): { mediaType: string; data: string } | null {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1].toLowerCase(), data: match[2] } : null;
}

/**
 * An image as Converse image bytes. Converse takes the bytes themselves (base64 in its
 * JSON) or an S3 location, never an http URL: fetching the client's URL would make the
 * gateway a downloader of arbitrary addresses, so only data URLs are read.
 */
function imageBlock(url: unknown, param: string): ContentBlock {
  if (typeof url !== 'string') throw invalid(`${param} must be a string`, param);
  const data = dataUrl(url);
  if (!data) throw invalid(`Provider bedrock reads images only as base64 data URLs (data:image/png;base64,...), not from links (${param})`, param);
  const format = Object.hasOwn(IMAGE_FORMATS, data.mediaType) ? IMAGE_FORMATS[data.mediaType] : undefined;
  if (!format) throw invalid(`${param} must be a png, jpeg, gif or webp image`, param);
  return { image: { format, source: { bytes: data.data } } };
}

/** A file sent inline as a Converse document; its name is required there and must be plain words. */
function documentBlock(file: unknown, param: string, position: number): ContentBlock {
  const fileData = fieldOf(file, 'file_data');
  if (typeof fileData !== 'string') throw unsupported(`${param}.file.file_id`, `files by id (${param}.file.file_id): send file_data`);
  const data = dataUrl(fileData);
  const format = data && Object.hasOwn(DOCUMENT_FORMATS, data.mediaType) ? DOCUMENT_FORMATS[data.mediaType] : undefined;
  if (!data || !format)
    throw invalid(`${param}.file.file_data must be a base64 data URL of a pdf, csv, doc, docx, xls, xlsx, html, txt or md document`, `${param}.file.file_data`);
  // Bedrock allows letters, digits, spaces, hyphens, parentheses and brackets in a document's name.
  const filename = fieldOf(file, 'filename');
  const given =
    typeof filename === 'string'
      ? filename
          .replace(/\.[^.]*$/, '')
          .replace(/[^A-Za-z0-9\s\-()[\]]/g, ' ')
          .trim()
      : '';
  return { document: { format, name: given || `document ${position + 1}`, source: { bytes: data.data } } };
}

/** Converse's prompt-cache breakpoint: the prefix up to the block before it is cached. */
const CACHE_POINT: ContentBlock = { cachePoint: { type: 'default' } };

/** A content part's block, with a cache point after it when the part marks a breakpoint and the model caches. */
function contentBlocks(content: unknown, param: string, role: string, caching = false): ContentBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) throw invalid(`${param} must be a string or an array of content parts`, param);
  return content.flatMap((value: unknown, j) => {
    const where = `${param}[${j}]`;
    const part: Fields = isObject(value) ? value : {};
    const block = contentBlock(part, where, role, j);
    return caching && cacheMarkOf(part, where) ? [block, CACHE_POINT] : [block];
  });
}

function contentBlock(part: Fields, where: string, role: string, position: number): ContentBlock {
  const type = part.type;
  if (type === 'text' && typeof part.text === 'string') return { text: part.text };
  if (type === 'refusal' && role === 'assistant' && typeof part.refusal === 'string') return { text: part.refusal };
  if (role === 'user' && type === 'image_url') return imageBlock(fieldOf(part.image_url, 'url'), `${where}.image_url.url`);
  if (role === 'user' && type === 'file') return documentBlock(part.file, where, position);
  throw unsupported(`${where}.type`, `content parts of type ${JSON.stringify(type)} in ${role} messages (${where}.type)`);
}

/** Models whose Converse takes cache points (Claude, Nova); other models cache on their own or not at all. */
export const cachesByBreakpoint = (model: unknown): boolean => typeof model === 'string' && /anthropic\.claude|amazon\.nova/.test(model);

/**
 * OpenAI messages as Converse `messages` and `system`. The system and developer messages
 * before the first turn are the system blocks; a later one is a user turn's text at its
 * place, marked as the system's (as for Gemini: moved to the top it would lose its order
 * against the turns around it). A tool result is a `toolResult` block of a user turn.
 * Converse wants user and assistant turns to alternate, so consecutive turns of one role
 * merge (the results of parallel calls become one user turn, as Bedrock expects).
 */
export function toConverseMessages(messages: unknown, caching = false): { messages: ConverseMessage[]; system?: ContentBlock[] } {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  const system: ContentBlock[] = [];
  const turns: ConverseMessage[] = [];
  const callIds = new Set<string>();
  const push = (role: ConverseMessage['role'], blocks: ContentBlock[]) => {
    if (!blocks.length) return;
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };

  messages.forEach((value: unknown, i) => {
    const message = chatMessage(value, i, unsupported);
    const { role } = message;
    const param = `messages[${i}].content`;
    // A message's own breakpoint: a cache point after its last block.
    const marked = (blocks: ContentBlock[]) => (caching && blocks.length && cacheMarkOf(message, `messages[${i}]`) ? [...blocks, CACHE_POINT] : blocks);
    if (role === 'system' || role === 'developer') {
      const blocks = contentBlocks(message.content, param, role, caching);
      if (!turns.length) system.push(...marked(blocks));
      else
        push(
          'user',
          blocks.filter((block) => !block.cachePoint).map((block) => ({ text: `System message: ${block.text}` })),
        );
    } else if (role === 'user') {
      push('user', marked(contentBlocks(message.content, param, role, caching)));
    } else if (role === 'assistant') {
      const blocks = contentBlocks(message.content, param, role, caching);
      if (typeof message.refusal === 'string' && message.refusal) blocks.push({ text: message.refusal });
      push('assistant', marked([...blocks, ...toolUses(message.tool_calls, i, callIds)]));
    } else {
      const id = message.tool_call_id;
      if (typeof id !== 'string' || !callIds.has(id)) {
        throw invalid(`messages[${i}].tool_call_id does not match a tool call of an earlier assistant message`, `messages[${i}].tool_call_id`);
      }
      const text = contentBlocks(message.content, param, 'tool');
      push('user', marked([{ toolResult: { toolUseId: id, content: text.length ? text : [{ text: '' }] } }]));
    }
  });
  if (!turns.length) throw invalid('messages must hold at least one user or assistant message besides the system ones', 'messages');
  return system.length ? { messages: turns, system } : { messages: turns };
}

/** An assistant's tool calls as `toolUse` blocks, noting their ids for the results that answer them. */
function toolUses(toolCalls: unknown, i: number, callIds: Set<string>): ContentBlock[] {
  if (toolCalls === null || toolCalls === undefined) return [];
  if (!Array.isArray(toolCalls)) throw invalid(`messages[${i}].tool_calls must be an array`, `messages[${i}].tool_calls`);
  return toolCalls.map((call: unknown, j) => {
    const param = `messages[${i}].tool_calls[${j}]`;
    const { id, name, args } = readToolCall(call, param, 'bedrock');
    if (!id) throw invalid(`${param}.id must be a string`, `${param}.id`);
    callIds.add(id);
    return { toolUse: { toolUseId: id, name, input: args } };
  });
}
