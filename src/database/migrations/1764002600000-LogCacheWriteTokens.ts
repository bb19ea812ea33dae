import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The prompt-cache writes of a request (Anthropic's `cache_creation_input_tokens`, Bedrock's
 * `cacheWriteInputTokens`), beside `cached_tokens` (the reads): priced apart, and now kept on
 * the row (CONTRACT section 16). Part of `prompt_tokens`, as the reads are. Adding a
 * nullable column without a default rewrites nothing, on the partitioned table and each
 * partition alike.
 */
export class LogCacheWriteTokens1764002600000 implements MigrationInterface {
  name = 'LogCacheWriteTokens1764002600000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`alter table request_logs add column cache_write_tokens integer`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`alter table request_logs drop column cache_write_tokens`);
  }
}
