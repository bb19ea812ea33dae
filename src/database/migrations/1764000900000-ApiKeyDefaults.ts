import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An API key's default route (CONTRACT section 12): the virtual key or config used when a
 * request names none, for clients that can send only a base URL and an API key.
 */
export class ApiKeyDefaults1764000900000 implements MigrationInterface {
  name = 'ApiKeyDefaults1764000900000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('alter table api_keys add column default_virtual_key text, add column default_config text');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('alter table api_keys drop column default_virtual_key, drop column default_config');
  }
}
