import { MigrationInterface, QueryRunner } from 'typeorm';

export class Prompts1764000000000 implements MigrationInterface {
  name = 'Prompts1764000000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table prompts (
        id uuid primary key default gen_random_uuid(),
        name text not null,
        slug text not null,
        template jsonb not null,
        version integer not null default 1,
        deleted_at timestamptz(3),
        created_at timestamptz(3) not null default now(),
        updated_at timestamptz(3) not null default now()
      )`);
    // A deleted prompt frees its slug.
    await db.query(`create unique index prompts_slug_live on prompts (slug) where deleted_at is null`);
    await db.query(`create index prompts_created on prompts (created_at desc, id desc) where deleted_at is null`);
    // Immutable: a PATCH adds a row, never rewrites one.
    await db.query(`
      create table prompt_versions (
        prompt_id uuid not null references prompts (id) on delete cascade,
        version integer not null,
        name text not null,
        template jsonb not null,
        created_at timestamptz(3) not null default now(),
        primary key (prompt_id, version)
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table prompt_versions`);
    await db.query(`drop table prompts`);
  }
}
