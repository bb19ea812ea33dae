import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { checkBody, isArray, isString } from '../../../common/pipes/body-rules';

/**
 * What the gateway acts on in a count_tokens body: the model (routing) and that
 * `messages` is a list (the estimate walks it). Anything else goes to a vendor that
 * counts as it came, and the vendor says what it refuses (CONTRACT section 12).
 */
export const MESSAGE_COUNT_TOKENS_SCHEMA = {
  required: {
    model: isString(256),
    messages: isArray(0, 100_000),
  },
  optional: {},
};

/** `POST /v1/messages/count_tokens` (Anthropic's format). The OpenAPI description; the checks are MESSAGE_COUNT_TOKENS_SCHEMA. */
export class MessageCountTokensDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, MESSAGE_COUNT_TOKENS_SCHEMA);
  }

  @ApiProperty({ example: '@anthropic-prod/claude-sonnet-4-5', description: 'Model name, or @<virtual-key-slug>/<model>' })
  model: string;

  @ApiProperty({ example: [{ role: 'user', content: 'Hello' }], description: 'The conversation, as for POST /v1/messages' })
  messages: unknown[];

  @ApiPropertyOptional({ description: 'System prompt: a string or text blocks' })
  system?: unknown;

  @ApiPropertyOptional({ description: 'Tool definitions, counted with the prompt' })
  tools?: unknown[];
}
