import type { IgnoredParams } from './ignored-params';
import { invalid, isObject, present, type Fields } from './translation-checks';

/**
 * Prompt-cache breakpoints across wire formats (CONTRACT section 16). Anthropic's clients
 * mark them `cache_control: {type: "ephemeral"}` on blocks; OpenAI-format clients (as
 * OpenRouter taught them) put the same object on a chat message or on a content part. A
 * target that caches by breakpoints gets them in its own form (Anthropic's `cache_control`
 * on the marked block, Bedrock Converse's `cachePoint` block after it); a target that
 * caches prompts on its own (OpenAI, Gemini, Cohere …) has them named as ignored.
 */

/** Anthropic's breakpoint; `ttl` chooses the 5-minute (default) or the 1-hour cache. */
export interface CacheMark {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/** Anthropic refuses a request with more breakpoints than this. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** The mark a chat message or content part carries, checked (a 400 naming it when it is no breakpoint); null for none. */
export function cacheMarkOf(holder: unknown, param: string): CacheMark | null {
  const value = isObject(holder) ? holder.cache_control : undefined;
  if (!present(value)) return null;
  const at = `${param}.cache_control`;
  if (!isObject(value) || value.type !== 'ephemeral') throw invalid(`${at} must be {"type": "ephemeral"}, optionally with "ttl": "5m" or "1h"`, at);
  if (present(value.ttl) && value.ttl !== '5m' && value.ttl !== '1h') throw invalid(`${at}.ttl must be "5m" or "1h"`, `${at}.ttl`);
  return value.ttl ? { type: 'ephemeral', ttl: value.ttl as CacheMark['ttl'] } : { type: 'ephemeral' };
}

const CACHES_ON_ITS_OWN = 'it marks a prompt-cache breakpoint; the provider caches prompts on its own';

/** For a target that caches prompts on its own: every breakpoint of a chat body's messages named as ignored. */
export function ignoreCacheMarks(messages: unknown, ignored: IgnoredParams | undefined): void {
  if (!ignored || !Array.isArray(messages)) return;
  messages.forEach((message: unknown, i) => {
    if (!isObject(message)) return;
    if (present(message.cache_control)) ignored.ignore(`messages[${i}].cache_control`, CACHES_ON_ITS_OWN);
    if (Array.isArray(message.content))
      message.content.forEach((part: unknown, j) => {
        if (isObject(part) && present(part.cache_control)) ignored.ignore(`messages[${i}].content[${j}].cache_control`, CACHES_ON_ITS_OWN);
      });
  });
}

/** Whether an Anthropic Messages body marks any breakpoint (on the body, its system, tools or message blocks). */
export function hasAnthropicBreakpoints(body: Fields): boolean {
  const marked = (value: unknown) => isObject(value) && present(value.cache_control);
  const blocks = (content: unknown) => (Array.isArray(content) ? content.some(marked) : false);
  if (present(body.cache_control) || blocks(body.system)) return true;
  if (Array.isArray(body.tools) && body.tools.some(marked)) return true;
  return Array.isArray(body.messages) && body.messages.some((message: unknown) => isObject(message) && blocks(message.content));
}

/**
 * A config's `cache_breakpoints: "auto"` for an Anthropic Messages body that marks none: the
 * last tool, the end of the system prompt and the end of the conversation so far, the three
 * prefixes an agent resends every turn (Anthropic reads the longest cached prefix). The
 * body is copied where it changes, never written in place.
 */
export function withAutoBreakpoints(body: Fields): Fields {
  if (hasAnthropicBreakpoints(body)) return body;
  const mark: CacheMark = { type: 'ephemeral' };
  const out: Fields = { ...body };
  if (Array.isArray(body.tools) && body.tools.length) {
    const tools: unknown[] = [...(body.tools as unknown[])];
    const last: unknown = tools[tools.length - 1];
    if (isObject(last)) tools[tools.length - 1] = { ...last, cache_control: mark };
    out.tools = tools;
  }
  if (typeof body.system === 'string' && body.system) out.system = [{ type: 'text', text: body.system, cache_control: mark }];
  else if (Array.isArray(body.system) && body.system.length) out.system = markLastBlock(body.system, mark);
  if (Array.isArray(body.messages) && body.messages.length) {
    const messages: unknown[] = [...(body.messages as unknown[])];
    const last: unknown = messages[messages.length - 1];
    if (isObject(last)) {
      const content = typeof last.content === 'string' ? (last.content ? [{ type: 'text', text: last.content }] : []) : last.content;
      if (Array.isArray(content) && content.length) messages[messages.length - 1] = { ...last, content: markLastBlock(content, mark) };
    }
    out.messages = messages;
  }
  return out;
}

/** The blocks with `mark` on the last one (a copy); a last block Anthropic cannot mark (thinking) leaves them as they are. */
function markLastBlock(blocks: unknown[], mark: CacheMark): unknown[] {
  const last: unknown = blocks[blocks.length - 1];
  if (!isObject(last) || last.type === 'thinking' || last.type === 'redacted_thinking') return blocks;
  return [...blocks.slice(0, -1), { ...last, cache_control: mark }];
}
