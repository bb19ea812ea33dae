import { MigrationInterface, QueryRunner } from 'typeorm';

export class ResponseCache1763900000000 implements MigrationInterface {
  name = 'ResponseCache1763900000000';

  async up(db: QueryRunner): Promise<void> {
    // Unlogged would be faster, but a crash would empty it; a cache that survives restarts saves provider calls.
    await db.query(`
      create table response_cache (
        key text primary key,
        value jsonb not null,
        expires_at timestamptz not null,
        created_at timestamptz not null default now()
      )`);
    // The periodic purge looks rows up by expiry.
    await db.query(`create index response_cache_expires_at_idx on response_cache (expires_at)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table response_cache`);
  }
}
