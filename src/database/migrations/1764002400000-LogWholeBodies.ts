import { MigrationInterface, QueryRunner } from 'typeorm';

/** The log rows whose bodies are still whole: written before parts (migration LogBodyParts), `body_bytes` null. */
export const WHOLE_BODIES_SQL = 'body_bytes is null and (request_body is not null or response_body is not null)';

/**
 * A partial index of the log rows written before bodies were stored as parts, by
 * `(created_at, id)`: LogBodyBackfill reads them newest first in keyset batches from it,
 * so a batch reads the rows it moves and no other, and once the backfill is done its
 * hourly check is one probe of an empty index. New rows never enter it (the log writer
 * sets `body_bytes` on every row with a body), and it shrinks as the backfill moves rows.
 *
 * Plain CREATE INDEX (the migrations run in one transaction, so not CONCURRENTLY): on a
 * large log it holds inserts back for one read of the log; the log writer keeps the rows
 * in its journal meanwhile.
 */
export class LogWholeBodies1764002400000 implements MigrationInterface {
  name = 'LogWholeBodies1764002400000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`create index request_logs_whole_bodies on request_logs (created_at, id) where ${WHOLE_BODIES_SQL}`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop index request_logs_whole_bodies`);
  }
}
