import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Prices an operator sets at run time (`POST /v1/prices`): a negotiated discount, a
 * self-hosted model. They win over the catalog. Token rates in USD per million tokens,
 * per-unit prices in USD per unit; null where the model has no such rate.
 */
export class PriceOverrides1764001000000 implements MigrationInterface {
  name = 'PriceOverrides1764001000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`create table price_overrides (
      provider text not null,
      model text not null,
      input double precision not null,
      output double precision not null,
      cached_input double precision,
      cache_write double precision,
      reasoning double precision,
      audio_input double precision,
      cached_audio_input double precision,
      audio_output double precision,
      per_image double precision,
      per_second double precision,
      per_character double precision,
      per_search double precision,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (provider, model)
    )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('drop table price_overrides');
  }
}
