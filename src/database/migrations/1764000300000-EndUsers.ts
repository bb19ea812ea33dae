import { MigrationInterface, QueryRunner } from 'typeorm';

export class EndUsers1764000300000 implements MigrationInterface {
  name = 'EndUsers1764000300000';

  async up(db: QueryRunner): Promise<void> {
    // End users (the `user` of requests) with a budget of their own.
    await db.query(`
      create table end_users (
        id uuid primary key default gen_random_uuid(),
        "user" text not null,
        budget_limit_usd numeric(14, 6),
        budget_period text,
        metadata jsonb not null default '{}',
        deleted_at timestamptz(3),
        created_at timestamptz(3) not null default now(),
        updated_at timestamptz(3) not null default now()
      )`);
    await db.query(`create unique index end_users_user_live on end_users ("user") where deleted_at is null`);
    await db.query(`create index end_users_created on end_users (created_at desc, id desc) where deleted_at is null`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table end_users`);
  }
}
