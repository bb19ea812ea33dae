import { GatewayError } from '../../../common/errors/gateway-error';
import type { ChatCompletionBody, ChatContentPart, ChatMessage, ChatTool, ChatToolCall, ChatToolChoice } from '../../../providers/chat-format';
import { IgnoredParams } from '../../../providers/ignored-params';
import { effortForAnthropicBudget } from '../../../providers/reasoning-effort';
import { finiteNumber, integer, invalid, isObject, present, type Fields } from '../../../providers/translation-checks';

/**
 * A Gemini `generateContent` request as an OpenAI chat body, for a provider reached through
 * chat completions (every provider but Gemini itself). Google's parser takes each field in
 * lowerCamelCase or snake_case, and so does this one. What chat can carry is mapped; what
 * only tunes Gemini's own serving (safety settings, media resolution, labels) is named as
 * ignored; what would change the answer and has no chat counterpart (cached content,
 * Google's built-in tools, audio output …) is a 400 naming the field.
 */

/** Who the bridge is translating for: the provider (named in refusals) and where ignored fields are noted. */
interface Bridge {
  provider: string;
  ignored: IgnoredParams;
}

type ChatDraft = Partial<ChatCompletionBody>;

const unsupported = (provider: string, param: string) =>
  GatewayError.invalidRequest(
    `${param} needs a provider that speaks Gemini's API; provider ${provider} is reached through chat completions, which cannot carry it`,
    param,
  );

/** `snake_case` → `lowerCamelCase`, as Google's JSON parser reads both. */
const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** An object's fields under their lowerCamelCase names. */
function camelFields(value: Fields): Fields {
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [camel(key), inner]));
}

/** OpenAI's own models take only `max_completion_tokens` when they reason; other chat providers know `max_tokens`. */
const MAX_COMPLETION_TOKENS_PROVIDERS = new Set(['openai', 'azure-openai']);

const SAFETY = 'it tunes Google’s safety filters; the provider applies its own';

/** Each GenerateContentRequest field: mapped, ignored or refused. `contents`, `systemInstruction`, `tools`, `toolConfig` are read together below. */
const FIELDS: Record<string, (value: unknown, chat: ChatDraft, bridge: Bridge) => void> = {
  model: (value, chat) => (chat.model = value as string),
  stream: (value, chat) => {
    if (value !== true) return;
    chat.stream = true;
    // The usage of a stream comes, in its last chunk, only when asked for: the gateway bills by it.
    chat.stream_options = { include_usage: true };
  },
  contents: () => undefined,
  systemInstruction: () => undefined,
  tools: () => undefined,
  toolConfig: () => undefined,
  generationConfig: (value, chat, bridge) => generationConfig(value, chat, bridge),
  safetySettings: (_value, _chat, { ignored }) => ignored.ignore('safetySettings', SAFETY),
  labels: (_value, _chat, { ignored }) => ignored.ignore('labels', 'they label billing at Google Cloud'),
};

/** `generationConfig`: sampling, length, stops, candidates, JSON mode and thinking. */
function generationConfig(value: unknown, chat: ChatDraft, bridge: Bridge): void {
  if (!isObject(value)) throw invalid('generationConfig must be an object', 'generationConfig');
  const config = camelFields(value);
  const at = (field: string) => `generationConfig.${field}`;
  for (const [field, inner] of Object.entries(config)) {
    if (!present(inner)) continue;
    switch (field) {
      case 'temperature':
      case 'topP':
      case 'presencePenalty':
      case 'frequencyPenalty': {
        const name = { temperature: 'temperature', topP: 'top_p', presencePenalty: 'presence_penalty', frequencyPenalty: 'frequency_penalty' }[field];
        chat[name] = finiteNumber(inner, at(field));
        break;
      }
      case 'seed':
        chat.seed = integer(inner, at(field));
        break;
      case 'maxOutputTokens':
        chat[MAX_COMPLETION_TOKENS_PROVIDERS.has(bridge.provider) ? 'max_completion_tokens' : 'max_tokens'] = integer(inner, at(field));
        break;
      case 'candidateCount':
        {
          const candidates = integer(inner, at(field));
          if (candidates !== 1) chat.n = candidates;
        }
        break;
      case 'stopSequences':
        if (!Array.isArray(inner) || !inner.every((stop) => typeof stop === 'string')) throw invalid(`${at(field)} must be an array of strings`, at(field));
        if (inner.length) chat.stop = inner;
        break;
      case 'responseLogprobs':
        if (inner === true) chat.logprobs = true;
        break;
      case 'logprobs':
        chat.top_logprobs = integer(inner, at(field));
        break;
      case 'responseMimeType':
        if (inner === 'application/json') chat.response_format ??= { type: 'json_object' };
        else if (inner !== 'text/plain') throw unsupported(bridge.provider, `${at(field)} ${JSON.stringify(inner)}`);
        break;
      case 'responseSchema':
      case 'responseJsonSchema':
        if (!isObject(inner)) throw invalid(`${at(field)} must be an object`, at(field));
        chat.response_format = {
          type: 'json_schema',
          json_schema: { name: 'response', schema: field === 'responseSchema' ? jsonSchema(inner) : inner },
        };
        break;
      case 'thinkingConfig':
        thinkingConfig(inner, chat);
        break;
      case 'responseModalities':
        if (!Array.isArray(inner) || inner.some((modality) => modality !== 'TEXT')) throw unsupported(bridge.provider, at(field));
        break;
      case 'topK':
        bridge.ignored.ignore(at(field), 'chat completions have no top-k sampling; the provider samples by its own settings');
        break;
      case 'mediaResolution':
        bridge.ignored.ignore(at(field), 'it sets how finely Gemini tokenizes images');
        break;
      default:
        throw unsupported(bridge.provider, at(field));
    }
  }
}

