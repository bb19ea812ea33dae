import { GatewayError } from '../../../common/errors/gateway-error';
import { IgnoredParams } from '../../../providers/ignored-params';
import type { ChatCompletionBody, ChatContentPart, ChatMessage, ChatTool, ChatToolCall, ChatToolMessage } from '../../../providers/chat-format';
import { type Fields, finiteNumber, invalid, isObject, present } from '../../../providers/translation-checks';

/** A chat body being built: its messages come after the fields FIELDS maps. */
type ChatDraft = Partial<ChatCompletionBody>;

/** A function of a `namespace` tool, as the model calls it in the Responses API. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/**
 * A Responses request as a chat body; the fields left out because they only tune delivery
 * (CONTRACT section 12: "ignored"); and the chat names of the functions of `namespace`
 * tools, for the answer to name them as the client declared them.
 */
export interface BridgedRequest {
  chat: ChatCompletionBody;
  ignored: string[];
  namespaced: Map<string, NamespacedName>;
}

/**
 * Chat has no tool namespaces: a namespace's functions go as `<namespace>__<function>`,
 * a name every chat provider accepts (letters, digits, `_`, `-`).
 */
export const namespacedChatName = (namespace: string, name: string) => `${namespace}__${name}`;

/** A 400 for what the Responses API has and chat completions cannot carry; `what` names it, with its field. */
const unsupported = (provider: string, param: string, what: string) =>
  GatewayError.invalidRequest(
    `${what} needs a provider with the Responses API; provider ${provider} is reached through chat completions, which cannot carry it`,
    param,
  );

/** OpenAI's efforts the chat builders know; `xhigh` asks for the most thinking, which is `high` there. */
const EFFORTS: Record<string, string> = { none: 'none', minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'high' };

interface Translation {
  body: Fields;
  chat: ChatDraft;
  ignored: IgnoredParams;
  namespaced: Map<string, NamespacedName>;
  provider: string;
}

function string(value: unknown, param: string): string {
  if (typeof value !== 'string') throw invalid(`${param} must be a string`, param);
  return value;
}

function boolean(value: unknown, param: string): boolean {
  if (typeof value !== 'boolean') throw invalid(`${param} must be a boolean value`, param);
  return value;
}

/** A field that only tunes delivery (`why`): named in the ignored list when it asks for anything but the default. */
const ignoredUnless =
  (isDefault: (value: unknown) => boolean, why: string) =>
  (value: unknown, t: Translation, field: string): void => {
    if (!isDefault(value)) t.ignored.ignore(field, why);
  };

/** A field whose meaning needs state or a service the bridge does not have: refused unless it asks for nothing. */
const refusedUnless =
  (isDefault: (value: unknown) => boolean, what: string) =>
  (value: unknown, t: Translation, field: string): void => {
    if (!isDefault(value)) throw unsupported(t.provider, field, what);
  };

/**
 * Each Responses API field, and what the bridge does with it. Mapped: carried by the
 * chat body with the same meaning. Ignored (named in the list the bridge returns): fields
 * that only tune delivery or caching, the answer being the same without them. Refused
 * (400): fields whose meaning needs OpenAI's stored state or hosted services. A field
 * missing here (a field newer than this table) is a 400 naming it rather than a silent drop.
 * `input`, `instructions`, `tools`, `tool_choice` and `parallel_tool_calls` are read together below.
 */
