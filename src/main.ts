import 'reflect-metadata';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { createGatewayApp } from './app.factory';
import { loadOrCreateEncryptionKey } from './common/crypto/encryption-key';
import { InvalidEnvironmentError, validateEnvironment } from './config/environment';
import { EmbeddedPostgres } from './database/embedded-postgres';

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
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
  process.stdout.write(`AI gateway listening on http://${env.HOST}:${env.PORT} (docs at /docs)\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: finishing open requests (up to ${env.SHUTDOWN_GRACE_MS} ms)\n`);
    const server = app.getHttpServer() as Server;
    // Open streams get the grace period, then their connections are closed.
    setTimeout(() => server.closeAllConnections(), env.SHUTDOWN_GRACE_MS).unref();
    await app.close(); // stops accepting, waits for responses, flushes logs, closes the pool
    await embedded?.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof InvalidEnvironmentError ? error.message : (error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
