import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { DataSource } from 'typeorm';
import { loadOrCreateEncryptionKey } from './common/crypto/encryption-key';
import { validateEnvironment, type Environment } from './config/environment';
import { dataSourceOptions } from './database/data-source-options';
import { EmbeddedPostgres } from './database/embedded-postgres';
import { serveClusterMetrics } from './modules/metrics/cluster-metrics';
import { listenForMetrics, metricsAddress } from './modules/metrics/metrics-listener';

/** A worker that dies sooner than this after its start is restarted after a pause, not at once (a crash loop). */
const STEADY_AFTER_MS = 10_000;
const RESTART_PAUSE_MS = 1_000;
const MAX_RESTART_PAUSE_MS = 60_000;

/**
 * How long to wait before replacing a worker: at once after one that ran steadily; after
 * `quickDeaths` workers in a row died young (a crash loop: a bad deploy, a port taken), a
 * pause that doubles each time up to a minute, so a loop costs little and its log stays readable.
 */
export function restartPauseMs(quickDeaths: number): number {
  return quickDeaths === 0 ? 0 : Math.min(MAX_RESTART_PAUSE_MS, RESTART_PAUSE_MS * 2 ** (quickDeaths - 1));
}

/** `WORKERS` as a number of processes: `auto` is one per core. */
export function workerCount(workers: string): number {
  return workers === 'auto' ? availableParallelism() : Number(workers);
}

/**
 * `WORKERS` > 1: this process becomes the cluster's primary and returns true; the
 * caller (main.ts) then does nothing more. The workers run main.ts as a single gateway
 * would, on one port (Node's cluster hands each connection to a worker in turn).
 *
 * The primary holds what must exist once: the embedded PostgreSQL (without
 * DATABASE_URL; the workers get its URL and the encryption key through their
 * environment) and the migrations, run before any worker starts. Everything else the
 * workers share through the database, as separate instances do (counters, key-change
 * notifications, the rollup lock). Each worker writes its own log journal files (named
 * by its pid); a worker that dies is restarted, and its replacement replays the files
 * of the dead one. The primary also answers the workers' `/metrics` with every
 * worker's metrics, and holds the METRICS_PORT listener when that is set.
 * SIGTERM/SIGINT go to every worker; once all have finished their
 * shutdown the primary stops the database and exits (0 when every worker did).
 */
export async function runClusterPrimary(): Promise<boolean> {
  if (cluster.isWorker) return false;
  const env = validateEnvironment(process.env);
  const count = workerCount(env.WORKERS);
  if (count <= 1) return false;

  const log = (message: string) => process.stdout.write(`[primary ${process.pid}] ${message}\n`);
  let embedded: EmbeddedPostgres | undefined;
  if (!env.DATABASE_URL) {
    embedded = new EmbeddedPostgres({ dataDir: env.DATA_DIR, log });
    process.env.DATABASE_URL = env.DATABASE_URL = await embedded.start();
    process.env.GATEWAY_ENCRYPTION_KEY = env.GATEWAY_ENCRYPTION_KEY ??= loadOrCreateEncryptionKey(env.DATA_DIR);
  }
  await migrate(env);
  const clusterMetrics = serveClusterMetrics();
  // METRICS_PORT: the primary serves it, summing every worker (the workers open no listener of their own for it).
  const metricsServer = env.METRICS_PORT === undefined ? null : await listenForMetrics(env, clusterMetrics);
  if (metricsServer) log(`metrics at ${metricsAddress(metricsServer)}`);

  let stopping = false;
  let quickDeaths = 0;
  const startedAt = new Map<Worker, number>();
  const fork = () => startedAt.set(cluster.fork(), Date.now());
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) return;
    quickDeaths = lived < STEADY_AFTER_MS ? quickDeaths + 1 : 0;
    const pauseMs = restartPauseMs(quickDeaths);
    log(
      `worker ${worker.process.pid} ended (${signal ?? `exit code ${code}`}); starting another${pauseMs ? ` in ${pauseMs / 1000} s (${quickDeaths} died within ${STEADY_AFTER_MS / 1000} s of starting)` : ''}`,
    );
    if (pauseMs) setTimeout(() => !stopping && fork(), pauseMs);
    else fork();
  });
  for (let i = 0; i < count; i++) fork();
  log(`${count} workers on port ${env.PORT}`);

  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker && !worker.isDead());
    const exits = workers.map((worker) => new Promise<boolean>((resolve) => worker.once('exit', (code) => resolve(code === 0))));
    for (const worker of workers) worker.process.kill(signal);
    // A worker stuck past its own grace period (and the delay before it) is killed.
    const cutOff = setTimeout(
      () => workers.forEach((worker) => worker.isDead() || worker.process.kill('SIGKILL')),
      env.SHUTDOWN_DELAY_MS + env.SHUTDOWN_GRACE_MS + 10_000,
    );
    const clean = (await Promise.all(exits)).every(Boolean);
    clearTimeout(cutOff);
    metricsServer?.close();
    await embedded?.stop();
    process.exit(clean ? 0 : 1);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  return true;
}

/** The migrations, once, before the workers start (their own run then finds nothing to do). */
async function migrate(env: Environment): Promise<void> {
  const dataSource = new DataSource(dataSourceOptions(env.DATABASE_URL!, env.GATEWAY_ENCRYPTION_KEY));
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
}