/** `thinkingConfig` as OpenAI's `reasoning_effort`: a level as it is, a budget by its size, 0 as none. */
function thinkingConfig(value: unknown, chat: ChatDraft): void {
  if (!isObject(value)) throw invalid('generationConfig.thinkingConfig must be an object', 'generationConfig.thinkingConfig');
  const config = camelFields(value);
  const level = config.thinkingLevel;
  if (typeof level === 'string' && level) {
    const effort = level.toLowerCase();
    if (!['minimal', 'low', 'medium', 'high'].includes(effort))
      throw invalid('generationConfig.thinkingConfig.thinkingLevel must be MINIMAL, LOW, MEDIUM or HIGH', 'generationConfig.thinkingConfig.thinkingLevel');
    chat.reasoning_effort = effort;
    return;
  }
  if (!present(config.thinkingBudget)) return;
  const budget = integer(config.thinkingBudget, 'generationConfig.thinkingConfig.thinkingBudget');
  // -1 is Gemini's "as the model sees fit": what a reasoning model does without a level.
  if (budget === 0) chat.reasoning_effort = 'none';
  else if (budget > 0) chat.reasoning_effort = effortForAnthropicBudget(budget);
}

/**
 * Gemini's `Schema` (an OpenAPI 3.0 subset, types in capitals: `OBJECT`, `STRING`) as JSON
 * Schema: types in lower case, `nullable` as a `null` type, Gemini's ordering hint dropped.
 */
export function jsonSchema(schema: Fields): Fields {
  const out: Fields = {};
  for (const [key, value] of Object.entries(camelFields(schema))) {
    if (key === 'propertyOrdering' || key === 'nullable') continue;
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'properties' && isObject(value))
      out.properties = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, isObject(inner) ? jsonSchema(inner) : inner]));
    else if ((key === 'items' || key === 'additionalProperties') && isObject(value)) out[key] = jsonSchema(value);
    else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value))
      out[key] = value.map((inner: unknown) => (isObject(inner) ? jsonSchema(inner) : inner));
    else out[key] = value;
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

/**
 * The request as a chat body. Function calls get ids in order (Gemini's own `id` when it
 * sent one), and each function response answers the earliest unanswered call of its name
 * (or its `id`), which is how Gemini pairs them.
 */
export function geminiToChatBody(body: Record<string, unknown>, provider: string, ignored = new IgnoredParams()): ChatCompletionBody {
  const bridge: Bridge = { provider, ignored };
  const fields = camelFields(body);
  const draft: ChatDraft = {};
  for (const [field, value] of Object.entries(fields)) {
    if (!present(value)) continue;
    const apply = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined;
    if (!apply) throw unsupported(provider, field);
    apply(value, draft, bridge);
  }
  if (!Array.isArray(fields.contents)) throw invalid('contents must be an array of Content objects', 'contents');
  const calls = new CallLedger();
  const chat: ChatCompletionBody = {
    ...draft,
    messages: [...systemMessages(fields.systemInstruction), ...fields.contents.flatMap((content, i) => chatMessages(content, `contents[${i}]`, calls, bridge))],
  };
  const tools = present(fields.tools) ? chatTools(fields.tools, bridge) : [];
  if (tools.length) {
    chat.tools = tools;
    const choice = present(fields.toolConfig) ? toolChoice(fields.toolConfig) : undefined;
    if (choice) chat.tool_choice = choice;
  }
  return chat;
}

