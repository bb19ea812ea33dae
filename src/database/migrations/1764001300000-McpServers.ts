import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The MCP server registry (CONTRACT section 10), and who may use which server: API keys
 * and virtual keys name the servers (slugs) and, per server, the tools they may use.
 * Null everywhere keeps what existing keys did (no MCP for user keys, every server for admins).
 */
export class McpServers1764001300000 implements MigrationInterface {
  name = 'McpServers1764001300000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table mcp_servers (
        id uuid primary key default gen_random_uuid(),
        name text not null,
        slug text not null,
        url text not null,
        headers jsonb not null default '{}',
        allowed_tools jsonb,
        description text,
        deleted_at timestamptz(3),
        created_at timestamptz(3) not null default now(),
        updated_at timestamptz(3) not null default now()
      )`);
    // A deleted server's slug may be reused.
    await db.query(`create unique index mcp_servers_slug_uq on mcp_servers (slug) where deleted_at is null`);
    await db.query(`create index mcp_servers_created on mcp_servers (created_at desc, id desc) where deleted_at is null`);
    for (const table of ['api_keys', 'virtual_keys']) {
      await db.query(`alter table ${table} add column allowed_mcp_servers jsonb, add column allowed_tools jsonb`);
    }
  }

  async down(db: QueryRunner): Promise<void> {
    for (const table of ['api_keys', 'virtual_keys']) {
      await db.query(`alter table ${table} drop column allowed_mcp_servers, drop column allowed_tools`);
    }
    await db.query(`drop table mcp_servers`);
  }
}
