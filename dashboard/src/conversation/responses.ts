import { argsText, Conversation, imagePart, isObject, Message, Part, pushMerged, str, toolNames } from './model';

/** OpenAI Responses: `instructions` and `input` items in, `output` items out. */
export function readResponses(request: unknown, response: unknown): Conversation | null {
  const input = isObject(request) ? request.input : undefined;
  const answer = isObject(response) && response.object === 'response' ? response : null;
  if (input === undefined && !answer) return null;
  const messages: Message[] = [];
  const instructions = isObject(request) ? str(request.instructions) : null;
  if (instructions) messages.push({ role: 'system', parts: [{ type: 'text', text: instructions }] });
  if (typeof input === 'string') messages.push({ role: 'user', parts: [{ type: 'text', text: input }] });
  else if (Array.isArray(input)) for (const item of input.filter(isObject)) pushMerged(messages, itemMessage(item));
  const output: Message[] = [];
  if (answer && Array.isArray(answer.output)) for (const item of answer.output.filter(isObject)) pushMerged(output, itemMessage(item));
  const incomplete = answer && isObject(answer.incomplete_details) ? str(answer.incomplete_details.reason) : null;
  return {
    format: 'Responses',
    messages,
    tools: isObject(request) ? toolNames(request.tools) : [],
    // The output's items are one answer, however many messages and calls it holds.
    answers: output.length ? [{ role: 'assistant', parts: output.flatMap((message) => message.parts) }] : [],
    finish: answer ? [str(answer.status), incomplete].filter(Boolean).join(': ') || null : null,
  };
}

function itemMessage(item: Record<string, unknown>): Message {
  switch (item.type ?? (item.role ? 'message' : undefined)) {
    case 'message':
      return { role: str(item.role) ?? 'unknown', parts: contentParts(item.content) };
    case 'function_call':
    case 'custom_tool_call':
      return {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: str(item.call_id), name: str(item.name) ?? 'tool', args: argsText(item.arguments ?? item.input) }],
      };
    case 'function_call_output':
    case 'custom_tool_call_output':
      return { role: 'tool', parts: [{ type: 'tool_result', id: str(item.call_id), name: null, parts: contentParts(item.output), isError: false }] };
    case 'mcp_call':
      return {
        role: 'assistant',
        parts: [
          { type: 'tool_call', id: str(item.id), name: `${str(item.server_label) ?? 'mcp'}: ${str(item.name) ?? 'tool'}`, args: argsText(item.arguments) },
          {
            type: 'tool_result',
            id: str(item.id),
            name: null,
            parts: contentParts(item.output ?? item.error),
            isError: item.error !== null && item.error !== undefined,
          },
        ],
      };
    case 'reasoning': {
      const summary = Array.isArray(item.summary) ? item.summary.filter(isObject).map((part) => str(part.text) ?? '') : [];
      return {
        role: 'assistant',
        parts: summary.length ? summary.map((text) => ({ type: 'thinking', text })) : [{ type: 'thinking', text: '(reasoning not shown by the provider)' }],
      };
    }
    default:
      return { role: 'assistant', parts: [{ type: 'other', label: str(item.type) ?? 'item', value: item }] };
  }
}

function contentParts(content: unknown): Part[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return content === null || content === undefined ? [] : [{ type: 'other', label: 'output', value: content }];
  return content.map((part): Part => {
    if (!isObject(part)) return { type: 'text', text: String(part) };
    switch (part.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        return { type: 'text', text: str(part.text) ?? '' };
      case 'refusal':
        return { type: 'text', text: str(part.refusal) ?? '', refusal: true };
      case 'input_image':
        return part.image_url ? imagePart(part.image_url) : { type: 'other', label: 'image (file)', value: part };
      case 'input_file':
        return { type: 'other', label: `file${str(part.filename) ? ` ${part.filename}` : ''}`, value: part };
      default:
        return { type: 'other', label: str(part.type) ?? 'part', value: part };
    }
  });
}
