import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isArray, isNotEmpty, isObject, isOneOf, isString, type Rule } from '../../../common/pipes/body-rules';
import { OPENAI_BATCH_ENDPOINTS } from '../batch-lines';

/** A completion window: OpenAI's `24h`, or any `<n>s|m|h|d` from one second to seven days. */
export const COMPLETION_WINDOW = /^([1-9]\d{0,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const MAX_WINDOW_MS = 7 * 86_400_000;

/** The window in milliseconds; null when it is not one. */
export function completionWindowMs(window: string): number | null {
  const match = COMPLETION_WINDOW.exec(window);
  if (!match) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms <= MAX_WINDOW_MS ? ms : null;
}

const completionWindow: Rule = (v, f) =>
  isString(16)(v, f) ?? (completionWindowMs(v as string) === null ? `${f} must be "24h" (or <n>s, m, h or d, up to 7 days)` : null);

/** OpenAI's metadata: at most 16 pairs, keys up to 64 characters, values up to 512. */
export const metadataRule: Rule = (v, f) => {
  const notObject = isObject(v, f);
  if (notObject) return notObject;
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > 16) return `${f} must have at most 16 keys`;
  const bad = entries.find(([key, value]) => key.length > 64 || typeof value !== 'string' || value.length > 512);
  return bad ? `${f}.${bad[0]} must be a string of at most 512 characters, under a key of at most 64` : null;
};

/** `POST /v1/batches` (OpenAI's shape). The checks are here; the lines are read from the file. */
export class BatchCreateDto {
  @ApiProperty({ description: 'A file uploaded with purpose "batch" (JSONL of {custom_id, method, url, body})' })
  input_file_id: string;

  @ApiProperty({ enum: OPENAI_BATCH_ENDPOINTS })
  endpoint: string;

  @ApiProperty({
    example: '24h',
    description: 'OpenAI\'s "24h"; the gateway also runs shorter or longer windows (<n>s, m, h or d, up to 7 days) when it runs the batch itself',
  })
  completion_window: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  metadata?: Record<string, string> | null;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, {
      required: {
        input_file_id: all(isString(256), isNotEmpty),
        endpoint: isOneOf(OPENAI_BATCH_ENDPOINTS),
        completion_window: completionWindow,
      },
      optional: { metadata: (v, f) => (v === null ? null : metadataRule(v, f)) },
    });
  }
}

/** `POST /v1/messages/batches` (Anthropic's shape): up to 100,000 requests, each `{custom_id, params}` of a Messages request. */
export class MessageBatchCreateDto {
  @ApiProperty({ type: 'array', items: { type: 'object', properties: { custom_id: { type: 'string' }, params: { type: 'object' } } } })
  requests: { custom_id: string; params: Record<string, unknown> }[];

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, { required: { requests: isArray(1, 100_000) }, optional: {} });
  }
}
