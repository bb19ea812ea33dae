/**
 * The answers of `GET /v1/analytics/batches` and `/batches/{id}` (batch-analytics.service.ts)
 * as the OpenAPI document describes them, for the dashboard's generated types. Swagger
 * metadata only: the service builds the objects from its SQL rows.
 */
import { ApiProperty } from '@nestjs/swagger';
import type { BatchShape, BatchStatus } from '../../batches/batch-shapes';
import { BATCH_SHAPES, BATCH_STATUSES } from './batch-analytics-query.dto';

/** A batch's lines by status (`batch_lines`), and how many it has. */
export class BatchLinesResponseDto {
  @ApiProperty({ type: 'integer', description: 'Not sent yet' })
  pending: number;

  @ApiProperty({ type: 'integer', description: 'Sent, the answer not in yet' })
  sending: number;

  @ApiProperty({ type: 'integer', description: 'Answered with a success (2xx)' })
  succeeded: number;

  @ApiProperty({ type: 'integer', description: 'Answered with an error status' })
  failed: number;

  @ApiProperty({ type: 'integer', description: 'Not sent or not answered: an invalid line, a budget reached, an instance stopped mid-flight' })
  errored: number;

  @ApiProperty({ type: 'integer', description: 'Not sent within the completion window' })
  expired: number;

  @ApiProperty({ type: 'integer', description: 'Not sent: the batch was cancelled' })
  cancelled: number;

  @ApiProperty({ type: 'integer', description: 'Every line of the batch; those ended are total − pending − sending' })
  total: number;
}

/** A batch as analytics see it: where it stands, its lines and what they cost so far. */
export class BatchAnalyticsResponseDto {
  @ApiProperty({ enum: ['analytics.batch'] })
  object: 'analytics.batch';

  @ApiProperty({ example: 'batch_0196f0c2a1b27c3d8e9f0a1b2c3d4e5f' })
  id: string;

  @ApiProperty({ enum: BATCH_SHAPES, description: '`openai` (`/v1/batches`) or `anthropic` (`/v1/messages/batches`)' })
  shape: BatchShape;

  @ApiProperty({ description: 'The route each line is sent to', example: '/v1/chat/completions' })
  endpoint: string;

  @ApiProperty({ enum: BATCH_STATUSES, description: "OpenAI's statuses, kept for both shapes" })
  status: BatchStatus;

  @ApiProperty({ enum: ['gateway', 'native'], description: '`gateway`: its lines run by the gateway one by one; `native`: run by its provider' })
  mode: 'gateway' | 'native';

  @ApiProperty({ type: String, nullable: true, description: 'The provider a native batch runs at' })
  provider: string | null;

  @ApiProperty({ example: '24h' })
  completion_window: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  in_progress_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When a cancel was asked for' })
  cancelling_at: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When it ended (completed, failed, expired or cancelled); null while it runs',
  })
  ended_at: string | null;

  @ApiProperty({ format: 'date-time', description: 'The end of its completion window' })
  expires_at: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The API key that created it' })
  api_key_id: string | null;

  @ApiProperty({ type: String, nullable: true, description: "That key's name; null once the key is deleted" })
  api_key_name: string | null;

  @ApiProperty({ type: BatchLinesResponseDto })
  lines: BatchLinesResponseDto;

  @ApiProperty({ description: "Its log rows' (nested failed tries included), so far" })
  prompt_tokens: number;

  @ApiProperty({ description: "Its log rows' (nested failed tries included), so far" })
  completion_tokens: number;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: "The sum of its log rows' cost so far; null when some used a model without a known price and none had one (never 0 for an unknown price)",
  })
  cost_usd: number | null;

  @ApiProperty({ type: 'integer', description: 'Its log rows that used a model without a known price: not in cost_usd' })
  unpriced_requests: number;

  @ApiProperty({ type: String, nullable: true, description: "OpenAI's shape: the uploaded JSONL file of its lines" })
  input_file_id: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Once ended: the file of its answers (`/v1/files/{id}/content`), null when none' })
  output_file_id: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Once ended: the file of its failed lines, null when none' })
  error_file_id: string | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, nullable: true, description: 'As given at creation (OpenAI shape)' })
  metadata: Record<string, string> | null;

  @ApiProperty({
    type: 'array',
    nullable: true,
    items: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' }, line: { type: 'integer', nullable: true } },
      required: ['code', 'message'],
    },
    description: 'Why the batch itself failed (not its lines), null when it did not',
  })
  errors: { code: string; message: string; line?: number | null }[] | null;
}

export class BatchAnalyticsListResponseDto {
  @ApiProperty({ enum: ['list'] })
  object: 'list';

  @ApiProperty({ format: 'date-time' })
  from: string;

  @ApiProperty({ format: 'date-time' })
  to: string;

  @ApiProperty({ type: [BatchAnalyticsResponseDto], description: 'Newest first' })
  data: BatchAnalyticsResponseDto[];

  @ApiProperty({ type: String, nullable: true, description: 'The cursor of the next page; null on the last' })
  next_cursor: string | null;
}