const FIELDS: Record<string, (value: unknown, t: Translation, field: string) => void> = {
  model: (value, t) => (t.chat.model = string(value, 'model')),
  input: () => undefined,
  instructions: () => undefined,
  tools: () => undefined,
  tool_choice: () => undefined,
  parallel_tool_calls: (value) => boolean(value, 'parallel_tool_calls'),
  stream: (value, t) => {
    if (boolean(value, 'stream')) t.chat.stream = true;
  },
  user: (value, t) => (t.chat.user = string(value, 'user')),
  // The end user for the provider's abuse monitoring, as `user` is: it goes as `user` when that is not set.
  safety_identifier: (value, t) => {
    const id = string(value, 'safety_identifier');
    if (!present(t.body.user)) t.chat.user = id;
  },
  temperature: (value, t) => (t.chat.temperature = finiteNumber(value, 'temperature')),
  top_p: (value, t) => (t.chat.top_p = finiteNumber(value, 'top_p')),
  max_output_tokens: (value, t) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw invalid('max_output_tokens must be a positive integer', 'max_output_tokens');
    // `max_tokens`: the name every chat provider takes (some OpenAI-compatible servers know no max_completion_tokens).
    t.chat.max_tokens = value;
  },
  reasoning: (value, t) => reasoning(value, t),
  text: (value, t) => text(value, t),
  // Echoed on the Response the client gets (the bridge stores nothing, so that is all it is for); chat providers have no place for it.
  metadata: (value) => {
    if (!isObject(value)) throw invalid('metadata must be an object', 'metadata');
  },
  // Nothing is stored for a bridged provider; `store: false` asks for exactly that, `true` is named ignored.
  store: ignoredUnless((value) => boolean(value, 'store') === false, 'nothing is stored for a provider reached through chat completions'),
  // Extra data for the answer (encrypted reasoning, logprobs, search sources): what the provider gives is in the answer anyway.
  include: ignoredUnless((value) => Array.isArray(value) && value.length === 0, "extra data of OpenAI's answer; what the provider gives is in the answer"),
  // Routing hints for OpenAI's prompt cache; chat providers cache prompts on their own.
  prompt_cache_key: ignoredUnless(() => false, "a routing hint for OpenAI's prompt cache"),
  prompt_cache_retention: ignoredUnless(() => false, "a setting of OpenAI's prompt cache"),
  // OpenAI's capacity tiers; another provider has only its own.
  service_tier: ignoredUnless((value) => value === 'auto' || value === 'default', 'an OpenAI capacity tier'),
  // What OpenAI does when the context overflows; the provider answers with its own error instead.
  truncation: ignoredUnless((value) => value === 'disabled', 'what OpenAI does when the context overflows'),
  // Padding of stream events (`include_obfuscation`): delivery only.
  stream_options: ignoredUnless(() => false, 'padding of stream events'),
  // Codex's notes about its session (turn and thread ids) for OpenAI's backend; nothing the model reads.
  client_metadata: ignoredUnless(() => false, "notes for OpenAI's backend that the model never reads"),
  // Caps calls to built-in tools, of which a bridged provider runs none: honoured as it is.
  max_tool_calls: () => undefined,
  background: refusedUnless((value) => value === false, 'background: true (a response run and stored by the provider)'),
  previous_response_id: refusedUnless(() => false, 'previous_response_id (a response stored by the provider; send the conversation as input items)'),
  conversation: refusedUnless(() => false, 'conversation (a conversation stored by the provider; send it as input items)'),
  prompt: refusedUnless(() => false, 'prompt (a prompt template stored at OpenAI)'),
  top_logprobs: refusedUnless((value) => value === 0, 'top_logprobs'),
};

/**
 * A Responses API request as an OpenAI chat body, for a provider that has chat
 * completions and no Responses API. `body` has passed only the gateway's own rules
 * (ResponseCreateDto), so every field read here is checked here: a 400 naming the field,
 * never a 500. What chat completions cannot carry (built-in tools, stored state) is a
 * 400 naming it and the provider.
 */
export function responsesToChatBody(body: Record<string, unknown>, provider: string, ignored = new IgnoredParams()): BridgedRequest {
  const t: Translation = { body, chat: {}, ignored, namespaced: new Map(), provider };
  for (const [field, value] of Object.entries(body)) {
    if (!present(value)) continue;
    const apply = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined;
    if (!apply) throw unsupported(provider, field, field);
    apply(value, t, field);
  }
  if (!present(body.input)) throw invalid('input is required: a string or an array of input items', 'input');
  // Tools first: the history's calls of namespaced functions are named as the tools are.
  const tools = present(body.tools) ? chatTools(body.tools, t) : [];
  const messages = [...instructions(body.instructions), ...chatMessages(body.input, t)];
  t.chat.messages = messages;
  t.chat.tools = tools;
  if (present(body.tool_choice)) toolChoice(body.tool_choice, t);
  // FIELDS checked it is a boolean.
  if (typeof body.parallel_tool_calls === 'boolean') t.chat.parallel_tool_calls = body.parallel_tool_calls;
  // OpenAI refuses an empty `tools`, and `tool_choice` or `parallel_tool_calls` without tools: without tools they mean nothing.
  if (!t.chat.tools.length) {
    delete t.chat.tools;
    delete t.chat.tool_choice;
    delete t.chat.parallel_tool_calls;
  }
  return { chat: { ...t.chat, messages }, ignored: t.ignored.list(), namespaced: t.namespaced };
}

function instructions(value: unknown): ChatMessage[] {
  if (!present(value)) return [];
  const text = string(value, 'instructions');
  return text ? [{ role: 'system', content: text }] : [];
}

