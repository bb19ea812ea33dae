import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
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
  ValidateNested,
  ValidationArguments,
  registerDecorator,
} from 'class-validator';

function IsMessageContent() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isMessageContent',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => value === null || value === undefined || typeof value === 'string' || Array.isArray(value),
        defaultMessage: (args: ValidationArguments) => `${args.property} must be a string, an array of content parts, or null`,
      },
    });
}

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

export class ChatMessageDto {
  @ApiProperty({ enum: CHAT_ROLES })
  @IsIn(CHAT_ROLES)
  role: string;

  @ApiPropertyOptional({ description: 'A string or an array of content parts (text, image_url, input_audio, file)' })
  @IsMessageContent()
  content?: unknown;

  @ApiPropertyOptional() @IsOptional() @IsString()
  name?: string;

  @ApiPropertyOptional() @IsOptional() @IsArray()
  tool_calls?: unknown[];

  @ApiPropertyOptional() @IsOptional() @IsString()
  tool_call_id?: string;
}

/**
 * `POST /v1/chat/completions`. The fields the gateway reads or can check are
 * validated; any other field passes through to the provider untouched (providers add
 * fields faster than gateways do).
 */
export class ChatCompletionCreateDto {
  [extra: string]: unknown;

  @ApiProperty({ example: 'gpt-4o-mini', description: 'Model name, or @<virtual-key-slug>/<model>' })
  @IsString() @MaxLength(256)
  model: string;

  @ApiProperty({ type: [ChatMessageDto] })
  @IsArray() @ArrayNotEmpty() @ArrayMaxSize(100_000)
  @ValidateNested({ each: true }) @Type(() => ChatMessageDto)
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
