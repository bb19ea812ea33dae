import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { createGatewayApp } from './app.factory';
import { runClusterPrimary } from './cluster';
import { loadOrCreateEncryptionKey } from './common/crypto/encryption-key';
import { InvalidEnvironmentError, validateEnvironment } from './config/environment';
import { EmbeddedPostgres } from './database/embedded-postgres';
import { GracefulShutdown } from './shutdown';

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  if (await runClusterPrimary()) return; // WORKERS > 1: this process forks and watches the workers
  const env = validateEnvironment(process.env);

  // No DATABASE_URL: a real PostgreSQL from npm binaries, kept under DATA_DIR.
  let embedded: EmbeddedPostgres | undefined;
  if (!env.DATABASE_URL) {
    embedded = new EmbeddedPostgres({ dataDir: env.DATA_DIR, log: (m) => process.stdout.write(`${m}\n`) });
    env.DATABASE_URL = await embedded.start();
    env.GATEWAY_ENCRYPTION_KEY ??= loadOrCreateEncryptionKey(env.DATA_DIR);
  }

  const app = await createGatewayApp(env);
  await app.listen(env.PORT, env.HOST);
  process.stdout.write(`AI gateway listening on http://${env.HOST}:${env.PORT}${env.DOCS_ENABLED ? ' (docs at /docs)' : ''}\n`);

  new GracefulShutdown(app, env, embedded).onSignals();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof InvalidEnvironmentError ? error.message : ((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