/** `reasoning.effort` as `reasoning_effort` (the chat builders make it Anthropic's thinking budget or Gemini's). */
function reasoning(value: unknown, t: Translation): void {
  if (!isObject(value)) throw invalid('reasoning must be an object', 'reasoning');
  if (present(value.effort)) {
    const effort = typeof value.effort === 'string' && Object.hasOwn(EFFORTS, value.effort) ? EFFORTS[value.effort] : undefined;
    if (!effort) throw invalid(`reasoning.effort must be one of the following values: ${Object.keys(EFFORTS).join(', ')}`, 'reasoning.effort');
    t.chat.reasoning_effort = effort;
  }
  // Asks for a summary of the reasoning; the bridge returns whatever reasoning text the provider hands back.
  for (const field of ['summary', 'generate_summary'])
    if (present(value[field])) t.ignored.ignore(`reasoning.${field}`, "a summary of the reasoning; the provider's reasoning text comes back as it is");
}

/** `text.format` as `response_format`; `text.verbosity` is a style hint chat providers have no knob for. */
function text(value: unknown, t: Translation): void {
  if (!isObject(value)) throw invalid('text must be an object', 'text');
  if (present(value.verbosity) && value.verbosity !== 'medium') t.ignored.ignore('text.verbosity', 'a style hint chat providers have no setting for');
  const format = value.format;
  if (!present(format)) return;
  if (!isObject(format)) throw invalid('text.format must be an object', 'text.format');
  switch (format.type) {
    case 'text':
      return;
    case 'json_object':
      t.chat.response_format = { type: 'json_object' };
      return;
    case 'json_schema': {
      if (typeof format.name !== 'string' || !format.name) throw invalid('text.format.name must be a string', 'text.format.name');
      if (!isObject(format.schema)) throw invalid('text.format.schema must be a JSON schema object', 'text.format.schema');
      const schema: Fields = { name: format.name, schema: format.schema };
      if (typeof format.description === 'string') schema.description = format.description;
      if (typeof format.strict === 'boolean') schema.strict = format.strict;
      t.chat.response_format = { type: 'json_schema', json_schema: schema };
      return;
    }
    default:
      throw invalid('text.format.type must be one of the following values: text, json_object, json_schema', 'text.format.type');
  }
}

/**
 * Function tools as chat tools (Responses function tools are flat: name, description,
 * parameters and strict beside `type`); the functions of a `namespace` tool likewise,
 * named `<namespace>__<function>`. Tools OpenAI hosts (web search, file search, code
 * interpreter, image generation, computer use) are offers the model may take or leave:
 * left out for a provider that cannot run them, and named as ignored (Codex offers web
 * search on every request); forcing one with `tool_choice` is refused. A remote MCP server
 * the caller named, and tools the client runs itself in shapes chat has no word for
 * (custom grammars, shell, apply_patch, tool search), are refused.
 */
function chatTools(tools: unknown, t: Translation): ChatTool[] {
  if (!Array.isArray(tools)) throw invalid('tools must be an array', 'tools');
  return tools.flatMap((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalid(`${at} must be an object`, at);
    if (tool.type === 'function') return [functionTool(tool, at)];
    if (tool.type === 'namespace') return namespaceTools(tool, at, t);
    if (typeof tool.type === 'string' && HOSTED_TOOLS.has(tool.type)) {
      t.ignored.ignore(`tools.${tool.type}`, 'a tool OpenAI hosts, which the model may use or not; the provider cannot run it');
      return [];
    }
    throw unsupported(t.provider, `${at}.type`, `the built-in tool ${JSON.stringify(tool.type)} (${at}.type)`);
  });
}

/** Tools that run at OpenAI and that the model may use or not: an offer a bridged provider leaves out. */
const HOSTED_TOOLS: ReadonlySet<string> = new Set([
  'web_search',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
  'computer_use_preview',
]);

function functionTool(tool: Fields, at: string, chatName?: string): ChatTool {
  if (typeof tool.name !== 'string' || !tool.name) throw invalid(`${at}.name must be a non-empty string`, `${at}.name`);
  const fn: ChatTool['function'] = { name: chatName ?? tool.name };
  if (present(tool.description)) fn.description = string(tool.description, `${at}.description`);
  if (present(tool.parameters)) {
    if (!isObject(tool.parameters)) throw invalid(`${at}.parameters must be a JSON schema object`, `${at}.parameters`);
    fn.parameters = tool.parameters;
  }
  if (present(tool.strict)) fn.strict = boolean(tool.strict, `${at}.strict`);
  return { type: 'function', function: fn };
}

