import 'reflect-metadata';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { createGatewayApp } from './app.factory';
import { runClusterPrimary } from './cluster';
import { loadOrCreateEncryptionKey } from './common/crypto/encryption-key';
import { InvalidEnvironmentError, validateEnvironment } from './config/environment';
import { EmbeddedPostgres } from './database/embedded-postgres';
import { RequestLogger } from './modules/logging/request-logger.service';
import { RealtimeGateway } from './modules/realtime/realtime.gateway';

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
  process.stdout.write(`AI gateway listening on http://${env.HOST}:${env.PORT} (docs at /docs)\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: finishing open requests (up to ${env.SHUTDOWN_GRACE_MS} ms)\n`);
    const server = app.getHttpServer() as Server;
    // Stop accepting and let open requests and streams finish (up to the grace period)
    // before Nest's shutdown hooks run: the log writer's last flush must come after
    // their rows are queued.
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    // A keep-alive connection whose response just ended would otherwise hold on until its timeout.
    const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
    const cutOff = setTimeout(() => {
      server.closeAllConnections();
      // Upgraded (realtime) connections are not the HTTP server's to close: their sessions are told to go away.
      app.get(RealtimeGateway).closeAll();
    }, env.SHUTDOWN_GRACE_MS);
    await drained;
    clearInterval(idleSweep);
    clearTimeout(cutOff);
    // A response closed by the cut-off still has its row queued a few ticks later.
    await app.get(RequestLogger).whenIdle(2_000);
    await app.close(); // flushes logs, closes Redis and the database pool
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
