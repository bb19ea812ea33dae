import { MigrationInterface, QueryRunner } from 'typeorm';

export class RateCounters1764000200000 implements MigrationInterface {
  name = 'RateCounters1764000200000';

  async up(db: QueryRunner): Promise<void> {
    // Fixed windows: one row per key, limit (e.g. "requests:rpm") and window; old windows are never read again.
    await db.query(`
      create table rate_counters (
        scope text not null,
        scope_id uuid not null,
        limit_key text not null,
        window_start timestamptz(3) not null,
        used bigint not null default 0,
        primary key (scope, scope_id, limit_key, window_start)
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table rate_counters`);
  }
}
