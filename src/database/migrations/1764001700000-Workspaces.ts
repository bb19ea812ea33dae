import { MigrationInterface, QueryRunner } from 'typeorm';
import { DEFAULT_WORKSPACE_ID } from '../../modules/workspaces/workspace.entity';

/** Tables whose rows belong to a workspace, with the unique index each had on its own and the column it covers. */
const SCOPED: { table: string; index: string; column: string }[] = [
  { table: 'virtual_keys', index: 'virtual_keys_slug_uq', column: 'slug' },
  { table: 'configs', index: 'configs_slug_uq', column: 'slug' },
  { table: 'prompts', index: 'prompts_slug_live', column: 'slug' },
  { table: 'mcp_servers', index: 'mcp_servers_slug_uq', column: 'slug' },
  { table: 'end_users', index: 'end_users_user_live', column: '"user"' },
];

/**
 * Workspaces and roles (CONTRACT section 13). Every existing row moves into the workspace
 * `default` (a fixed id, also each column's default, so nothing is rewritten row by row);
 * slugs become unique per workspace. Roles: `user` keys become `member`, the bootstrap key
 * an organisation `owner`; `admin` keys stay admins, of `default`.
 */
export class Workspaces1764001700000 implements MigrationInterface {
  name = 'Workspaces1764001700000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table workspaces (
        id uuid primary key default gen_random_uuid(),
        name text not null,
        slug text not null,
        budget_limit_usd numeric(14, 6),
        budget_period text,
        rate_limits jsonb not null default '[]',
        deleted_at timestamptz(3),
        created_at timestamptz(3) not null default now(),
        updated_at timestamptz(3) not null default now()
      )`);
    await db.query(`create unique index workspaces_slug_uq on workspaces (slug) where deleted_at is null`);
    await db.query(`insert into workspaces (id, name, slug) values ($1, 'Default', 'default')`, [DEFAULT_WORKSPACE_ID]);

    await db.query(`alter table api_keys add column workspace_id uuid not null default '${DEFAULT_WORKSPACE_ID}' references workspaces (id)`);
    await db.query(`create index api_keys_workspace on api_keys (workspace_id)`);
    for (const { table, index, column } of SCOPED) {
      await db.query(`alter table ${table} add column workspace_id uuid not null default '${DEFAULT_WORKSPACE_ID}' references workspaces (id)`);
      await db.query(`drop index ${index}`);
      await db.query(`create unique index ${index} on ${table} (workspace_id, ${column}) where deleted_at is null`);
    }
    // The log: no foreign key (rows outlive what they name), an index for each workspace's newest-first pages.
    await db.query(`alter table request_logs add column workspace_id uuid not null default '${DEFAULT_WORKSPACE_ID}'`);
    await db.query(`create index request_logs_workspace_created on request_logs (workspace_id, created_at desc, id desc)`);

    await db.query(`alter table api_keys drop constraint api_keys_role_check`);
    await db.query(`update api_keys set role = 'member' where role = 'user'`);
    await db.query(`update api_keys set role = 'owner' where is_bootstrap`);
    await db.query(`alter table api_keys add constraint api_keys_role_check check (role in ('owner', 'admin', 'member', 'viewer'))`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`alter table api_keys drop constraint api_keys_role_check`);
    await db.query(`update api_keys set role = 'admin' where role = 'owner'`);
    await db.query(`update api_keys set role = 'user' where role in ('member', 'viewer')`);
    await db.query(`alter table api_keys add constraint api_keys_role_check check (role in ('admin', 'user'))`);
    await db.query(`drop index request_logs_workspace_created`);
    await db.query(`alter table request_logs drop column workspace_id`);
    for (const { table, index, column } of SCOPED) {
      await db.query(`drop index ${index}`);
      await db.query(`alter table ${table} drop column workspace_id`);
      await db.query(`create unique index ${index} on ${table} (${column}) where deleted_at is null`);
    }
    await db.query(`alter table api_keys drop column workspace_id`);
    await db.query(`drop table workspaces`);
  }
}
