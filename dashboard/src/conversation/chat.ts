import { argsText, Conversation, imagePart, isObject, Message, Part, str, toolNames } from './model';

/** OpenAI chat completions: `messages` in, `choices[].message` out (a stream's log holds the assembled completion). */
export function readChat(request: unknown, response: unknown): Conversation | null {
  const messages = isObject(request) && Array.isArray(request.messages) ? request.messages.filter(isObject).map(chatMessage) : null;
  const choices = isObject(response) && Array.isArray(response.choices) ? response.choices.filter(isObject) : null;
  if (!messages && !choices) return null;
  return {
    format: 'chat completions',
    messages: messages ?? [],
    tools: isObject(request) ? toolNames(request.tools ?? request.functions) : [],
    answers: (choices ?? []).filter((choice) => isObject(choice.message)).map((choice) => chatMessage(choice.message as Record<string, unknown>)),
    finish: str(choices?.[0]?.finish_reason),
  };
}

function chatMessage(message: Record<string, unknown>): Message {
  const role = str(message.role) ?? 'unknown';
  const parts: Part[] = [];
  // Reasoning some vendors return beside the content (DeepSeek, vLLM, OpenRouter).
  const reasoning = str(message.reasoning_content) ?? str(message.reasoning);
  if (reasoning) parts.push({ type: 'thinking', text: reasoning });
  const content = contentParts(message.content);
  if (role === 'tool' || role === 'function') {
    return { role: 'tool', parts: [{ type: 'tool_result', id: str(message.tool_call_id), name: str(message.name), parts: content, isError: false }] };
  }
  parts.push(...content);
  if (str(message.refusal)) parts.push({ type: 'text', text: message.refusal as string, refusal: true });
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls.filter(isObject)) {
      const fn = isObject(call.function) ? call.function : isObject(call.custom) ? call.custom : {};
      parts.push({ type: 'tool_call', id: str(call.id), name: str(fn.name) ?? str(call.type) ?? 'tool', args: argsText(fn.arguments ?? fn.input) });
    }
  }
  if (isObject(message.function_call))
    parts.push({ type: 'tool_call', id: null, name: str(message.function_call.name) ?? 'function', args: argsText(message.function_call.arguments) });
  return { role, parts, name: str(message.name) };
}

function contentParts(content: unknown): Part[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return content === null || content === undefined ? [] : [{ type: 'other', label: 'content', value: content }];
  return content.map((part): Part => {
    if (!isObject(part)) return { type: 'text', text: String(part) };
    switch (part.type) {
      case 'text':
        return { type: 'text', text: str(part.text) ?? '' };
      case 'refusal':
        return { type: 'text', text: str(part.refusal) ?? '', refusal: true };
      case 'image_url':
        return imagePart(isObject(part.image_url) ? part.image_url.url : part.image_url);
      case 'input_audio':
        return {
          type: 'other',
          label: `audio${isObject(part.input_audio) && str(part.input_audio.format) ? ` (${part.input_audio.format})` : ''}`,
          value: part,
        };
      case 'file':
        return { type: 'other', label: `file${isObject(part.file) && str(part.file.filename) ? ` ${part.file.filename}` : ''}`, value: part };
      default:
        return { type: 'other', label: str(part.type) ?? 'part', value: part };
    }
  });
}
