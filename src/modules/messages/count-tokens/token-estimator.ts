import { countTokens } from 'gpt-tokenizer/cjs/encoding/o200k_base';

/**
 * An estimate of the input tokens of a Messages API request, for providers that cannot
 * count them (`POST /v1/messages/count_tokens` answers it with `"estimated": true`).
 *
 * The text is counted with o200k_base, the encoding of OpenAI's current models (GPT-4o
 * and later): exact for them before framing, and within some percent for other vendors'
 * BPE tokenizers on prose and code. Around the text, the framing OpenAI documents for
 * chat ("How to count tokens with tiktoken", OpenAI cookbook):
 *   - MESSAGE_OVERHEAD per message, the system prompt counting as one: the tokens that
 *     open and close a turn and name its role;
 *   - REPLY_PRIMING once: the tokens that open the assistant's reply;
 *   - TOOL_OVERHEAD per tool definition, on top of its name, description and schema
 *     (tokenized as JSON: the vendors render schemas in their own syntaxes, close in size).
 * Blocks without text are counted at a flat rate rather than as nothing: an image or a
 * binary document as IMAGE_TOKENS, about what Anthropic charges for an image at its
 * full 1.15-megapixel size (its formula is width × height / 750). Thinking blocks of
 * earlier turns count nothing, as at Anthropic. A block of a type this file does not
 * know is counted as its JSON, so nothing sent is left out.
 */
export const MESSAGE_OVERHEAD = 3;
export const REPLY_PRIMING = 3;
export const TOOL_OVERHEAD = 8;
export const IMAGE_TOKENS = 1600;

type Block = Record<string, unknown>;

/** Special tokens (`<|endoftext|>` …) in a client's text are text: counted, never refused. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export function textTokens(text: string): number {
  return text ? countTokens(text, PLAIN_TEXT) : 0;
}

const isObject = (value: unknown): value is Block => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Any value's JSON, counted (tool inputs, unknown blocks, a non-string where text was expected). */
function jsonTokens(value: unknown): number {
  if (value === undefined || value === null) return 0;
  return textTokens(typeof value === 'string' ? value : JSON.stringify(value));
}

/** A content block's tokens. */
export function blockTokens(block: unknown): number {
  if (typeof block === 'string') return textTokens(block);
  if (!isObject(block)) return jsonTokens(block);
  switch (block.type) {
    case 'text':
      return jsonTokens(block.text);
    case 'thinking':
    case 'redacted_thinking':
      return 0;
    case 'image':
      return IMAGE_TOKENS;
    case 'document':
      return documentTokens(block.source);
    case 'tool_use':
    case 'server_tool_use':
    case 'mcp_tool_use':
      return jsonTokens(block.name) + jsonTokens(block.input);
    case 'tool_result':
    case 'mcp_tool_result':
      return contentTokens(block.content);
    default:
      return jsonTokens(block);
  }
}

/** A document's text where it has one (a plain-text or content source), else the flat rate of a binary file. */
function documentTokens(source: unknown): number {
  if (!isObject(source)) return IMAGE_TOKENS;
  if (source.type === 'text') return jsonTokens(source.data);
  if (source.type === 'content') return contentTokens(source.content);
  return IMAGE_TOKENS;
}

/** A message's or a tool result's content: a string or a list of blocks. */
export function contentTokens(content: unknown): number {
  if (Array.isArray(content)) return content.reduce((sum: number, block) => sum + blockTokens(block), 0);
  return typeof content === 'string' ? textTokens(content) : jsonTokens(content);
}

/** A tool definition: what the model reads of it (name, description, schema; a server tool's whole definition). */
function toolTokens(tool: unknown): number {
  if (!isObject(tool)) return TOOL_OVERHEAD + jsonTokens(tool);
  const { cache_control: _hint, ...read } = tool;
  return TOOL_OVERHEAD + jsonTokens(read);
}

/**
 * The estimated input tokens of a count_tokens body: `system`, `messages` (validated as an
 * array; anything inside is counted as best it can be, never refused) and `tools`.
 */
export function estimateInputTokens(body: Record<string, unknown>): number {
  let total = REPLY_PRIMING;
  const system = body.system;
  if (system !== undefined && system !== null && system !== '' && !(Array.isArray(system) && system.length === 0)) {
    total += MESSAGE_OVERHEAD + contentTokens(system);
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const message of messages) {
    total += MESSAGE_OVERHEAD + (isObject(message) ? contentTokens(message.content) : jsonTokens(message));
  }
  if (Array.isArray(body.tools)) total += body.tools.reduce((sum: number, tool) => sum + toolTokens(tool), 0);
  return total;
}
