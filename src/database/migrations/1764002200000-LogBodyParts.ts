import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Log bodies stored as their parts (issue 33, CONTRACT section 14; see
 * src/modules/logging/body-parts/body-parts.ts):
 *
 * - `log_body_parts`: each distinct part once per workspace, keyed by the SHA-256 of its
 *   JSON text after redaction (its first 128 bits, as a uuid: see body-parts.ts). `last_seen_day` is the newest UTC day of a row referencing
 *   it, so retention frees what no kept row references by that date alone. `body` is null
 *   when the part lives in object storage (LOG_BODY_STORE).
 * - `log_body_part_document(body)`: the part's words for search, indexed once per part.
 * - On the log: `part_hashes` (the row's parts in the order of `part_layout`, GIN-indexed:
 *   search finds the rows of the parts it matched), `part_layout` (where each part goes
 *   back in `request_body` / `response_body`, which keep the rest of the bodies) and
 *   `body_bytes` (the bodies' JSON size as received, for GET /v1/logs/storage).
 *
 * Rows written before keep their bodies whole (null layout) and read as before. The new
 * columns are nullable without a default: no row is rewritten.
 */
export class LogBodyParts1764002200000 implements MigrationInterface {
  name = 'LogBodyParts1764002200000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table log_body_parts (
        workspace_id uuid not null,
        hash uuid not null,
        body jsonb,
        bytes integer not null,
        first_seen_at timestamptz not null default now(),
        last_seen_day date not null,
        primary key (workspace_id, hash))`);
    await db.query(`create index log_body_parts_last_seen on log_body_parts (last_seen_day)`);
    await db.query(`
      create function log_body_part_document(body jsonb) returns tsvector
      language sql immutable parallel safe
      as $$ select to_tsvector('simple'::regconfig, left(coalesce(body::text, ''), 100000)) $$`);
    await db.query(`create index log_body_parts_search on log_body_parts using gin (log_body_part_document(body))`);
    await db.query(`alter table request_logs add column part_hashes uuid[], add column part_layout jsonb, add column body_bytes integer`);
    await db.query(`create index request_logs_part_hashes on request_logs using gin (part_hashes)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop index request_logs_part_hashes`);
    await db.query(`alter table request_logs drop column part_hashes, drop column part_layout, drop column body_bytes`);
    await db.query(`drop table log_body_parts`);
    await db.query(`drop function log_body_part_document(jsonb)`);
  }
}
