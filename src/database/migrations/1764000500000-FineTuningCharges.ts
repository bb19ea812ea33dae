import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per fine-tuning job whose training the gateway has priced: the first answer
 * that reports the job `succeeded` with its `trained_tokens` carries the cost in its log
 * row; the primary key makes that happen once however often the job is read again.
 */
export class FineTuningCharges1764000500000 implements MigrationInterface {
  name = 'FineTuningCharges1764000500000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table fine_tuning_charges (
        provider text not null,
        job_id text not null,
        model text not null,
        trained_tokens bigint not null,
        cost_usd numeric(20, 10),
        log_id uuid not null,
        created_at timestamptz not null default now(),
        primary key (provider, job_id)
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('drop table fine_tuning_charges');
  }
}
