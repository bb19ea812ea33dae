import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The MCP tool calls the gateway ran for a model request (`x-gateway-mcp`), on the
 * request's row: `[{round, call_id, server, tool, is_error, latency_ms, log_id}]`, each
 * call also a row of its own (operation `mcp.tools.call`, id `log_id`); null for a
 * request without gateway-run tools.
 */
export class LogToolCalls1764001400000 implements MigrationInterface {
  name = 'LogToolCalls1764001400000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('alter table request_logs add column tool_calls jsonb');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('alter table request_logs drop column tool_calls');
  }
}
