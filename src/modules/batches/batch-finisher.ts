import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { BatchResults } from './batch-results';
import { newGatewayFileId } from './batch-files.service';
import { RUNNING_STATUSES, type BatchRow, type BatchStatus } from './batch-shapes';

/** Why a line ended without running, as its result says. */
export interface LineError {
  code: string;
  message: string;
}

/**
 * How a batch ends, whoever ran it (BatchRunner line by line, NativeBatchPoller at its
 * provider): the lines left pending end all alike, and a batch with no line pending or in
 * flight ends with its output and error files, once, whichever instance gets there.
 */
@Injectable()
export class BatchFinisher {
  constructor(
    private readonly db: DataSource,
    private readonly results: BatchResults,
  ) {}

  /** The batch's lines not yet sent end as `status` (cancelled, expired, or errored when a budget is reached or a provider gave no result). */
  async endPending(batchId: string, status: 'cancelled' | 'expired' | 'errored', error: LineError | null): Promise<void> {
    await this.db.query(`update batch_lines set status = $2, error = $3, ended_at = now() where batch_id = $1 and status = 'pending'`, [
      batchId,
      status,
      error ? JSON.stringify(error) : null,
    ]);
  }

  /**
   * Ends a batch with no line pending or in flight: `cancelled` once a cancel was asked,
   * `expired` when a line expired, else `completed`, with its output and error files.
   * True when it ended now.
   */
  async finishIfDone(batchId: string): Promise<boolean> {
    // Two probes of the partial indexes first: a running batch is not read whole on every tick.
    const [{ open }] = await this.db.query<{ open: boolean }[]>(
      `select exists (select 1 from batch_lines where batch_id = $1 and status = 'pending')
           or exists (select 1 from batch_lines where batch_id = $1 and status = 'sending') as open`,
      [batchId],
    );
    if (open) return false;
    return this.db.transaction(async (q) => {
      const [batch] = await q.query<BatchRow[]>(
        `select id, status, expires_at, workspace_id, api_key_id from batches where id = $1 and status = any($2) for update skip locked`,
        [batchId, RUNNING_STATUSES],
      );
      if (!batch) return false;
      const counts = await q.query<{ status: string; n: string }[]>(`select status, count(*) as n from batch_lines where batch_id = $1 group by status`, [
        batchId,
      ]);
      const count = (status: string) => Number(counts.find((row) => row.status === status)?.n ?? 0);
      if (count('pending') || count('sending')) return false;
      const status: BatchStatus = batch.status === 'cancelling' ? 'cancelled' : count('expired') ? 'expired' : 'completed';
      const bytes = await this.results.fileBytes(batchId);
      const file = async (purpose: string, size: number) => {
        if (!size) return null;
        const id = newGatewayFileId();
        await q.query(`insert into batch_files (id, workspace_id, api_key_id, purpose, filename, bytes, batch_id) values ($1, $2, $3, $4, $5, $6, $7)`, [
          id,
          batch.workspace_id,
          batch.api_key_id,
          purpose,
          `${batchId}_${purpose === 'batch_output' ? 'output' : 'error'}.jsonl`,
          size,
          batchId,
        ]);
        return id;
      };
      const output = await file('batch_output', bytes.output);
      const errors = await file('batch_error', bytes.error);
      const endedAt = status === 'completed' ? 'completed_at' : status === 'cancelled' ? 'cancelled_at' : 'expired_at';
      await q.query(
        `update batches set status = $2, finalizing_at = coalesce(finalizing_at, now()), ${endedAt} = now(), output_file_id = $3, error_file_id = $4,
           lease_owner = null, leased_until = null where id = $1`,
        [batchId, status, output, errors],
      );
      return true;
    });
  }

  /**
   * Ends a batch its provider failed (a native batch that did not pass the provider's
   * validation): `failed` with the provider's errors, its lines not run errored with the
   * first of them. Like the provider's, a failed batch has no output or error file.
   */
  async fail(batchId: string, errors: { code: string; message: string }[]): Promise<void> {
    const first = errors[0] ?? { code: 'batch_failed', message: 'The provider failed the batch' };
    await this.db.transaction(async (q) => {
      await q.query(`update batch_lines set status = 'errored', error = $2, ended_at = now() where batch_id = $1 and status = 'pending'`, [
        batchId,
        JSON.stringify({ code: first.code, message: first.message }),
      ]);
      await q.query(
        `update batches set status = 'failed', failed_at = now(), errors = $2, lease_owner = null, leased_until = null where id = $1 and status = any($3)`,
        [batchId, JSON.stringify(errors), RUNNING_STATUSES],
      );
    });
  }
}
