import { argsText, Conversation, imagePart, isObject, Message, Part, str, toolNames } from './model';

/** Anthropic messages: `system` and `messages` in, a `message` of content blocks out. */
export function readAnthropic(request: unknown, response: unknown): Conversation | null {
  const turns = isObject(request) && Array.isArray(request.messages) ? request.messages.filter(isObject) : null;
  const answer = isObject(response) && response.type === 'message' && Array.isArray(response.content) ? response : null;
  if (!turns && !answer) return null;
  const messages: Message[] = [];
  const system = isObject(request) ? request.system : undefined;
  if (system !== undefined && system !== null) messages.push({ role: 'system', parts: blocks(system) });
  for (const turn of turns ?? []) {
    const parts = blocks(turn.content);
    // A user turn of tool results only is the tools speaking.
    const role = turn.role === 'user' && parts.length > 0 && parts.every((part) => part.type === 'tool_result') ? 'tool' : (str(turn.role) ?? 'unknown');
    messages.push({ role, parts });
  }
  return {
    format: 'Anthropic messages',
    messages,
    tools: isObject(request) ? toolNames(request.tools) : [],
    answers: answer ? [{ role: 'assistant', parts: blocks(answer.content) }] : [],
    finish: answer ? str(answer.stop_reason) : null,
  };
}

function blocks(content: unknown): Part[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.map((block): Part => {
    if (!isObject(block)) return { type: 'text', text: String(block) };
    switch (block.type) {
      case 'text':
        return { type: 'text', text: str(block.text) ?? '' };
      case 'thinking':
        return { type: 'thinking', text: str(block.thinking) ?? '' };
      case 'redacted_thinking':
        return { type: 'thinking', text: '(redacted by the provider)' };
      case 'image': {
        const source = isObject(block.source) ? block.source : {};
        if (source.type === 'base64') return imagePart(`data:${str(source.media_type) ?? 'image/png'};base64,${str(source.data) ?? ''}`);
        return imagePart(source.url);
      }
      case 'tool_use':
      case 'server_tool_use':
      case 'mcp_tool_use':
        return { type: 'tool_call', id: str(block.id), name: str(block.name) ?? 'tool', args: argsText(block.input) };
      case 'tool_result':
      case 'mcp_tool_result':
        return { type: 'tool_result', id: str(block.tool_use_id), name: null, parts: blocks(block.content), isError: block.is_error === true };
      default:
        return { type: 'other', label: str(block.type) ?? 'block', value: block };
    }
  });
}
