import { MigrationInterface, QueryRunner } from 'typeorm';

/** The results of a request's guardrails (CONTRACT section 5: "results are stored with the log"). */
export class LogGuardrails1764000600000 implements MigrationInterface {
  name = 'LogGuardrails1764000600000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('alter table request_logs add column guardrails jsonb');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('alter table request_logs drop column guardrails');
  }
}
