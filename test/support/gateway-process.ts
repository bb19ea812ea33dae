/**
 * The gateway as its own operating-system process (`node dist/src/main.js`), for tests
 * that need what an in-process app cannot show: several processes sharing one database
 * or Redis, signals, crashes. Builds the gateway first when dist/ is missing or older
 * than src/ (CI builds before testing, so there it is already fresh).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'main.js');

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal) once the process has ended. */
  exited: Promise<number | NodeJS.Signals>;
  /** SIGTERM, then SIGKILL if it is still there after `graceMs`. */
  stop(graceMs?: number): Promise<number | NodeJS.Signals>;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let built = false;
function ensureBuilt(): void {
  if (built) return;
  if (!existsSync(MAIN) || statSync(MAIN).mtimeMs < newestMtime(join(ROOT, 'src'))) {
    execFileSync(process.execPath, [join(ROOT, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build'], { cwd: ROOT, stdio: 'pipe' });
  }
  built = true;
}

/** A port nothing listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts a gateway process with `env` (DATABASE_URL, keys …; no log journal unless
 * LOG_JOURNAL_DIR is given; SIGTERM without the load balancers' SHUTDOWN_DELAY_MS unless
 * given) and waits until /health answers.
 */
export async function startGatewayProcess(env: Record<string, string>, startTimeoutMs = 20_000): Promise<GatewayProcess> {
  ensureBuilt();
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'error',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_JOURNAL_DIR: 'off',
      SHUTDOWN_DELAY_MS: '0',
      UPSTREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + startTimeoutMs;
  let ended = false;
  void exited.then(() => (ended = true));
  for (;;) {
    if (ended) throw new Error(`The gateway process exited during start-up:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`The gateway process did not answer /health within ${startTimeoutMs} ms:\n${output}`);
    }
    const healthy = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (healthy) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => output,
    exited,
    stop: async (graceMs = 10_000) => {
      if (!ended) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const result = await exited;
        clearTimeout(timer);
        return result;
      }
      return exited;
    },
  };
}
