import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidationArguments,
  registerDecorator,
} from 'class-validator';

function IsStringOrStringArray() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isStringOrStringArray',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) =>
          value === null || typeof value === 'string' || (Array.isArray(value) && value.length <= 4 && value.every((v) => typeof v === 'string')),
        defaultMessage: (args: ValidationArguments) => `${args.property} must be a string or an array of at most 4 strings`,
      },
    });
}

export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;
const ROLES: ReadonlySet<string> = new Set(CHAT_ROLES);

/** The first problem of a messages array, with its path; null when every message is fine. */
function messageProblem(messages: unknown[]): string | null {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Record<string, unknown> | null;
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
}

/**
 * Checks each message in one pass over the plain objects: no class instances per
 * message (the chat body is on the hot path and can hold thousands of messages).
 */
function AreChatMessages() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'areChatMessages',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => Array.isArray(value) && messageProblem(value) === null,
        defaultMessage: (args: ValidationArguments) => (Array.isArray(args.value) ? messageProblem(args.value) : null) ?? 'messages must be an array',
      },
    });
}

/** One chat message, for the OpenAPI document (validation: AreChatMessages). */
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

/**
 * `POST /v1/chat/completions`. The fields the gateway reads or can check are
 * validated; any other field passes through to the provider untouched (providers add
 * fields faster than gateways do).
 */
export class ChatCompletionCreateDto {
  [extra: string]: unknown;

  /** Validated as received, without class-transformer (see GatewayValidationPipe). */
  static readonly validateAsReceived = true;

  @ApiProperty({ example: 'gpt-4o-mini', description: 'Model name, or @<virtual-key-slug>/<model>' })
  @IsString() @MaxLength(256)
  model: string;

  @ApiProperty({ type: [ChatMessageDto] })
  @IsArray() @ArrayNotEmpty() @ArrayMaxSize(100_000) @AreChatMessages()
  messages: ChatMessageDto[];

  @ApiPropertyOptional() @IsOptional() @IsBoolean()
  stream?: boolean;

  @ApiPropertyOptional({ description: 'include_usage: true adds a final usage chunk' })
  @IsOptional() @IsObject()
  stream_options?: { include_usage?: boolean };

  @ApiPropertyOptional({ description: 'End-user identifier, recorded in the log' })
  @IsOptional() @IsString() @MaxLength(256)
  user?: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 2 }) @IsOptional() @IsNumber() @Min(0) @Max(2)
  temperature?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1 }) @IsOptional() @IsNumber() @Min(0) @Max(1)
  top_p?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 128 }) @IsOptional() @IsInt() @Min(1) @Max(128)
  n?: number;

  @ApiPropertyOptional() @IsOptional() @IsInt() @Min(1)
  max_tokens?: number;

  @ApiPropertyOptional() @IsOptional() @IsInt() @Min(1)
  max_completion_tokens?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 }) @IsOptional() @IsNumber() @Min(-2) @Max(2)
  presence_penalty?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 }) @IsOptional() @IsNumber() @Min(-2) @Max(2)
  frequency_penalty?: number;

  @ApiPropertyOptional() @IsOptional() @IsStringOrStringArray()
  stop?: string | string[];

  @ApiPropertyOptional() @IsOptional() @IsInt()
  seed?: number;

  @ApiPropertyOptional() @IsOptional() @IsBoolean()
  logprobs?: boolean;

  @ApiPropertyOptional({ minimum: 0, maximum: 20 }) @IsOptional() @IsInt() @Min(0) @Max(20)
  top_logprobs?: number;

  @ApiPropertyOptional() @IsOptional() @IsArray()
  tools?: unknown[];

  @ApiPropertyOptional() @IsOptional() @IsObject()
  response_format?: Record<string, unknown>;

  @ApiPropertyOptional() @IsOptional() @IsObject()
  metadata?: Record<string, string>;

  @ApiPropertyOptional({ enum: ['minimal', 'low', 'medium', 'high'] }) @IsOptional() @IsIn(['minimal', 'low', 'medium', 'high'])
  reasoning_effort?: string;
}
