import { argsText, Conversation, imagePart, isObject, Message, Part, str } from './model';

/** Gemini: `systemInstruction` and `contents` in, a GenerateContentResponse of candidates out. */
export function readGemini(request: unknown, response: unknown): Conversation | null {
  const turns = isObject(request) && Array.isArray(request.contents) ? request.contents.filter(isObject) : null;
  const candidates = isObject(response) && Array.isArray(response.candidates) ? response.candidates.filter(isObject) : null;
  if (!turns && !candidates) return null;
  const messages: Message[] = [];
  const system = isObject(request) ? (request.systemInstruction ?? request.system_instruction) : undefined;
  if (typeof system === 'string' && system) messages.push({ role: 'system', parts: [{ type: 'text', text: system }] });
  else if (isObject(system)) messages.push({ role: 'system', parts: parts(system.parts) });
  for (const turn of turns ?? []) {
    const read = parts(turn.parts);
    // A user turn of function responses only is the tools speaking.
    const role =
      read.length > 0 && read.every((part) => part.type === 'tool_result') ? 'tool' : turn.role === 'model' ? 'assistant' : (str(turn.role) ?? 'user');
    messages.push({ role, parts: read });
  }
  const tools = isObject(request) && Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  return {
    format: 'Gemini',
    messages,
    tools: tools.flatMap((tool) =>
      Array.isArray(tool.functionDeclarations)
        ? tool.functionDeclarations.filter(isObject).map((declaration) => str(declaration.name) ?? 'function')
        : Object.keys(tool),
    ),
    answers: (candidates ?? []).map((candidate) => ({ role: 'assistant', parts: parts(isObject(candidate.content) ? candidate.content.parts : undefined) })),
    finish: candidates?.length ? str(candidates[0].finishReason) : null,
  };
}

function parts(list: unknown): Part[] {
  if (!Array.isArray(list)) return [];
  return list.map((part): Part => {
    if (!isObject(part)) return { type: 'text', text: String(part) };
    if (typeof part.text === 'string') return part.thought === true ? { type: 'thinking', text: part.text } : { type: 'text', text: part.text };
    if (isObject(part.functionCall))
      return { type: 'tool_call', id: str(part.functionCall.id), name: str(part.functionCall.name) ?? 'function', args: argsText(part.functionCall.args) };
    if (isObject(part.functionResponse)) {
      const answer = part.functionResponse;
      return { type: 'tool_result', id: str(answer.id), name: str(answer.name), parts: [{ type: 'text', text: argsText(answer.response) }], isError: false };
    }
    if (isObject(part.inlineData) && str(part.inlineData.mimeType)?.startsWith('image/'))
      return imagePart(`data:${str(part.inlineData.mimeType)};base64,${str(part.inlineData.data) ?? ''}`);
    if (isObject(part.fileData)) return { type: 'other', label: str(part.fileData.mimeType) ?? 'file', value: part.fileData };
    return { type: 'other', label: Object.keys(part)[0] ?? 'part', value: part };
  });
}
