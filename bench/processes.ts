/**
 * Child processes of the benchmark (mock upstream, gateway), their clean shutdown,
 * CPU pinning and CPU accounting.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../src/database/embedded-postgres';

export interface Child {
  name: string;
  proc: ChildProcess;
  /** Last lines the process wrote (stdout and stderr). */
  tail: string[];
  /** Lines written since `markReady()` (the gateway logs at warn: any line is worth a look). */
  linesSinceReady: number;
  ready: boolean;
  exited: Promise<number | null>;
}

const children: Child[] = [];

export function hasTaskset(): boolean {
  return spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** Pins this process (all its threads) to one core; children inherit it unless told otherwise. */
export function pinSelf(core: number): boolean {
  return spawnSync('taskset', ['-a', '-pc', String(core), String(process.pid)], { stdio: 'ignore' }).status === 0;
}

function nodeCommand(args: string[], core?: number): [string, string[]] {
  return core === undefined ? [process.execPath, args] : ['taskset', ['-c', String(core), process.execPath, ...args]];
}

/** A free port on the loopback interface (the same helper the embedded database uses). */
export const freePort = freeLoopbackPort;

/** A fresh DATA_DIR the postgres OS user can traverse (the gateway runs initdb as postgres when root). */
export function makeDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  chmodSync(dir, 0o755);
  return dir;
}

function track(name: string, proc: ChildProcess): Child {
  const child: Child = {
    name,
    proc,
    tail: [],
    linesSinceReady: 0,
    ready: false,
    exited: new Promise((done) => proc.once('exit', (code, signal) => done(code ?? (signal ? -1 : null)))),
  };
  const onText = (text: string) => {
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      child.tail.push(line);
      if (child.tail.length > 40) child.tail.shift();
      if (child.ready) child.linesSinceReady++;
    }
  };
  proc.stdout?.setEncoding('utf8').on('data', onText);
  proc.stderr?.setEncoding('utf8').on('data', onText);
  proc.once('error', (error) => onText(`spawn error: ${error.message}`));
  children.push(child);
  return child;
}

/** The mock in a child process; with `tls`, over TLS offering HTTP/2, and `caFile` the authority that signed it. */
export async function startMock(core?: number, tls = false): Promise<{ child: Child; url: string; caFile?: string }> {
  const [cmd, args] = nodeCommand([join(__dirname, 'mock-server.js'), ...(tls ? ['--tls'] : [])], core);
  const proc = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const child = track('mock', proc);
  let seen = '';
  const url = await new Promise<string>((done, fail) => {
    const onData = (text: string) => {
      seen += text;
      const match = /MOCK_URL=(\S+)/.exec(seen);
      if (match) {
        proc.stdout?.off('data', onData);
        done(match[1]);
      }
    };
    proc.stdout?.on('data', onData);
    void child.exited.then((code) => fail(new Error(`mock upstream exited (${code}):\n${child.tail.join('\n')}`)));
  });
  child.ready = true;
  return { child, url, caFile: /MOCK_CA_FILE=(\S+)/.exec(seen)?.[1] };
}

export interface GatewayOptions {
  port: number;
  dataDir: string;
  adminKey: string;
  core?: number;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeFlags?: string[];
  /** Extra environment, e.g. WORKERS. */
  env?: Record<string, string>;
}

export function startGateway(options: GatewayOptions): Child {
  const main = join(__dirname, '..', 'src', 'main.js');
  const [cmd, args] = nodeCommand([...(options.nodeFlags ?? []), main], options.core);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(options.port),
    HOST: '127.0.0.1',
    DATA_DIR: options.dataDir,
    GATEWAY_ADMIN_KEY: options.adminKey,
    LOG_LEVEL: 'warn',
    // The mock provider listens on loopback.
    UPSTREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    SHUTDOWN_GRACE_MS: '3000',
    // Always the embedded PostgreSQL in the fresh DATA_DIR, whatever the shell has set.
    DATABASE_URL: '',
    GATEWAY_ENCRYPTION_KEY: '',
    ...options.env,
  };
  // cwd = the temp dir, so a developer's .env in the repository is not loaded.
  const proc = spawn(cmd, args, { cwd: options.dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return track('gateway', proc);
}

export async function waitForHealth(baseUrl: string, child: Child, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(`${child.name} exited (${child.proc.exitCode ?? child.proc.signalCode}) before it was healthy:\n${child.tail.join('\n')}`);
    }
    try {
      const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(3000) });
      last = `${response.status} ${await response.text()}`;
      if (response.status === 200) {
        child.ready = true;
        return;
      }
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${child.name} not healthy after ${timeoutMs} ms (last: ${last}):\n${child.tail.join('\n')}`);
}

/** A virtual key of the bench's gateway: a mock-backed provider (custom_host = the mock's /v1, as both adapters append their paths to it). */
export async function createVirtualKey(gatewayUrl: string, adminKey: string, mockUrl: string, provider = 'openai', slug = 'bench'): Promise<void> {
  const response = await fetch(`${gatewayUrl}/v1/virtual-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': adminKey },
    body: JSON.stringify({ name: slug, slug, provider, key: `sk-${slug}-0000000000`, custom_host: `${mockUrl}/v1` }),
  });
  if (response.status !== 201 && response.status !== 200) {
    throw new Error(`creating the virtual key ${slug} failed: ${response.status} ${await response.text()}`);
  }
}

