import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batches run at their provider (CONTRACT section 17).
 * - `batch_lines.result_id`: the provider's id of a line's result (OpenAI's `batch_req_…`),
 *   so that the gateway's output and error files carry it as the provider wrote it.
 * - `batch_lines.input_line`: the line of the input file a line came from (OpenAI's shape),
 *   so that a provider's validation errors, which count the lines the gateway sent, name the
 *   client's own line.
 * - An index by `custom_id`: a provider's results are matched to the lines by it.
 * - `batches.provider_progress`: a native batch's requests ended well and badly as its
 *   provider counts them while it runs (its lines are written only at the end).
 */
export class NativeBatches1764002900000 implements MigrationInterface {
  name = 'NativeBatches1764002900000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`alter table batch_lines add column result_id text, add column input_line integer`);
    await db.query(`create index batch_lines_custom_id on batch_lines (batch_id, custom_id)`);
    await db.query(`alter table batches add column provider_progress jsonb`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`alter table batches drop column provider_progress`);
    await db.query(`drop index batch_lines_custom_id`);
    await db.query(`alter table batch_lines drop column result_id, drop column input_line`);
  }
}
