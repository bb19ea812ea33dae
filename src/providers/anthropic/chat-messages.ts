import { GatewayError } from '../../common/errors/gateway-error';

type Block = Record<string, unknown>;
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

const unsupported = (param: string, what = param) => GatewayError.invalidRequest(`Provider anthropic does not support ${what}`, param);
const invalid = (message: string, param: string) => GatewayError.invalidRequest(message, param);

/** An image URL as Anthropic's image source: base64 for a data URL, a URL source otherwise. */
function imageBlock(url: unknown, param: string): Block {
  if (typeof url !== 'string') throw invalid(`${param} must be a string`, param);
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw invalid(`${param} must be a base64 data URL or an http(s) URL`, param);
}

/** A message's content (a string or parts) as Anthropic content blocks. */
function contentBlocks(content: unknown, param: string, role: string): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (content === null || content === undefined) return [];
  if (!Array.isArray(content)) throw invalid(`${param} must be a string or an array of content parts`, param);
  return content.map((part: any, j) => {
    const partParam = `${param}[${j}]`;
    if (part?.type === 'text' && typeof part.text === 'string') return { type: 'text', text: part.text };
    // An assistant turn echoed back may hold the refusal it was given: it is what the model said.
    if (part?.type === 'refusal' && role === 'assistant' && typeof part.refusal === 'string') return { type: 'text', text: part.refusal };
    if (part?.type === 'image_url' && role === 'user') return imageBlock(part.image_url?.url, `${partParam}.image_url.url`);
    throw unsupported(`${partParam}.type`, `content parts of type ${JSON.stringify(part?.type)} in ${role} messages (${partParam}.type)`);
  });
}

/** Text of a system or developer message; Anthropic has one system prompt, outside the turns. */
function systemText(content: unknown, param: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.every((part: any) => part?.type === 'text' && typeof part.text === 'string')) {
    return content.map((part: any) => part.text).join('\n');
  }
  throw invalid(`${param} must be a string or an array of text parts`, param);
}

function toolUseBlocks(calls: unknown, param: string): Block[] {
  if (!Array.isArray(calls)) throw invalid(`${param} must be an array`, param);
  return calls.map((call: any, j) => {
    const callParam = `${param}[${j}]`;
    if (call?.type !== undefined && call.type !== 'function') throw unsupported(`${callParam}.type`, `tool calls of type ${JSON.stringify(call.type)}`);
    if (typeof call?.id !== 'string' || typeof call.function?.name !== 'string') throw invalid(`${callParam} must have an id and a function name`, callParam);
    let input: unknown;
    try {
      input = JSON.parse(call.function.arguments || '{}');
    } catch {
      throw invalid(`${callParam}.function.arguments must be a JSON object`, `${callParam}.function.arguments`);
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid(`${callParam}.function.arguments must be a JSON object`, `${callParam}.function.arguments`);
    return { type: 'tool_use', id: call.id, name: call.function.name, input };
  });
}

/**
 * OpenAI's messages as Anthropic's `system` and turns. Tool results are user turns in
 * Anthropic's format, and its turns must alternate, so consecutive messages of one
 * role (a run of tool results and the user message after them) merge into one turn.
 */
export function toAnthropicMessages(messages: unknown): { system?: string; messages: AnthropicMessage[] } {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  const system: string[] = [];
  const turns: AnthropicMessage[] = [];
  const append = (role: AnthropicMessage['role'], blocks: Block[]) => {
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  messages.forEach((message: any, i) => {
    const param = `messages[${i}]`;
    switch (message?.role) {
      case 'system':
      case 'developer':
        system.push(systemText(message.content, `${param}.content`));
        break;
      case 'user':
        append('user', contentBlocks(message.content, `${param}.content`, 'user'));
        break;
      case 'assistant': {
        const blocks = contentBlocks(message.content, `${param}.content`, 'assistant');
        if (message.tool_calls !== undefined && message.tool_calls !== null) blocks.push(...toolUseBlocks(message.tool_calls, `${param}.tool_calls`));
        append('assistant', blocks);
        break;
      }
      case 'tool': {
        if (typeof message.tool_call_id !== 'string') throw invalid(`${param}.tool_call_id must be a string`, `${param}.tool_call_id`);
        const content = typeof message.content === 'string' ? message.content : contentBlocks(message.content, `${param}.content`, 'tool');
        append('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content }]);
        break;
      }
      default:
        throw invalid(`${param}.role must be one of system, developer, user, assistant, tool`, `${param}.role`);
    }
  });
  // Anthropic refuses empty turns; an assistant turn with neither text nor tool calls says nothing.
  const nonEmpty = turns.filter((turn) => turn.content.length > 0);
  if (nonEmpty.length === 0) throw invalid('messages must hold at least one user or assistant message with content', 'messages');
  return { ...(system.length ? { system: system.join('\n\n') } : {}), messages: nonEmpty };
}
