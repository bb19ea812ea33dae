import { rmSync } from 'node:fs';
import type { EmbeddedPostgres } from '../../src/database/embedded-postgres';

export default async function globalTeardown(): Promise<void> {
  const embedded = (globalThis as Record<string, unknown>).__embeddedPostgres as { server: EmbeddedPostgres; dataDir: string } | undefined;
  if (!embedded) return;
  await embedded.server.stop();
  rmSync(embedded.dataDir, { recursive: true, force: true });
}
