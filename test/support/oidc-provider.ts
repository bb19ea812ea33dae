import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface OidcTestProvider {
  /** The issuer, e.g. http://127.0.0.1:PORT */
  issuer: string;
  close(): Promise<void>;
}

export interface OidcTestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/** A free TCP port on loopback (for a provider whose issuer URL must be known before it starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `oidc-provider-server.mjs` (a real OpenID provider, in its own process since the library is
 * ESM-only) on `port`, with `clients` registered. Accounts: alice, olga, nobody (see the script).
 */
export async function startOidcProvider(port: number, clients: OidcTestClient[]): Promise<OidcTestProvider> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, 'oidc-provider-server.mjs')], {
    env: { ...process.env, PORT: String(port), CLIENTS: JSON.stringify(clients), NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const issuer = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /ready (\S+)/.exec(stdout);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`oidc-provider exited (${code}): ${stderr}`)));
  });
  return {
    issuer,
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.on('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
