import Mustache from 'mustache';
import { GatewayError } from '../../common/errors/gateway-error';
import { checkBody } from '../../common/pipes/body-rules';
import { CHAT_PARAMETER_SCHEMA } from '../chat/dto/chat-completion-create.dto';

/** What a prompt version holds: everything of a chat request but the variables' values. */
export interface PromptTemplate {
  model: string;
  /** Routing when the call names none: a virtual key slug, or a provider. */
  virtual_key?: string | null;
  provider?: string | null;
  messages: Record<string, unknown>[];
  /** Default values of variables. */
  variables?: Record<string, unknown>;
  /** Chat completion parameters (max_tokens, temperature, tools, response_format …). */
  hyperparameters?: Record<string, unknown>;
}

/** Hyperparameters whose strings are templates too (a tool's description, a schema's enum …). */
const TEMPLATED_HYPERPARAMETERS = ['tools', 'response_format'] as const;
/** The call decides these; a template holding them would be ambiguous. */
const CALL_ONLY = ['model', 'messages', 'stream', 'stream_options'];

type Token = [string, string, number, number, Token[]?];

/**
 * Every template string of a prompt with the path that names it in a 400:
 * message contents (strings and text parts) and the strings inside tools and
 * response_format.
 */
function templateStrings(template: Pick<PromptTemplate, 'messages' | 'hyperparameters'>): { path: string; text: string }[] {
  const found: { path: string; text: string }[] = [];
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'string') found.push({ path, text: value });
    else if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) walk(item, `${path}.${key}`);
  };
  template.messages.forEach((message, i) => {
    const content = message.content;
    if (typeof content === 'string') found.push({ path: `messages[${i}].content`, text: content });
    else if (Array.isArray(content)) {
      content.forEach((part: any, j) => {
        if (part?.type === 'text' && typeof part.text === 'string') found.push({ path: `messages[${i}].content[${j}].text`, text: part.text });
      });
    }
  });
  for (const key of TEMPLATED_HYPERPARAMETERS) walk(template.hyperparameters?.[key], `hyperparameters.${key}`);
  return found;
}

function parse(text: string, path: string): Token[] {
  let tokens: Token[];
  try {
    tokens = Mustache.parse(text) as Token[];
  } catch (error) {
    throw GatewayError.invalidRequest(`${path} is not a valid Mustache template: ${(error as Error).message}`, path);
  }
  const partial = (list: Token[]): boolean => list.some((token) => token[0] === '>' || (token[4] ? partial(token[4]) : false));
  if (partial(tokens)) throw GatewayError.invalidRequest(`${path} uses a partial ({{> name}}), which prompts do not support`, path);
  return tokens;
}

/**
 * Checks a template before it is stored: its messages, its hyperparameters with the
 * ranges chat completions have (a 400 naming `hyperparameters.<field>`), and that every
 * template string parses.
 */
export function validateTemplate(template: PromptTemplate): void {
  checkBody({ model: template.model, messages: template.messages }, { required: CHAT_PARAMETER_SCHEMA.required, optional: {} });
  const hyperparameters = template.hyperparameters ?? {};
  const reserved = CALL_ONLY.find((field) => field in hyperparameters);
  if (reserved) throw GatewayError.invalidRequest(`hyperparameters.${reserved} cannot be part of a prompt template`, `hyperparameters.${reserved}`);
  try {
    checkBody(hyperparameters, { required: {}, optional: CHAT_PARAMETER_SCHEMA.optional });
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    throw GatewayError.invalidRequest(error.message.replace(/(^|; )/g, '$1hyperparameters.'), error.param && `hyperparameters.${error.param}`);
  }
  for (const { path, text } of templateStrings(template)) parse(text, path);
}

/** The variables a template string cannot render without: names outside any section (a section may be left out). */
function requiredNames(tokens: Token[]): string[] {
  return tokens.filter((token) => (token[0] === 'name' || token[0] === '&') && token[1] !== '.').map((token) => token[1]);
}

function lookup(view: Record<string, unknown>, name: string): unknown {
  let value: unknown = view;
  for (const key of name.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Renders one value: strings through Mustache, without HTML escaping (this is model text, not HTML). */
function renderValue(value: unknown, view: Record<string, unknown>): unknown {
  if (typeof value === 'string') return Mustache.render(value, view, {}, { escape: (text: string) => text });
  if (Array.isArray(value)) return value.map((item) => renderValue(item, view));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderValue(item, view)]));
  return value;
}

/** A message's content: a string, or the text parts of a content array (images are left as they are). */
function renderContent(content: unknown, view: Record<string, unknown>): unknown {
  if (typeof content === 'string') return renderValue(content, view);
  if (!Array.isArray(content)) return content;
  return content.map((part: any) => (part?.type === 'text' && typeof part.text === 'string' ? { ...part, text: renderValue(part.text, view) } : part));
}

/**
 * A template's messages, tools and response_format with the variables filled in (the
 * call's over the defaults). A variable a string needs and nobody gave is a 400 naming
 * it; extra variables are ignored.
 */
export function renderTemplate(
  template: PromptTemplate,
  variables: Record<string, unknown>,
): { messages: unknown[]; hyperparameters: Record<string, unknown> } {
  const view = { ...template.variables, ...variables };
  const missing = new Set<string>();
  for (const { path, text } of templateStrings(template)) {
    for (const name of requiredNames(parse(text, path))) if (lookup(view, name) === undefined) missing.add(name);
  }
  if (missing.size) {
    const names = [...missing];
    throw GatewayError.invalidRequest(
      `Missing prompt variable${names.length > 1 ? 's' : ''}: ${names.join(', ')}`,
      `variables.${names[0]}`,
      'missing_variable',
    );
  }
  const messages = template.messages.map((message) => ({ ...message, content: renderContent(message.content, view) }));
  const hyperparameters: Record<string, unknown> = { ...template.hyperparameters };
  for (const key of TEMPLATED_HYPERPARAMETERS) if (hyperparameters[key] !== undefined) hyperparameters[key] = renderValue(hyperparameters[key], view);
  return { messages, hyperparameters };
}
