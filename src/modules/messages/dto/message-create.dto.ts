import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isArray, isBoolean, isInt, isNumber, isObject, isString, Rule } from '../../../common/pipes/body-rules';
import { mcpServers } from './mcp-servers.rules';

const ROLES = ['user', 'assistant'];

const eachMessage: Rule = (messages) => {
  const list = messages as unknown[];
  for (let i = 0; i < list.length; i++) {
    const m = list[i] as Record<string, unknown> | null;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return `messages[${i}] must be an object`;
    if (typeof m.role !== 'string' || !ROLES.includes(m.role)) return `messages[${i}].role must be one of the following values: ${ROLES.join(', ')}`;
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) return `messages[${i}].content must be a string or an array of content blocks`;
    if (Array.isArray(m.content)) {
      const j = m.content.findIndex((block) => typeof block !== 'object' || block === null || typeof (block as { type?: unknown }).type !== 'string');
      if (j !== -1) return `messages[${i}].content[${j}] must be a content block with a type`;
    }
  }
  return null;
};

const system: Rule = (v, f) => (typeof v === 'string' || Array.isArray(v) ? null : `${f} must be a string or an array of text blocks`);

const stringList: Rule = (v, f) => (Array.isArray(v) && v.every((s) => typeof s === 'string') ? null : `${f} must be an array of strings`);

/**
 * The fields of a Messages request the gateway reads or can check (Anthropic's API);
 * any other field passes to an Anthropic provider untouched.
 */
export const MESSAGE_CREATE_SCHEMA = {
  required: {
    model: isString(256),
    max_tokens: isInt(1),
    messages: all(isArray(1, 100_000), eachMessage),
  },
  optional: {
    system,
    stream: isBoolean,
    metadata: isObject,
    temperature: isNumber(0, 1),
    top_p: isNumber(0, 1),
    top_k: isInt(0),
    stop_sequences: stringList,
    tools: isArray(),
    tool_choice: isObject,
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

  @ApiProperty({ description: 'Messages of role user or assistant; content a string or content blocks' })
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