/** The text of a system instruction (a Content, or a string as the SDKs also accept), parts joined. */
function systemMessages(instruction: unknown): ChatMessage[] {
  if (!present(instruction)) return [];
  if (typeof instruction === 'string') return instruction ? [{ role: 'system', content: instruction }] : [];
  if (!isObject(instruction) || !Array.isArray(instruction.parts)) throw invalid('systemInstruction must be a Content with parts', 'systemInstruction');
  const text = instruction.parts
    .map((part, i) => {
      if (!isObject(part) || typeof part.text !== 'string') throw invalid(`systemInstruction.parts[${i}] must be a text part`, `systemInstruction.parts[${i}]`);
      return part.text;
    })
    .join('\n');
  return text ? [{ role: 'system', content: text }] : [];
}

/** The ids of the function calls so far, for the responses that answer them. */
class CallLedger {
  private count = 0;
  private readonly open: { id: string; name: string }[] = [];

  call(name: string, id: unknown): string {
    const callId = typeof id === 'string' && id ? id : `call_gemini_${this.count}`;
    this.count++;
    this.open.push({ id: callId, name });
    return callId;
  }

  answer(name: string, id: unknown, at: string): string {
    const index = typeof id === 'string' && id ? this.open.findIndex((call) => call.id === id) : this.open.findIndex((call) => call.name === name);
    if (index < 0) throw invalid(`${at} answers no function call of the model before it (name ${name})`, at);
    return this.open.splice(index, 1)[0].id;
  }
}

/** One Content as chat messages: a user turn (its function responses as tool messages first), or an assistant turn. */
function chatMessages(content: unknown, at: string, calls: CallLedger, { provider }: Bridge): ChatMessage[] {
  if (!isObject(content)) throw invalid(`${at} must be a Content object`, at);
  const role = content.role ?? 'user';
  if (role !== 'user' && role !== 'model' && role !== 'function') throw invalid(`${at}.role must be user or model`, `${at}.role`);
  if (!Array.isArray(content.parts)) throw invalid(`${at}.parts must be an array`, `${at}.parts`);
  const texts: string[] = [];
  const media: ChatContentPart[] = [];
  const toolCalls: ChatToolCall[] = [];
  const toolResults: ChatMessage[] = [];
  content.parts.forEach((raw, j) => {
    const partAt = `${at}.parts[${j}]`;
    if (!isObject(raw)) throw invalid(`${partAt} must be a Part object`, partAt);
    const part = camelFields(raw);
    if (typeof part.text === 'string') {
      // A thought summary of an earlier answer is the model's own notes, not the conversation.
      if (part.thought !== true) texts.push(part.text);
    } else if (isObject(part.functionCall)) {
      if (role !== 'model') throw invalid(`${partAt}.functionCall belongs in a model turn`, `${partAt}.functionCall`);
      const call = part.functionCall;
      if (typeof call.name !== 'string' || !call.name) throw invalid(`${partAt}.functionCall.name must be a string`, `${partAt}.functionCall.name`);
      toolCalls.push({ id: calls.call(call.name, call.id), type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } });
    } else if (isObject(part.functionResponse)) {
      const response = part.functionResponse;
      if (typeof response.name !== 'string' || !response.name)
        throw invalid(`${partAt}.functionResponse.name must be a string`, `${partAt}.functionResponse.name`);
      toolResults.push({
        role: 'tool',
        tool_call_id: calls.answer(response.name, response.id, `${partAt}.functionResponse`),
        content: resultText(response.response),
      });
    } else if (isObject(part.inlineData)) {
      media.push(inlineMedia(part.inlineData, `${partAt}.inlineData`, provider));
    } else if (isObject(part.fileData)) {
      const file = camelFields(part.fileData);
      if (
        typeof file.fileUri !== 'string' ||
        !/^https?:\/\//.test(file.fileUri) ||
        !(typeof file.mimeType === 'string' ? file.mimeType : 'image/').startsWith('image/')
      )
        throw unsupported(provider, `${partAt}.fileData`);
      media.push({ type: 'image_url', image_url: { url: file.fileUri } });
    } else if (!present(part.thoughtSignature)) {
      throw unsupported(provider, `${partAt}.${Object.keys(part)[0] ?? 'part'}`);
    }
  });
  const text = texts.join('');
  if (role === 'model') {
    if (media.length) throw unsupported(provider, `${at}.parts (media in a model turn)`);
    return [{ role: 'assistant', content: text || null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) }];
  }
  const messages = [...toolResults];
  if (media.length) messages.push({ role: 'user', content: [...(text ? [{ type: 'text' as const, text }] : []), ...media] });
  else if (text || !toolResults.length) messages.push({ role: 'user', content: text });
  return messages;
}