function namespaceTools(tool: Fields, at: string, t: Translation): ChatTool[] {
  if (typeof tool.name !== 'string' || !/^[A-Za-z0-9_-]+$/.test(tool.name))
    throw invalid(`${at}.name must be a name of letters, digits, _ and -`, `${at}.name`);
  if (!Array.isArray(tool.tools)) throw invalid(`${at}.tools must be an array of function tools`, `${at}.tools`);
  const namespace = tool.name;
  return tool.tools.map((inner: unknown, j: number) => {
    const innerAt = `${at}.tools[${j}]`;
    if (!isObject(inner)) throw invalid(`${innerAt} must be an object`, innerAt);
    if (inner.type !== 'function')
      throw unsupported(t.provider, `${innerAt}.type`, `the tool type ${JSON.stringify(inner.type)} in a namespace (${innerAt}.type)`);
    if (typeof inner.name !== 'string' || !inner.name) throw invalid(`${innerAt}.name must be a non-empty string`, `${innerAt}.name`);
    const chatName = namespacedChatName(namespace, inner.name);
    t.namespaced.set(chatName, { namespace, name: inner.name });
    return functionTool(inner, innerAt, chatName);
  });
}

/**
 * `tool_choice`: the modes as they are, a forced function in chat's nesting, and
 * `allowed_tools` as the tool list cut down to the allowed functions with its mode. A
 * built-in tool forced is refused with the tool.
 */
function toolChoice(choice: unknown, t: Translation): void {
  if (choice === 'auto' || choice === 'none' || choice === 'required') {
    t.chat.tool_choice = choice;
    return;
  }
  if (!isObject(choice)) throw invalid('tool_choice must be "auto", "none", "required" or an object', 'tool_choice');
  if (choice.type === 'function') {
    if (typeof choice.name !== 'string' || !choice.name) throw invalid('tool_choice.name must name a function tool', 'tool_choice.name');
    t.chat.tool_choice = { type: 'function', function: { name: choice.name } };
    return;
  }
  if (choice.type === 'allowed_tools') {
    if (choice.mode !== 'auto' && choice.mode !== 'required') throw invalid('tool_choice.mode must be "auto" or "required"', 'tool_choice.mode');
    if (!Array.isArray(choice.tools)) throw invalid('tool_choice.tools must be an array of tools', 'tool_choice.tools');
    const allowed = new Set(
      choice.tools.map((tool: unknown, i: number) => {
        if (!isObject(tool) || tool.type !== 'function' || typeof tool.name !== 'string') {
          throw unsupported(t.provider, `tool_choice.tools[${i}]`, `an allowed tool other than a named function (tool_choice.tools[${i}])`);
        }
        return tool.name;
      }),
    );
    t.chat.tools = (t.chat.tools ?? []).filter((tool) => allowed.has(tool.function.name));
    if (!t.chat.tools.length) throw invalid('tool_choice.tools names none of the function tools', 'tool_choice.tools');
    t.chat.tool_choice = choice.mode;
    return;
  }
  throw unsupported(t.provider, 'tool_choice.type', `tool_choice of type ${JSON.stringify(choice.type)}`);
}

/**
 * `input` as chat messages. A string is one user message. Items, in order: messages by
 * role (`developer` is sent as `system`, the role every chat provider knows);
 * `function_call` items become the tool calls of an assistant message (merged into the
 * assistant message just before, as a chat model answers text and calls in one turn);
 * `function_call_output` items become `tool` messages. `reasoning` items are dropped: they
 * are the model's own notes (encrypted for OpenAI), which no other provider can read.
 * Other item types (hosted tool calls, item references …) need OpenAI: refused.
 */
function chatMessages(input: unknown, t: Translation): ChatMessage[] {
  const provider = t.provider;
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) throw invalid('input must be a string or an array of input items', 'input');
  const messages: ChatMessage[] = [];
  input.forEach((item, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw invalid(`${at} must be an object`, at);
    const type = item.type ?? 'message';
    switch (type) {
      case 'message':
        messages.push(...message(item, at, provider));
        break;
      case 'function_call': {
        const call = functionCall(item, at);
        // A call of a namespaced function goes under the name its tool has in the chat body.
        if (present(item.namespace)) call.function.name = namespacedChatName(string(item.namespace, `${at}.namespace`), call.function.name);
        const last = messages[messages.length - 1];
        if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        break;
      }
      case 'function_call_output':
        messages.push(toolMessage(item, at, provider));
        break;
      case 'reasoning':
        break;
      default:
        throw unsupported(provider, `${at}.type`, `the input item type ${JSON.stringify(type)} (${at}.type)`);
    }
  });
  return messages;
}

