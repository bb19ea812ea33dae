import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a request was billed in units other than tokens (`{search_units, web_searches,
 * audio_seconds, characters}`, only those it used), so a row priced per search, second or
 * character shows the quantity its cost comes from; null for token-only requests.
 */
export class LogBilledUnits1764001100000 implements MigrationInterface {
  name = 'LogBilledUnits1764001100000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('alter table request_logs add column billed_units jsonb');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('alter table request_logs drop column billed_units');
  }
}
