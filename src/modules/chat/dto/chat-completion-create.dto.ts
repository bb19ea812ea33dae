import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isArray, isBoolean, isInt, isNumber, isObject, isOneOf, isString, Rule } from '../../../common/pipes/body-rules';

export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;
const ROLES: ReadonlySet<string> = new Set(CHAT_ROLES);
const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

/** The first problem of a messages array, with its path. */
const eachMessage: Rule = (messages) => {
  const list = messages as unknown[];
  for (let i = 0; i < list.length; i++) {
    const m = list[i] as Record<string, unknown> | null;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return `messages[${i}] must be an object`;
    if (typeof m.role !== 'string' || !ROLES.has(m.role)) return `messages[${i}].role must be one of the following values: ${CHAT_ROLES.join(', ')}`;
    const content = m.content;
    if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
      return `messages[${i}].content must be a string, an array of content parts, or null`;
    }
    if (m.name !== undefined && typeof m.name !== 'string') return `messages[${i}].name must be a string`;
    if (m.tool_call_id !== undefined && typeof m.tool_call_id !== 'string') return `messages[${i}].tool_call_id must be a string`;
    if (m.tool_calls !== undefined && !Array.isArray(m.tool_calls)) return `messages[${i}].tool_calls must be an array`;
  }
  return null;
};

const stopSequences: Rule = (v, f) =>
  typeof v === 'string' || (Array.isArray(v) && v.length <= 4 && v.every((s) => typeof s === 'string'))
    ? null
    : `${f} must be a string or an array of at most 4 strings`;

/**
 * The chat parameters as OpenAI documents them, checked where the gateway stores them
 * itself: prompt templates and the overrides of a prompt call (src/modules/prompts/).
 */
export const CHAT_PARAMETER_SCHEMA = {
  required: {
    model: isString(256),
    messages: all(isArray(1, 100_000), eachMessage),
  },
  optional: {
    stream: isBoolean,
    stream_options: isObject,
    user: isString(256),
    temperature: isNumber(0, 2),
    top_p: isNumber(0, 1),
    n: isInt(1, 128),
    max_tokens: isInt(1),
    max_completion_tokens: isInt(1),
    presence_penalty: isNumber(-2, 2),
    frequency_penalty: isNumber(-2, 2),
    stop: stopSequences,
    seed: isInt(),
    logprobs: isBoolean,
    top_logprobs: isInt(0, 20),
    tools: isArray(),
    response_format: isObject,
    metadata: isObject,
    reasoning_effort: isOneOf(REASONING_EFFORTS),
  },
};

/**
 * What the gateway acts on in a chat completion request (CONTRACT section 12): the model
 * it routes by, the message list it bounds, `stream` and `stream_options` (it asks for
 * the usage it bills by), `user` (logged, budgeted) and the output limits (budgets
 * reserve by them). Any other field and value (a new role, content part or
 * reasoning_effort) passes to an OpenAI-format provider untouched, on the hot path with
 * no further look; the translations (src/providers/anthropic/, google/) check what they
 * translate and name what they cannot read.
 */
export const CHAT_COMPLETION_SCHEMA = {
  required: {
    model: isString(256),
    messages: isArray(1, 100_000),
  },
  optional: {
    stream: isBoolean,
    stream_options: isObject,
    user: isString(256),
    max_tokens: isNumber(0),
    max_completion_tokens: isNumber(0),
  },
};

/** One chat message, for the OpenAPI document. */
export class ChatMessageDto {
  @ApiProperty({ enum: CHAT_ROLES })
  role: string;

  @ApiPropertyOptional({ description: 'A string or an array of content parts (text, image_url, input_audio, file)' })
  content?: unknown;

  @ApiPropertyOptional()
  name?: string;

  @ApiPropertyOptional()
  tool_calls?: unknown[];

  @ApiPropertyOptional()
  tool_call_id?: string;
}

/** `POST /v1/chat/completions` (OpenAI's format). The OpenAPI description; the checks are CHAT_COMPLETION_SCHEMA. */
export class ChatCompletionCreateDto {
  [extra: string]: unknown;

  /** Called by GatewayValidationPipe instead of class-validator. */
  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, CHAT_COMPLETION_SCHEMA);
  }

  @ApiProperty({ example: 'gpt-4o-mini', description: 'Model name, or @<virtual-key-slug>/<model>' })
  model: string;

  @ApiProperty({ type: [ChatMessageDto] })
  messages: ChatMessageDto[];

  @ApiPropertyOptional()
  stream?: boolean;

  @ApiPropertyOptional({ description: 'include_usage: true adds a final usage chunk' })
  stream_options?: { include_usage?: boolean };

  @ApiPropertyOptional({ description: 'End-user identifier, recorded in the log' })
  user?: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 2 })
  temperature?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1 })
  top_p?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 128 })
  n?: number;

  @ApiPropertyOptional()
  max_tokens?: number;

  @ApiPropertyOptional()
  max_completion_tokens?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  presence_penalty?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  frequency_penalty?: number;

  @ApiPropertyOptional({ description: 'A string or up to 4 strings' })
  stop?: string | string[];

  @ApiPropertyOptional()
  seed?: number;

  @ApiPropertyOptional()
  tools?: unknown[];

  @ApiPropertyOptional()
  response_format?: Record<string, unknown>;

  @ApiPropertyOptional()
  metadata?: Record<string, string>;

  @ApiPropertyOptional({ enum: REASONING_EFFORTS })
  reasoning_effort?: string;
}
