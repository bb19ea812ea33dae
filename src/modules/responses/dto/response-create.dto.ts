import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isArray, isBoolean, isString } from '../../../common/pipes/body-rules';
import { eachResponsesTool } from './response-tools.rules';

/**
 * What the gateway itself acts on in a Responses request, and so checks: the model it
 * routes by, `stream` (which answer it relays), `user` (the end user of the log and the
 * budgets), the MCP tools whose headers it redacts. CONTRACT section 12: to OpenAI this
 * is a pass-through, so every other field and value (an input item type, a reasoning
 * effort, a tool kind newer than the gateway) reaches the provider unchanged and the
 * provider judges it. A provider reached through the chat bridge has every field it reads
 * checked there (`chat-bridge/responses-to-chat.ts`), with a 400 naming the field.
 */
export const RESPONSE_CREATE_SCHEMA = {
  required: {
    model: isString(256),
  },
  optional: {
    stream: isBoolean,
    user: isString(256),
    tools: all(isArray(), eachResponsesTool),
  },
};

/** `POST /v1/responses` (OpenAI's Responses API). The OpenAPI description; the checks are RESPONSE_CREATE_SCHEMA. */
export class ResponseCreateDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, RESPONSE_CREATE_SCHEMA);
  }

  @ApiProperty({ example: 'gpt-4.1-mini', description: 'Model name, or @<virtual-key-slug>/<model>' })
  model: string;

  @ApiPropertyOptional({ description: 'A string, or input items (messages with input_text / input_image parts, function calls and their outputs …)' })
  input?: unknown;

  @ApiPropertyOptional()
  instructions?: string;

  @ApiPropertyOptional({
    description:
      'function, web_search_preview, file_search, mcp (headers are forwarded, never stored) …; built-in tools need a provider with the Responses API',
  })
  tools?: unknown[];

  @ApiPropertyOptional()
  tool_choice?: unknown;

  @ApiPropertyOptional({ description: '{effort: none | minimal | low | medium | high, summary}' })
  reasoning?: { effort?: string };

  @ApiPropertyOptional({ description: 'true: the typed event stream as SSE' })
  stream?: boolean;

  @ApiPropertyOptional({ description: 'End-user identifier, recorded in the log' })
  user?: string;

  @ApiPropertyOptional()
  metadata?: Record<string, string>;
}
