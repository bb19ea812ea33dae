import { rmSync } from 'node:fs';
import { Client } from 'pg';
import type { EmbeddedPostgres } from '../../src/database/embedded-postgres';

export default async function globalTeardown(): Promise<void> {
  const template = (globalThis as Record<string, unknown>).__templateDatabase as { adminUrl: string; name: string } | undefined;
  if (template) {
    const admin = new Client({ connectionString: template.adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${template.name} with (force)`);
    await admin.end();
  }
  const embedded = (globalThis as Record<string, unknown>).__embeddedPostgres as { server: EmbeddedPostgres; dataDir: string } | undefined;
  if (!embedded) return;
  await embedded.server.stop();
  rmSync(embedded.dataDir, { recursive: true, force: true });
}
