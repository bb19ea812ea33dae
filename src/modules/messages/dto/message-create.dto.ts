import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isArray, isBoolean, isNumber, isObject, isString, Rule } from '../../../common/pipes/body-rules';
import { mcpServers } from './mcp-servers.rules';

/** `metadata.user_id` is the end user the log records (and budgets count); Anthropic's other metadata passes untouched. */
const metadata: Rule = (v, f) => {
  const problem = isObject(v, f);
  if (problem) return problem;
  const userId = (v as Record<string, unknown>).user_id;
  return userId === undefined || userId === null ? null : isString(256)(userId, `${f}.user_id`);
};

/**
 * What the gateway acts on in a Messages request (CONTRACT section 12): the model it
 * routes by, the message list it bounds, `stream`, `max_tokens` (budgets reserve by it),
 * `metadata.user_id` (logged) and its MCP rules. Every other field and value (a new
 * role, a content block, a beta's field) goes to an Anthropic provider unchanged; the
 * bridge to chat completions (chat-bridge/messages-to-chat.ts) checks what it
 * translates and names what it cannot read.
 */
export const MESSAGE_CREATE_SCHEMA = {
  required: {
    model: isString(256),
    messages: isArray(1, 100_000),
  },
  optional: {
    max_tokens: isNumber(0),
    stream: isBoolean,
    metadata,
    mcp_servers: all(isArray(), mcpServers),
  },
};

/** `POST /v1/messages` (Anthropic's format). The OpenAPI description; the checks are MESSAGE_CREATE_SCHEMA. */
export class MessageCreateDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, MESSAGE_CREATE_SCHEMA);
  }

  @ApiProperty({ example: '@anthropic-prod/claude-sonnet-4-5', description: 'Model name, or @<virtual-key-slug>/<model>' })
  model: string;

  @ApiProperty({ minimum: 1 })
  max_tokens: number;

  @ApiProperty({ description: 'Messages (user, assistant, and mid-conversation system); content a string or content blocks' })
  messages: unknown[];

  @ApiPropertyOptional()
  system?: unknown;

  @ApiPropertyOptional()
  stream?: boolean;

  @ApiPropertyOptional({ description: '{user_id}: the end user, recorded in the log' })
  metadata?: { user_id?: string };

  @ApiPropertyOptional({ description: 'MCP connector servers: {type: "url", url: "https://…", name, tool_configuration, authorization_token (never stored)}' })
  mcp_servers?: unknown[];
}
