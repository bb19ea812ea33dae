import { MigrationInterface, QueryRunner } from 'typeorm';

/** The request fields a translation ignored (CONTRACT section 12: "named in the response header and in the log"). */
export class LogIgnoredParams1764000810000 implements MigrationInterface {
  name = 'LogIgnoredParams1764000810000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('alter table request_logs add column ignored_params jsonb');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('alter table request_logs drop column ignored_params');
  }
}
