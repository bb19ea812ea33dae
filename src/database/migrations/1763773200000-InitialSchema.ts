import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763773200000 implements MigrationInterface {
  name = 'InitialSchema1763773200000';

  async up(db: QueryRunner): Promise<void> {
    // Admin tables keep milliseconds only: their list cursor carries an ISO timestamp.
    await db.query(`
      create table api_keys (
        id uuid primary key default gen_random_uuid(),
        name text not null,
        role text not null check (role in ('admin', 'user')),
        key_hash text not null,
        key_hint text not null,
        budget_limit_usd numeric(14, 6),
        budget_period text check (budget_period in ('daily', 'weekly', 'monthly')),
        rate_limits jsonb not null default '[]',
        expires_at timestamptz,
        metadata jsonb not null default '{}',
        is_bootstrap boolean not null default false,
        revoked_at timestamptz,
        created_at timestamptz(3) not null default now(),
        updated_at timestamptz(3) not null default now()
      )`);
    await db.query(`create unique index api_keys_key_hash_uq on api_keys (key_hash)`);

    await db.query(`
      create table virtual_keys (
        id uuid primary key default gen_random_uuid(),
        name text not null,
        slug text not null,
        provider text not null,
        encrypted_key text,
        key_hint text,
        provider_organization text,
        provider_project text,
        custom_host text,
        provider_options jsonb not null default '{}',
        budget_limit_usd numeric(14, 6),
        budget_period text check (budget_period in ('daily', 'weekly', 'monthly')),
        rate_limits jsonb not null default '[]',
        allowed_models jsonb,
        expires_at timestamptz,
        disabled boolean not null default false,
        deleted_at timestamptz,
        created_at timestamptz(3) not null default now(),
        updated_at timestamptz(3) not null default now()
      )`);
    // A deleted key's slug may be reused.
    await db.query(`create unique index virtual_keys_slug_uq on virtual_keys (slug) where deleted_at is null`);

    await db.query(`
      create table configs (
        id uuid primary key default gen_random_uuid(),
        name text not null,
        slug text not null,
        config jsonb not null,
        version integer not null default 1,
        deleted_at timestamptz,
        created_at timestamptz(3) not null default now(),
        updated_at timestamptz(3) not null default now()
      )`);
    await db.query(`create unique index configs_slug_uq on configs (slug) where deleted_at is null`);

    await db.query(`
      create table request_logs (
        id uuid primary key,
        trace_id text not null,
        created_at timestamptz not null,
        operation text not null,
        api_key_id uuid,
        virtual_key_id uuid,
        config_id uuid,
        prompt_id uuid,
        prompt_version integer,
        provider text,
        model text,
        status_code integer not null,
        is_stream boolean not null default false,
        request_headers jsonb,
        request_body jsonb,
        response_body jsonb,
        prompt_tokens integer,
        completion_tokens integer,
        total_tokens integer,
        cached_tokens integer,
        reasoning_tokens integer,
        cost_usd numeric(20, 10),
        latency_ms integer not null,
        ttft_ms integer,
        end_user text,
        metadata jsonb not null default '{}',
        error jsonb,
        retry_count integer not null default 0,
        cache_status text,
        target_index text
      )`);
    // Every list filter pages newest-first by id (UUIDv7 = time order) within its value.
    for (const column of ['trace_id', 'api_key_id', 'virtual_key_id', 'end_user', 'model', 'provider', 'status_code']) {
      await db.query(`create index request_logs_${column}_idx on request_logs (${column}, id desc)`);
    }
    await db.query(`create index request_logs_created_at_idx on request_logs (created_at)`);
    await db.query(`create index request_logs_metadata_idx on request_logs using gin (metadata jsonb_path_ops)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table request_logs`);
    await db.query(`drop table configs`);
    await db.query(`drop table virtual_keys`);
    await db.query(`drop table api_keys`);
  }
}
