/** A batch's row (table `batches`). */
export interface BatchRow {
  id: string;
  workspace_id: string;
  api_key_id: string | null;
  key_hash: string;
  shape: BatchShape;
  endpoint: string;
  completion_window: string;
  mode: 'gateway' | 'native';
  /** A native batch's progress as its provider counts it while it runs (its lines are written at the end). */
  provider_progress: { succeeded: number; failed: number; total: number } | null;
  provider: string | null;
  provider_batch_id: string | null;
  status: BatchStatus;
  route_headers: string;
  input_file_id: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  metadata: Record<string, string> | null;
  errors: { code: string; message: string; line?: number | null }[] | null;
  total: number;
  created_at: Date;
  in_progress_at: Date | null;
  expires_at: Date;
  finalizing_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  expired_at: Date | null;
  cancelling_at: Date | null;
  cancelled_at: Date | null;
}

export type BatchShape = 'openai' | 'anthropic';

/** OpenAI's statuses, which the gateway keeps for both shapes (Anthropic's are read from them). */
export type BatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';

export const RUNNING_STATUSES: readonly BatchStatus[] = ['validating', 'in_progress', 'finalizing', 'cancelling'];

/** A batch's lines by status. */
export interface LineCounts {
  pending: number;
  sending: number;
  succeeded: number;
  failed: number;
  errored: number;
  expired: number;
  cancelled: number;
}

const seconds = (date: Date | null): number | null => (date ? Math.floor(date.getTime() / 1000) : null);

/**
 * A batch's lines by status: its own rows, or, for a native batch still running (whose
 * lines are written at its end), its provider's counts over the lines it was sent.
 */
export function countsOf(row: Pick<BatchRow, 'mode' | 'status' | 'provider_progress'>, lines: LineCounts): LineCounts {
  const progress = row.provider_progress;
  if (row.mode !== 'native' || !progress || !RUNNING_STATUSES.includes(row.status)) return lines;
  const pending = Math.max(progress.total - progress.succeeded - progress.failed, 0);
  // The lines never sent (malformed, a model not allowed) are already ended in the rows.
  return { ...lines, pending, sending: 0, succeeded: progress.succeeded, failed: progress.failed };
}

/**
 * OpenAI's Batch object, plus `gateway`: how it runs (`mode`: `gateway` line by line, or
 * `native` at `provider`), its lines by status and what they cost so far (their log rows).
 */
export function toOpenAiBatch(row: BatchRow, lines: LineCounts, costUsd: number | null): Record<string, unknown> {
  const counts = countsOf(row, lines);
  return {
    id: row.id,
    object: 'batch',
    endpoint: row.endpoint,
    errors: row.errors?.length ? { object: 'list', data: row.errors } : null,
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: seconds(row.created_at),
    in_progress_at: seconds(row.in_progress_at),
    expires_at: seconds(row.expires_at),
    finalizing_at: seconds(row.finalizing_at),
    completed_at: seconds(row.completed_at),
    failed_at: seconds(row.failed_at),
    expired_at: seconds(row.expired_at),
    cancelling_at: seconds(row.cancelling_at),
    cancelled_at: seconds(row.cancelled_at),
    request_counts: {
      total: row.total,
      completed: counts.succeeded,
      failed: counts.failed + counts.errored + counts.expired + counts.cancelled,
    },
    metadata: row.metadata,
    gateway: { mode: row.mode, provider: row.provider, lines: counts, cost_usd: costUsd },
  };
}

/** Anthropic's MessageBatch object; `results_url` is the gateway's own, relative to its base URL, once the batch has ended. */
export function toAnthropicBatch(row: BatchRow, lines: LineCounts): Record<string, unknown> {
  const counts = countsOf(row, lines);
  const ended = row.completed_at ?? row.cancelled_at ?? row.expired_at ?? row.failed_at;
  const status = row.status === 'cancelling' ? 'canceling' : ended ? 'ended' : 'in_progress';
  return {
    id: row.id,
    type: 'message_batch',
    processing_status: status,
    request_counts: {
      processing: counts.pending + counts.sending,
      succeeded: counts.succeeded,
      errored: counts.failed + counts.errored,
      canceled: counts.cancelled,
      expired: counts.expired,
    },
    ended_at: ended?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    cancel_initiated_at: row.cancelling_at?.toISOString() ?? null,
    archived_at: null,
    results_url: status === 'ended' ? `/v1/messages/batches/${row.id}/results` : null,
  };
}
