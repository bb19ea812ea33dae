import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * People who sign in to the dashboard with OpenID Connect (one row per issuer and subject,
 * made at their first sign-in) and the dashboard's server-side sessions (CONTRACT section 13).
 * A session row is keyed by the SHA-256 of its cookie's token, so the table holds no usable
 * secret; a session made from an API key (`/auth/key-session`) names the key by its hash, and
 * ends when the key is revoked.
 */
export class UsersSessions1764001900000 implements MigrationInterface {
  name = 'UsersSessions1764001900000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table users (
        id uuid primary key default gen_random_uuid(),
        issuer text not null,
        subject text not null,
        email text,
        name text,
        created_at timestamptz(3) not null default now(),
        last_sign_in_at timestamptz(3) not null default now()
      )`);
    await db.query(`create unique index users_issuer_subject_uq on users (issuer, subject)`);
    await db.query(`
      create table sessions (
        id text primary key,
        user_id uuid references users (id) on delete cascade,
        api_key_hash text,
        memberships jsonb not null default '[]',
        csrf_token_hash text not null,
        created_at timestamptz(3) not null default now(),
        expires_at timestamptz(3) not null,
        revoked_at timestamptz(3),
        constraint sessions_owner_check check ((user_id is null) <> (api_key_hash is null))
      )`);
    await db.query(`create index sessions_user on sessions (user_id)`);
    await db.query(`create index sessions_expires on sessions (expires_at)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table sessions`);
    await db.query(`drop table users`);
  }
}
