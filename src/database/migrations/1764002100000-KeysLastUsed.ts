import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `last_used_at` on API keys and virtual keys (issue 25): the newest created_at of the key's
 * log rows, set by the log writer once per stored batch (off the request path). Null until a
 * request with the key is stored. Filled here from the log rows already stored.
 */
export class KeysLastUsed1764002100000 implements MigrationInterface {
  name = 'KeysLastUsed1764002100000';

  async up(db: QueryRunner): Promise<void> {
    for (const [table, column] of [
      ['api_keys', 'api_key_id'],
      ['virtual_keys', 'virtual_key_id'],
    ]) {
      await db.query(`alter table ${table} add column last_used_at timestamptz`);
      await db.query(
        `update ${table} k set last_used_at = u.at from (select ${column} as id, max(created_at) as at from request_logs where ${column} is not null group by 1) u where k.id = u.id`,
      );
    }
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`alter table virtual_keys drop column last_used_at`);
    await db.query(`alter table api_keys drop column last_used_at`);
  }
}
