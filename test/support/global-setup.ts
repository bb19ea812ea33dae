import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres';

/**
 * One PostgreSQL server for the e2e run: the one DATABASE_URL names, or else an
 * ephemeral embedded cluster. Each test file then makes its own database on it.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) {
    process.env.TEST_PG_ADMIN_URL = process.env.DATABASE_URL;
    return;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-test-pg-'));
  chmodSync(dataDir, 0o755); // reachable for the postgres OS user when we run as root
  const server = new EmbeddedPostgres({ dataDir, database: 'postgres', ephemeral: true });
  process.env.TEST_PG_ADMIN_URL = await server.start();
  (globalThis as Record<string, unknown>).__embeddedPostgres = { server, dataDir };
}
