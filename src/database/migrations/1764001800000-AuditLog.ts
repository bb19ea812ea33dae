import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who changed what (CONTRACT section 13): one row per admin change, written by the audit
 * interceptor in the request that made it. `before` and `after` are the resource as its
 * admin GET shows it (secrets already masked); `workspace_id` is null for changes of the
 * whole organisation (prices). Rows are paged newest first, per workspace or across all.
 */
export class AuditLog1764001800000 implements MigrationInterface {
  name = 'AuditLog1764001800000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`create table audit_log (
      id uuid primary key,
      created_at timestamptz not null,
      workspace_id uuid,
      actor_kind text not null,
      actor_id text not null,
      actor_name text not null,
      action text not null,
      resource text not null,
      resource_id text,
      before jsonb,
      after jsonb
    )`);
    await db.query('create index audit_log_newest on audit_log (created_at desc, id desc)');
    await db.query('create index audit_log_workspace_newest on audit_log (workspace_id, created_at desc, id desc)');
    await db.query('create index audit_log_resource_newest on audit_log (resource, resource_id, created_at desc, id desc)');
    await db.query('create index audit_log_actor_newest on audit_log (actor_id, created_at desc, id desc)');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('drop table audit_log');
  }
}
