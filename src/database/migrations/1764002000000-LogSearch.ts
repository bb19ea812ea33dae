import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Full-text search over the log's request and response bodies (issue 25): an expression
 * GIN index on `request_log_document(request_body, response_body)`, the bodies' JSON text
 * (the first 20,000 characters of each, so a document stays far below PostgreSQL's 1 MB
 * limit of a tsvector and an over-long word is only skipped) as `simple` words. The index
 * is kept by the log writer's batched INSERTs, off the request path; no column is added,
 * so no row is rewritten. Queries must use the same function to use the index.
 */
export class LogSearch1764002000000 implements MigrationInterface {
  name = 'LogSearch1764002000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create function request_log_document(request_body jsonb, response_body jsonb) returns tsvector
      language sql immutable parallel safe
      as $$ select to_tsvector('simple'::regconfig, left(coalesce(request_body::text, ''), 20000) || ' ' || left(coalesce(response_body::text, ''), 20000)) $$`);
    await db.query(`create index request_logs_search on request_logs using gin (request_log_document(request_body, response_body))`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop index request_logs_search`);
    await db.query(`drop function request_log_document(jsonb, jsonb)`);
  }
}
