import { readToolCall } from '../openai-tool-calls';
import { chatMessage, type Fields, fieldOf, invalid, isObject, unsupportedBy } from '../translation-checks';

type Part = Record<string, unknown>;
export interface GeminiContent {
  role: 'user' | 'model';
  parts: Part[];
}

const unsupported = unsupportedBy('google');

/** Image types Gemini reads from a URL, by the URL's file extension (Gemini needs the type). */
const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
};
const AUDIO_TYPES: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };

/** `data:<type>;base64,<data>` as Gemini's inline data; null for any other URL. */
function inlineData(url: string): Part | null {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { inlineData: { mimeType: match[1], data: match[2] } } : null;
}

function imagePart(url: unknown, param: string): Part {
  if (typeof url !== 'string') throw invalid(`${param} must be a string`, param);
  if (url.startsWith('data:')) {
    const part = inlineData(url);
    if (!part) throw invalid(`${param} must be a base64 data URL or an http(s) URL`, param);
    return part;
  }
  let path: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(parsed.protocol);
    path = parsed.pathname;
  } catch {
    throw invalid(`${param} must be a base64 data URL or an http(s) URL`, param);
  }
  const extension = path.includes('.') ? path.slice(path.lastIndexOf('.') + 1).toLowerCase() : '';
  const mimeType = Object.hasOwn(IMAGE_TYPES, extension) ? IMAGE_TYPES[extension] : undefined;
  if (!mimeType) {
    throw invalid(`Provider google needs the image type of ${param}: use a .png, .jpeg, .jpg, .webp, .gif or .heic URL, or a data URL`, param);
  }
  return { fileData: { mimeType, fileUri: url } };
}

/** One part of a message's content array. `detail` is a resolution hint Gemini chooses for itself. */
function contentPart(value: unknown, param: string, role: string): Part {
  const part: Fields = isObject(value) ? value : {};
  const type = part.type;
  if (type === 'text' && typeof part.text === 'string') return { text: part.text };
  // An assistant turn the client echoes back may hold the refusal it was given: it is what the model said.
  if (type === 'refusal' && role === 'assistant' && typeof part.refusal === 'string') return { text: part.refusal };
  if (role === 'user') {
    if (type === 'image_url') return imagePart(fieldOf(part.image_url, 'url'), `${param}.image_url.url`);
    if (type === 'input_audio') {
      const format = fieldOf(part.input_audio, 'format');
      const mimeType = typeof format === 'string' && Object.hasOwn(AUDIO_TYPES, format) ? AUDIO_TYPES[format] : undefined;
      if (!mimeType) throw invalid(`${param}.input_audio.format must be wav or mp3`, `${param}.input_audio.format`);
      const data = fieldOf(part.input_audio, 'data');
      if (typeof data !== 'string') throw invalid(`${param}.input_audio.data must be a string`, `${param}.input_audio.data`);
      return { inlineData: { mimeType, data } };
    }
    // A file sent inline (a PDF) is inline data to Gemini; a file_id names OpenAI's file store, which Gemini cannot read.
    const fileData = fieldOf(part.file, 'file_data');
    if (type === 'file' && typeof fileData === 'string') {
      const inline = inlineData(fileData);
      if (inline) return inline;
      throw invalid(`${param}.file.file_data must be a base64 data URL`, `${param}.file.file_data`);
    }
    if (type === 'file') throw unsupported(`${param}.file.file_id`);
  }
  throw unsupported(`${param}.type`, `content parts of type ${JSON.stringify(type)} in ${role} messages (${param}.type)`);
}

function contentParts(content: unknown, param: string, role: string): Part[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) throw invalid(`${param} must be a string or an array of content parts`, param);
  return content.map((part, j) => contentPart(part, `${param}[${j}]`, role));
}

/** The text of a tool result (a string or text parts), as the function's response. */
function functionResponse(name: string, content: unknown, param: string): Part {
  const text = contentParts(content, param, 'tool')
    .map((part) => part.text as string)
    .join('');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  // Gemini's `response` must be an object: a JSON object result is given as is, anything else as text.
  const result = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : text;
  return { functionResponse: { name, response: { content: result } } };
}

/**
 * A system message in the middle of the conversation (Claude Code sends reminders and
 * tool notices so) as a user turn's part, at its place, marked as the system's. Moved
 * into the system instruction it would apply from the first turn on and lose its
 * order against the turns around it ("plan mode is on" ... "plan mode is off" would
 * both stand at the top, contradicting each other); left at its place it says what
 * held from then on, and the mark keeps the model from taking it for the user's words.
 */
function midConversationSystemParts(parts: Part[]): Part[] {
  return parts.map((part) => (typeof part.text === 'string' ? { text: `System message: ${part.text}` } : part));
}

/**
 * OpenAI messages as Gemini `contents` and `systemInstruction`. Gemini has one system
 * instruction: the system and developer messages before the first turn join it, in
 * order; a later one becomes part of a user turn at its place (see
 * midConversationSystemParts). A tool
 * result names its call by id, Gemini by function name: the name comes from the
 * assistant message that made the call. Gemini wants turns to alternate, and the
 * results of parallel calls in one turn, so consecutive turns of one role merge.
 */
export function toGeminiContents(messages: unknown): { contents: GeminiContent[]; systemInstruction?: { parts: Part[] } } {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  const system: Part[] = [];
  const contents: GeminiContent[] = [];
  const callNames = new Map<string, string>();
  const push = (role: GeminiContent['role'], parts: Part[]) => {
    if (!parts.length) return;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((value: unknown, i) => {
    const message = chatMessage(value, i, unsupported);
    const { role } = message;
    const param = `messages[${i}].content`;
    if ((role === 'system' || role === 'developer') && !contents.length) {
      system.push(...contentParts(message.content, param, role));
    } else if (role === 'system' || role === 'developer') {
      push('user', midConversationSystemParts(contentParts(message.content, param, role)));
    } else if (role === 'user') {
      push('user', contentParts(message.content, param, role));
    } else if (role === 'assistant') {
      const parts = contentParts(message.content, param, role);
      if (typeof message.refusal === 'string' && message.refusal) parts.push({ text: message.refusal });
      push('model', [...parts, ...functionCalls(message.tool_calls, i, callNames)]);
    } else {
      const name = callNames.get(message.tool_call_id);
      if (!name) throw invalid(`messages[${i}].tool_call_id does not match a tool call of an earlier assistant message`, `messages[${i}].tool_call_id`);
      push('user', [functionResponse(name, message.content, param)]);
    }
  });
  return system.length ? { contents, systemInstruction: { parts: system } } : { contents };
}

/** An assistant's tool calls as function calls, noting each call's function name by id. */
function functionCalls(toolCalls: unknown, i: number, callNames: Map<string, string>): Part[] {
  if (toolCalls === null || toolCalls === undefined) return [];
  if (!Array.isArray(toolCalls)) throw invalid(`messages[${i}].tool_calls must be an array`, `messages[${i}].tool_calls`);
  return toolCalls.map((call: unknown, j) => {
    const { id, name, args } = readToolCall(call, `messages[${i}].tool_calls[${j}]`, 'google');
    if (id) callNames.set(id, name);
    return { functionCall: { name, args } };
  });
}
