import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batches (issue 37, CONTRACT section 17).
 * - `batch_files`: the JSONL files uploaded with `purpose: "batch"`, kept by the gateway so
 *   that a batch can run at any provider; a batch's output and error files are rows here
 *   too, with no content: they are written from its lines when read.
 * - `batches`: one row per batch, in OpenAI's or Anthropic's shape, run natively at its
 *   provider or by the gateway. The routing headers it was created with are sealed
 *   (they may hold a provider key); `lease_owner`/`leased_until` let one instance at a time
 *   poll a native batch or finalize one.
 * - `batch_lines`: one row per line, leased with `for update skip locked` by the instance
 *   that sends it (`sending`), so that no line is sent twice.
 * - `request_logs.batch_id` and `custom_id`: a line's log row says which batch and line it
 *   ran (null for every other row: constant defaults, no partition rewritten).
 */
export class Batches1764002800000 implements MigrationInterface {
  name = 'Batches1764002800000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table batch_files (
        id text primary key,
        workspace_id uuid not null,
        api_key_id uuid,
        purpose text not null,
        filename text not null,
        bytes bigint not null,
        content bytea,
        batch_id text,
        created_at timestamptz not null default now(),
        expires_at timestamptz
      )`);
    await db.query(`create index batch_files_workspace_created on batch_files (workspace_id, created_at desc)`);
    await db.query(`
      create table batches (
        id text primary key,
        workspace_id uuid not null,
        api_key_id uuid,
        key_hash text not null,
        shape text not null,
        endpoint text not null,
        completion_window text not null,
        mode text not null,
        provider text,
        provider_batch_id text,
        status text not null,
        route_headers text not null,
        input_file_id text,
        output_file_id text,
        error_file_id text,
        metadata jsonb,
        errors jsonb,
        total integer not null default 0,
        created_at timestamptz not null default now(),
        in_progress_at timestamptz,
        expires_at timestamptz not null,
        finalizing_at timestamptz,
        completed_at timestamptz,
        failed_at timestamptz,
        expired_at timestamptz,
        cancelling_at timestamptz,
        cancelled_at timestamptz,
        lease_owner text,
        leased_until timestamptz
      )`);
    await db.query(`create index batches_workspace_created on batches (workspace_id, created_at desc)`);
    await db.query(`create index batches_active on batches (created_at) where status in ('validating', 'in_progress', 'finalizing', 'cancelling')`);
    await db.query(`
      create table batch_lines (
        batch_id text not null references batches (id) on delete cascade,
        line integer not null,
        custom_id text not null,
        body jsonb,
        status text not null,
        lease_owner text,
        leased_until timestamptz,
        status_code integer,
        response jsonb,
        error jsonb,
        request_id text,
        ended_at timestamptz,
        primary key (batch_id, line)
      )`);
    await db.query(`create index batch_lines_pending on batch_lines (batch_id, line) where status = 'pending'`);
    // Few lines are in flight at any time: the runner counts a batch's, and finds those whose lease lapsed, in this small index.
    await db.query(`create index batch_lines_sending on batch_lines (batch_id) where status = 'sending'`);
    await db.query(`alter table request_logs add column batch_id text, add column custom_id text`);
    await db.query(`create index request_logs_batch on request_logs (batch_id) where batch_id is not null`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop index request_logs_batch`);
    await db.query(`alter table request_logs drop column batch_id, drop column custom_id`);
    await db.query(`drop table batch_lines`);
    await db.query(`drop table batches`);
    await db.query(`drop table batch_files`);
  }
}