function functionCall(item: Fields, at: string): ChatToolCall {
  if (typeof item.call_id !== 'string' || !item.call_id) throw invalid(`${at}.call_id must be a string`, `${at}.call_id`);
  if (typeof item.name !== 'string' || !item.name) throw invalid(`${at}.name must be a string`, `${at}.name`);
  const args = present(item.arguments) ? string(item.arguments, `${at}.arguments`) : '{}';
  return { id: item.call_id, type: 'function', function: { name: item.name, arguments: args } };
}

/** A tool's output as a `tool` message; chat tool messages carry text, so output parts must be text. */
function toolMessage(item: Fields, at: string, provider: string): ChatToolMessage {
  if (typeof item.call_id !== 'string' || !item.call_id) throw invalid(`${at}.call_id must be a string`, `${at}.call_id`);
  let content: string;
  if (typeof item.output === 'string') content = item.output;
  else if (Array.isArray(item.output)) {
    content = item.output
      .map((part: unknown, j: number) => {
        const partAt = `${at}.output[${j}]`;
        if (!isObject(part)) throw invalid(`${partAt} must be an object`, partAt);
        if (part.type !== 'input_text' && part.type !== 'output_text')
          throw unsupported(provider, `${partAt}.type`, `the part type ${JSON.stringify(part.type)} in a function call output (${partAt}.type)`);
        return string(part.text, `${partAt}.text`);
      })
      .join('\n\n');
  } else throw invalid(`${at}.output must be a string or an array of content parts`, `${at}.output`);
  return { role: 'tool', tool_call_id: item.call_id, content };
}

const ROLES = ['user', 'assistant', 'system', 'developer'] as const;
const isRole = (role: unknown): role is (typeof ROLES)[number] => ROLES.some((known) => known === role);

function message(item: Fields, at: string, provider: string): ChatMessage[] {
  const role = item.role;
  if (!isRole(role)) throw invalid(`${at}.role must be one of the following values: ${ROLES.join(', ')}`, `${at}.role`);
  const content = item.content;
  if (typeof content === 'string') return [{ role: role === 'developer' ? 'system' : role, content }];
  if (!Array.isArray(content)) throw invalid(`${at}.content must be a string or an array of content parts`, `${at}.content`);
  const parts = content.map((part, j) => contentPart(part, `${at}.content[${j}]`, role, provider));
  if (role === 'user') {
    if (!parts.length) return [];
    return [{ role, content: parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts }];
  }
  // Assistant, system and developer turns are text: their parts joined as they came.
  const joined = parts.map((part) => part.text as string).join('');
  if (role === 'assistant') return joined ? [{ role, content: joined }] : [];
  return joined ? [{ role: 'system', content: joined }] : [];
}

/**
 * One content part as a chat part. A user may send text and images (a URL or data URL;
 * a `file_id` points into OpenAI's Files API, which the provider cannot read); the other
 * roles send text (an assistant's refusal is what it said: text too).
 */
function contentPart(part: unknown, at: string, role: string, provider: string): ChatContentPart {
  if (!isObject(part)) throw invalid(`${at} must be an object`, at);
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: string(part.text, `${at}.text`) };
    case 'refusal':
      if (role === 'assistant') return { type: 'text', text: string(part.refusal, `${at}.refusal`) };
      break;
    case 'input_image':
      if (role !== 'user') break;
      if (typeof part.image_url !== 'string' || !part.image_url) {
        if (present(part.file_id)) throw unsupported(provider, `${at}.file_id`, `an image by file_id (${at}.file_id)`);
        throw invalid(`${at}.image_url must be a URL or a data URL`, `${at}.image_url`);
      }
      return {
        type: 'image_url',
        image_url: { url: part.image_url, ...(typeof part.detail === 'string' && part.detail !== 'auto' ? { detail: part.detail } : {}) },
      };
  }
  if (typeof part.type !== 'string') throw invalid(`${at}.type must be a string`, `${at}.type`);
  throw unsupported(provider, `${at}.type`, `the content part type ${JSON.stringify(part.type)} in a ${role} message (${at}.type)`);
}
