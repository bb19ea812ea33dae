/**
 * What every client spec shares: a gateway with the mock upstream behind three virtual keys
 * (an OpenAI, an Anthropic and a Gemini target), gateway API keys that name their target with
 * `default_virtual_key` (CONTRACT section 12: a client only takes a base URL and an API key),
 * the log rows of a key, child processes with a time limit, and the Python SDKs' venv.
 *
 * `CLIENTS_SHIM_AUTH=1` (a debugging aid, never set in CI) puts a small proxy in front of the
 * gateway that turns the client's `Authorization: Bearer gk-…` / `x-api-key: gk-…` into the
 * `x-gateway-api-key` and `x-gateway-virtual-key` headers, to tell the rest of the gateway's
 * client support apart from that authentication feature while it is not merged.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { MockUpstream, RecordedRequest, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

export const ROOT = resolve(__dirname, '../..');

export type TargetName = 'openai' | 'anthropic' | 'gemini';

export interface Target {
  name: TargetName;
  slug: string;
  provider: string;
  /** A model name of that vendor: the gateway passes it on, the target comes from the key. */
  model: string;
  /** The mock's path prefix for this vendor (what the virtual key's custom_host ends with). */
  hostPath: string;
  /** Tells the mock's requests for this vendor apart from the others. */
  isUpstreamCall(request: RecordedRequest): boolean;
}

export const TARGETS: Record<TargetName, Target> = {
  openai: {
    name: 'openai',
    slug: 'client-openai',
    provider: 'openai',
    model: 'gpt-4o-mini',
    hostPath: '/v1',
    isUpstreamCall: (r) => r.path.endsWith('/chat/completions') || r.path.endsWith('/responses'),
  },
  anthropic: {
    name: 'anthropic',
    slug: 'client-anthropic',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    hostPath: '/v1',
    isUpstreamCall: (r) => r.path.endsWith('/messages'),
  },
  gemini: {
    name: 'gemini',
    slug: 'client-gemini',
    provider: 'google',
    model: 'gemini-2.5-flash',
    hostPath: '/v1beta',
    isUpstreamCall: (r) => /:(stream)?generateContent$/i.test(r.path),
  },
};

export const ALL_TARGETS: Target[] = Object.values(TARGETS);

/** The prompt every mock answers with a call to the first tool offered (see test/support/mock-upstream.ts). */
export const TOOL_PROMPT = 'What is the weather in Paris? Use the tool.';
/** What the mocks answer when no tool is called. */
export const MOCK_TEXT = 'Hello from mock';

export interface GatewayKey {
  id: string;
  /** The `gk-…` secret, given to the client as its API key. */
  key: string;
  target: Target;
}

export interface ClientWorld {
  gateway: TestGateway;
  mock: MockUpstream;
  /** Where clients are pointed (the gateway, or the auth shim in front of it). */
  baseUrl: string;
  /** A fresh user-role gateway key whose requests go to `target` without any header. */
  keyFor(target: Target, name: string): Promise<GatewayKey>;
  close(): Promise<void>;
}

const SHIM = process.env.CLIENTS_SHIM_AUTH === '1';

export async function startClientWorld(): Promise<ClientWorld> {
  const mock = await startMockUpstream();
  const gateway = await startTestGateway();
  for (const target of ALL_TARGETS) {
    const created = await admin(gateway, 'POST', '/v1/virtual-keys', {
      name: target.slug,
      slug: target.slug,
      provider: target.provider,
      key: `upstream-secret-${target.name}`,
      custom_host: `${mock.url}${target.hostPath}`,
    });
    if (created.status !== 201) throw new Error(`virtual key ${target.slug}: ${created.status} ${JSON.stringify(created.body)}`);
  }
  const slugOfKey = new Map<string, string>();
  const shim = SHIM ? await startAuthShim(gateway.url, slugOfKey) : undefined;
  return {
    gateway,
    mock,
    baseUrl: shim?.url ?? gateway.url,
    keyFor: async (target, name) => {
      const fields = SHIM ? { name, role: 'user' } : { name, role: 'user', default_virtual_key: target.slug };
      const created = await admin(gateway, 'POST', '/v1/api-keys', fields);
      if (created.status !== 201) throw new Error(`POST /v1/api-keys ${JSON.stringify(fields)}: ${created.status} ${JSON.stringify(created.body)}`);
      slugOfKey.set(created.body.key, target.slug);
      return { id: created.body.id, key: created.body.key, target };
    },
    close: async () => {
      await shim?.close();
      await gateway.close();
      await mock.close();
    },
  };
}

/** The debugging proxy of CLIENTS_SHIM_AUTH (see the file comment). */
async function startAuthShim(gatewayUrl: string, slugOfKey: Map<string, string>): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(gatewayUrl);
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers };
    const bearer = /^Bearer (gk-\S+)$/.exec(String(headers.authorization ?? ''))?.[1];
    const secret = bearer ?? (String(headers['x-api-key'] ?? '').startsWith('gk-') ? String(headers['x-api-key']) : undefined);
    if (secret) {
      delete headers.authorization;
      delete headers['x-api-key'];
      headers['x-gateway-api-key'] = secret;
      const slug = slugOfKey.get(secret);
      if (slug) headers['x-gateway-virtual-key'] = slug;
    }
    const proxied = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    proxied.on('error', () => res.destroy());
    req.pipe(proxied);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}