/**
 * A function response as the tool message's text: Google documents `{output: …}` (and
 * `{error: …}`) as its form, so a response that is only a text output is that text; any
 * other response goes as its JSON.
 */
function resultText(response: unknown): string {
  if (isObject(response)) {
    const keys = Object.keys(response);
    if (keys.length === 1 && typeof response.output === 'string') return response.output;
  }
  return JSON.stringify(response ?? {});
}

/** Inline bytes: an image as a data URL; other media have no chat part every provider takes. */
function inlineMedia(data: Fields, at: string, provider: string): ChatContentPart {
  const inline = camelFields(data);
  if (typeof inline.mimeType !== 'string' || typeof inline.data !== 'string') throw invalid(`${at} needs mimeType and data (base64)`, at);
  if (!inline.mimeType.startsWith('image/')) throw unsupported(provider, `${at} (${inline.mimeType})`);
  return { type: 'image_url', image_url: { url: `data:${inline.mimeType};base64,${inline.data}` } };
}

/** Function declarations as function tools; Google's own tools (search, code execution, URL context) run at Google and are refused. */
function chatTools(tools: unknown, { provider }: Bridge): ChatTool[] {
  if (!Array.isArray(tools)) throw invalid('tools must be an array', 'tools');
  return tools.flatMap((raw, i) => {
    const at = `tools[${i}]`;
    if (!isObject(raw)) throw invalid(`${at} must be a Tool object`, at);
    const tool = camelFields(raw);
    const other = Object.keys(tool).find((key) => key !== 'functionDeclarations' && present(tool[key]));
    if (other) throw unsupported(provider, `${at}.${other}`);
    if (!Array.isArray(tool.functionDeclarations)) return [];
    return tool.functionDeclarations.map((rawDeclaration, j): ChatTool => {
      const declarationAt = `${at}.functionDeclarations[${j}]`;
      if (!isObject(rawDeclaration)) throw invalid(`${declarationAt} must be an object`, declarationAt);
      const declaration = camelFields(rawDeclaration);
      if (typeof declaration.name !== 'string' || !declaration.name) throw invalid(`${declarationAt}.name must be a string`, `${declarationAt}.name`);
      const parameters = isObject(declaration.parametersJsonSchema)
        ? declaration.parametersJsonSchema
        : isObject(declaration.parameters)
          ? jsonSchema(declaration.parameters)
          : { type: 'object', properties: {} };
      return {
        type: 'function',
        function: { name: declaration.name, ...(typeof declaration.description === 'string' ? { description: declaration.description } : {}), parameters },
      };
    });
  });
}

/** `toolConfig.functionCallingConfig` as `tool_choice`: AUTO, NONE, ANY (one allowed name: that function). */
function toolChoice(config: unknown): ChatToolChoice | undefined {
  if (!isObject(config)) throw invalid('toolConfig must be an object', 'toolConfig');
  const calling = camelFields(config).functionCallingConfig;
  if (!present(calling)) return undefined;
  if (!isObject(calling)) throw invalid('toolConfig.functionCallingConfig must be an object', 'toolConfig.functionCallingConfig');
  const { mode, allowedFunctionNames } = camelFields(calling);
  switch (mode ?? 'AUTO') {
    case 'AUTO':
    case 'MODE_UNSPECIFIED':
      return 'auto';
    case 'NONE':
      return 'none';
    case 'ANY':
    case 'VALIDATED':
      return Array.isArray(allowedFunctionNames) && allowedFunctionNames.length === 1 && typeof allowedFunctionNames[0] === 'string'
        ? { type: 'function', function: { name: allowedFunctionNames[0] } }
        : 'required';
    default:
      throw invalid('toolConfig.functionCallingConfig.mode must be AUTO, ANY, NONE or VALIDATED', 'toolConfig.functionCallingConfig.mode');
  }
}
