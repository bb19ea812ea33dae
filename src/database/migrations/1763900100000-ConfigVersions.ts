import { MigrationInterface, QueryRunner } from 'typeorm';

export class ConfigVersions1763900100000 implements MigrationInterface {
  name = 'ConfigVersions1763900100000';

  async up(db: QueryRunner): Promise<void> {
    // Immutable: a PATCH with a new config adds a row, never rewrites one.
    await db.query(`
      create table config_versions (
        config_id uuid not null references configs (id) on delete cascade,
        version integer not null,
        name text not null,
        config jsonb not null,
        created_at timestamptz(3) not null default now(),
        primary key (config_id, version)
      )`);
    // Earlier versions were overwritten: each config starts its history at its current one,
    // written when the row was last updated.
    await db.query(`
      insert into config_versions (config_id, version, name, config, created_at)
      select id, version, name, config, updated_at from configs`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table config_versions`);
  }
}