/** The log rows of one gateway key, oldest first, once every queued row is written. */
export async function logRowsOf(world: ClientWorld, key: GatewayKey): Promise<any[]> {
  await world.gateway.flushLogs();
  const page = await admin(world.gateway, 'GET', `/v1/logs?api_key_id=${key.id}&limit=100`);
  if (page.status !== 200) throw new Error(`GET /v1/logs: ${page.status} ${JSON.stringify(page.body)}`);
  return [...page.body.data].reverse();
}

/** Every row: answered 200 by the key's target for this operation and model, with tokens counted. */
export function expectLoggedOk(rows: any[], key: GatewayKey, operation: string, count: number, model = key.target.model): void {
  expect(rows.map((row) => ({ status: row.status_code, operation: row.operation, provider: row.provider, model: row.model }))).toEqual(
    Array.from({ length: count }, () => ({ status: 200, operation, provider: key.target.provider, model })),
  );
  for (const row of rows) {
    expect(row.prompt_tokens).toBeGreaterThan(0);
    expect(row.completion_tokens).toBeGreaterThan(0);
  }
}

/** The mock's requests for this target (the vendor's own API), in order. */
export const upstreamCalls = (world: ClientWorld, target: Target) => world.mock.requests.filter((r) => target.isUpstreamCall(r));

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (killed after `timeoutMs`), never throwing on a non-zero exit. */
export function runProcess(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number; input?: string } = {},
): Promise<ProcessResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      env: options.env ?? process.env,
      cwd: options.cwd ?? ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', fail);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A process's outcome as one string for a failing assertion's message. */
export const describeRun = (run: ProcessResult) => `exit ${run.code}\n--- stdout\n${run.stdout.slice(-3000)}\n--- stderr\n${run.stderr.slice(-3000)}`;

/** An environment with nothing of this machine's: PATH, a HOME of the test's, loopback only. */
export function isolatedEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    ...extra,
  };
}

/**
 * opencode's binary for this platform (`opencode-<os>-<arch>`, the x64 `-baseline` build that
 * needs no AVX2), pinned, installed once from the npm registry beside the venv. It is not in
 * package.json: the registry here lacks the other platforms' builds that `opencode-ai` lists,
 * so `npm ci` could not take its lock file.
 */
export const OPENCODE_VERSION = '1.18.33';

export async function opencodeBinary(): Promise<string> {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `opencode-${os}-${process.arch}${process.arch === 'x64' ? '-baseline' : ''}`;
  const prefix = join(dirname(VENV), `opencode-${OPENCODE_VERSION}`);
  const binary = join(prefix, 'node_modules', name, 'bin', os === 'windows' ? 'opencode.exe' : 'opencode');
  if (existsSync(binary)) return binary;
  mkdirSync(prefix, { recursive: true });
  const args = ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', `${name}@${OPENCODE_VERSION}`];
  const installed = await runProcess('npm', args, { timeoutMs: 300_000 });
  if (installed.code !== 0 || !existsSync(binary)) throw new Error(`npm ${args.join(' ')} failed: ${describeRun(installed)}`);
  return binary;
}

export const PYTHON_SDKS = { openai: '3.22.1', anthropic: '1.13.0' };
/** CI keeps it in the machine's cache (.ci/run), where a fresh clone finds it made. */
const VENV = process.env.CLIENT_SUITE_VENV || join(ROOT, 'node_modules/.cache/client-suite-venv');

/**
 * The venv with the pinned Python SDKs, made once and reused while its stamp names the same
 * versions. The local wheel mirror is used as the index when the machine has one.
 */
export async function pythonWithSdks(): Promise<string> {
  const python = join(VENV, 'bin/python');
  const stamp = join(VENV, 'client-suite-versions.json');
  const wanted = JSON.stringify(PYTHON_SDKS);
  if (existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return python;
  mkdirSync(dirname(VENV), { recursive: true });
  const made = await runProcess('python3', ['-m', 'venv', '--clear', VENV], { timeoutMs: 120_000 });
  if (made.code !== 0) throw new Error(`python3 -m venv failed (apt-get install python3-venv?): ${describeRun(made)}`);
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PIP_DISABLE_PIP_VERSION_CHECK: '1' };
  if (existsSync('/opt/pypi/simple')) env.PIP_INDEX_URL = 'file:///opt/pypi/simple';
  const packages = Object.entries(PYTHON_SDKS).map(([name, version]) => `${name}==${version}`);
  const installed = await runProcess(join(VENV, 'bin/pip'), ['install', '-q', ...packages], { env, timeoutMs: 300_000 });
  if (installed.code !== 0) throw new Error(`pip install ${packages.join(' ')} failed: ${describeRun(installed)}`);
  writeFileSync(stamp, wanted);
  return python;
}
