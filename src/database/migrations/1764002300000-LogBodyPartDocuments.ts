import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The words of a part whose body lives in object storage (LOG_BODY_STORE=s3://…, see
 * src/modules/logging/body-parts/part-store.ts): PostgreSQL keeps the part's reference
 * and its search document, not its body. Parts stored in PostgreSQL keep `document` null
 * and are searched through the expression index on their body (migration LogBodyParts).
 */
export class LogBodyPartDocuments1764002300000 implements MigrationInterface {
  name = 'LogBodyPartDocuments1764002300000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`alter table log_body_parts add column document tsvector`);
    await db.query(`create index log_body_parts_document on log_body_parts using gin (document) where document is not null`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop index log_body_parts_document`);
    await db.query(`alter table log_body_parts drop column document`);
  }
}