/** Lets the gateway write the log rows of the requests so far (`pending_logs: 0` on /health); false on timeout. */
export async function waitForLogsWritten(gatewayUrl: string, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const health = (await fetch(`${gatewayUrl}/health`)
      .then((r) => r.json())
      .catch(() => ({}))) as { pending_logs?: number };
    if (health.pending_logs === 0) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stdout.write(`  (the gateway still had log rows pending after ${timeoutMs} ms)\n`);
  return false;
}

/**
 * The embedded PostgreSQL a gateway started in `dataDir`: its postmaster's pid and the URL
 * of the gateway's database (postmaster.pid: line 1 the pid, line 4 the port; trust auth on loopback).
 */
export function embeddedPostgresOf(dataDir: string): { pid: number; url: string } {
  const lines = readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n');
  return { pid: Number(lines[0]), url: `postgres://postgres@127.0.0.1:${Number(lines[3])}/gateway` };
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: Child, graceMs = 15_000): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => {
    process.stderr.write(`${child.name} did not stop within ${graceMs} ms: SIGKILL\n`);
    child.proc.kill('SIGKILL');
  }, graceMs);
  await child.exited;
  clearTimeout(timer);
}

/** A postmaster left running (gateway killed hard) would keep files open in the data dir. */
async function stopLeftoverPostgres(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!(pid > 0)) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  for (let i = 0; i < 50 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let stopping: Promise<void> | undefined;

/** Stops the gateway first (it stops its PostgreSQL), then the rest; removes the data dir. Idempotent. */
export function stopAll(dataDir?: string): Promise<void> {
  return (stopping ??= (async () => {
    const order = [...children].sort((a, b) => Number(b.name === 'gateway') - Number(a.name === 'gateway'));
    for (const child of order) await stopChild(child).catch(() => undefined);
    if (dataDir) {
      await stopLeftoverPostgres(dataDir).catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    }
  })());
}

/**
 * CPU seconds (user + system) of a process and, separately, of all its descendants (e.g.
 * PostgreSQL); `reaped`: of the process's children that exited (PostgreSQL's autovacuum
 * workers and closed backends, seen through the postmaster).
 */
export function cpuSeconds(rootPid: number): { self: number; descendants: number; reaped: number } {
  const ticks = 100; // USER_HZ; 100 on every mainstream Linux
  const stats = new Map<number, { ppid: number; cpu: number; reaped: number }>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return { self: NaN, descendants: NaN, reaped: NaN };
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const raw = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
      // fields[0] = state, [1] = ppid, [11] utime, [12] stime, [13] cutime, [14] cstime (reaped children,
      // e.g. PostgreSQL backends that exited: counted through the postmaster that waited for them)
      const own = (Number(fields[11]) + Number(fields[12])) / ticks;
      const reaped = (Number(fields[13]) + Number(fields[14])) / ticks;
      stats.set(Number(entry), { ppid: Number(fields[1]), cpu: own, reaped });
    } catch {
      // the process went away
    }
  }
  const self = stats.get(rootPid)?.cpu ?? NaN;
  let descendants = 0;
  const parents = new Set([rootPid]);
  for (let changed = true; changed;) {
    changed = false;
    for (const [pid, stat] of stats) {
      if (!parents.has(pid) && parents.has(stat.ppid)) {
        parents.add(pid);
        descendants += stat.cpu + stat.reaped;
        changed = true;
      }
    }
  }
  return { self, descendants, reaped: stats.get(rootPid)?.reaped ?? NaN };
}
