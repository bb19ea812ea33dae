import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID, Matches } from 'class-validator';
import { ListQueryDto } from '../../../common/http/list.dto';
import { PeriodQueryDto } from './period-query.dto';
import type { BatchShape, BatchStatus } from '../../batches/batch-shapes';

/** A batch's id as the gateway makes them: `batch_…` (OpenAI's shape) or `msgbatch_…` (Anthropic's), 32 hex digits. */
export const BATCH_ID = /^(batch|msgbatch)_[0-9a-f]{32}$/;

/** Every status a batch row can have (batch-shapes.ts): a status added there fails to compile here until it is listed. */
const STATUSES = {
  validating: true,
  in_progress: true,
  finalizing: true,
  completed: true,
  failed: true,
  expired: true,
  cancelling: true,
  cancelled: true,
} satisfies Record<BatchStatus, true>;
export const BATCH_STATUSES = Object.keys(STATUSES) as BatchStatus[];
const STATUS_LIST = new RegExp(`^(?:${BATCH_STATUSES.join('|')})(?:,(?:${BATCH_STATUSES.join('|')}))*$`);

/** A page's cursor: `<created_at in microseconds since 1970>~<id>` of the last batch of the previous page. */
export const BATCH_CURSOR = /^(\d{1,17})~((?:batch|msgbatch)_[0-9a-f]{32})$/;

const SHAPES = { openai: true, anthropic: true } satisfies Record<BatchShape, true>;
export const BATCH_SHAPES = Object.keys(SHAPES) as BatchShape[];

/**
 * `GET /v1/analytics/batches`: the batches created in the period (`from`, `to`), newest first; `cursor` is
 * the `next_cursor` of the previous page.
 */
export class BatchAnalyticsQueryDto extends IntersectionType(PeriodQueryDto, ListQueryDto) {
  // The creation time (microseconds since 1970) and id of the previous page's last batch.
  @Matches(BATCH_CURSOR, { message: 'cursor must be the next_cursor of a previous page' })
  declare cursor?: string;

  @ApiPropertyOptional({
    description: `Status(es), comma-separated: ${BATCH_STATUSES.join(', ')} (OpenAI's, kept for both shapes)`,
    example: 'validating,in_progress,finalizing,cancelling',
  })
  @IsOptional()
  @Matches(STATUS_LIST, { message: `status must be batch statuses (${BATCH_STATUSES.join(', ')}), comma-separated` })
  status?: string;

  @ApiPropertyOptional({ enum: BATCH_SHAPES, description: '`openai` (`/v1/batches`) or `anthropic` (`/v1/messages/batches`)' })
  @IsOptional()
  @IsIn(BATCH_SHAPES, { message: `shape must be one of ${BATCH_SHAPES.join(', ')}` })
  shape?: BatchShape;

  @ApiPropertyOptional({ description: 'The API key that created the batches' })
  @IsOptional()
  @IsUUID()
  api_key_id?: string;
}

/** `GET /v1/analytics/batches/{id}`. */
export class BatchIdParamDto {
  @ApiProperty({ description: 'The batch id (`batch_…` or `msgbatch_…`)', example: 'batch_0196f0c2a1b27c3d8e9f0a1b2c3d4e5f' })
  @Matches(BATCH_ID, { message: 'id must be a batch id (batch_… or msgbatch_…)' })
  id: string;
}
