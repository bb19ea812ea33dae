/**
 * Gateway overhead benchmark: the bare mock upstream ("direct") against the same mock
 * behind the gateway (real embedded PostgreSQL, request logging on).
 *
 *   npm run bench -- [--duration 8] [--pin] [--ttft 200] [--profile]
 *   npm run bench -- --streams [N] [--stream-delay 1500] [--tls]
 *   npm run bench -- --workers [--duration 8]
 *   npm run bench -- --agent [--sessions 16] [--turns 20] [--profile]
 *   npm run bench -- --batch [N]
 *
 *   --duration N  seconds per measured run (default 8)
 *   --pin         gateway (and its PostgreSQL) on core 1, mock and load generator on core 0
 *   --ttft N      sequential streaming requests per target for time to first token (default 200)
 *   --profile     instead of the comparison: gateway under --cpu-prof, N s at c=32 non-streaming
 *                 then N s streaming; prints the top self-time functions of each window
 *   --streams N   instead: N concurrent slow streams (default 2000; the mock's mock-slow-<delay>
 *                 model, a chunk every --stream-delay ms), straight to the mock then through the
 *                 gateway: completion time against the mock alone, the gateway's peak RSS and RSS
 *                 per open stream (the machine's `ulimit -n` bounds N: each stream holds a socket
 *                 in the load generator, two in the gateway and one in the mock; with WORKERS=2 in
 *                 the environment the gateway's two sockets per stream are spread over two
 *                 processes, and its RSS is the sum of its processes)
 *   --tls         with --streams: the mock serves over TLS and offers HTTP/2 (ALPN), as providers
 *                 do; the gateway trusts its test authority (UPSTREAM_CA_FILE) and speaks HTTP/2 to
 *                 it unless UPSTREAM_HTTP2=false is in the environment (run both to compare)
 *   --workers     instead: throughput (json and streaming, c=32) of a gateway with WORKERS=1 and
 *                 one with WORKERS=2, measured in turn, side by side
 *   --agent       instead: coding-agent sessions replayed from test/fixtures/clients/ (half Claude
 *                 Code on /v1/messages, half Codex on /v1/responses; half of each streaming), each
 *                 turn resending the conversation grown by a tool call and ~3 KB of its output;
 *                 straight to the mock, through the gateway (bodies logged) and through a second
 *                 gateway with LOG_BODIES=false: req/s, CPU per request of the gateway, the mock and
 *                 the gateway's PostgreSQL, bytes sent and stored per request; then logged bodies
 *                 read back through GET /v1/logs/{id} and compared with those sent (see bench/agent.ts);
 *                 with --profile, the logging gateway runs under --cpu-prof and the top self-time
 *                 functions of its runs are printed
 *   --batch N     instead: a gateway-run batch of N lines (default 2000) alone (lines per second, CPU
 *                 per line), then beside interactive traffic (its added latency): see bench/batch.ts
 *   --sessions N  with --agent: sessions at once (default 16), each one turn after the other
 *   --turns N     with --agent: requests per session (default 20)
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { measureTtft, problemsOf, runLoad, stopLoad, type LoadResult, type Target } from './load';
import { agentScenario } from './agent';
import { batchScenario } from './batch';
import { formatProfile, summarizeProfile, type ProfileSummary } from './profile';
import {
  Child,
  cpuSeconds,
  createVirtualKey,
  freePort,
  hasTaskset,
  makeDataDir,
  pinSelf,
  startGateway,
  startMock,
  stopAll,
  stopChild,
  waitForHealth,
  waitForLogsWritten,
} from './processes';
import { finishReport, type Scenario } from './report';
import { describeStreams, gatewayRssKiB, runStreams, type StreamsResult } from './streams';

const RESULTS_DIR = join(__dirname, '..', '..', 'bench', 'results');

interface Args {
  duration: number;
  pin: boolean;
  ttft: number;
  profile: boolean;
  /** Many-streams scenario: the number of streams; 0 = not run. */
  streams: number;
  streamDelay: number;
  workers: boolean;
  tls: boolean;
  agent: boolean;
  batch: number;
  sessions: number;
  turns: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    duration: 8,
    pin: false,
    ttft: 200,
    profile: false,
    streams: 0,
    streamDelay: 1500,
    workers: false,
    tls: false,
    agent: false,
    batch: 0,
    sessions: 16,
    turns: 20,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => Number(inline ?? argv[++i]);
    const optionalValue = (fallback: number) => (inline !== undefined || /^\d+$/.test(argv[i + 1] ?? '') ? value() : fallback);
    if (flag === '--duration') args.duration = value();
    else if (flag === '--ttft') args.ttft = value();
    else if (flag === '--pin') args.pin = true;
    else if (flag === '--profile') args.profile = true;
    else if (flag === '--streams') args.streams = optionalValue(2000);
    else if (flag === '--stream-delay') args.streamDelay = value();
    else if (flag === '--workers') args.workers = true;
    else if (flag === '--tls') args.tls = true;
    else if (flag === '--agent') args.agent = true;
    else if (flag === '--batch') args.batch = optionalValue(2000);
    else if (flag === '--sessions') args.sessions = value();
    else if (flag === '--turns') args.turns = value();
    else throw new Error(`unknown argument ${argv[i]} (see the header of bench/run.ts)`);
  }
  if (!(args.duration >= 1)) throw new Error('--duration must be a number of seconds >= 1');
  if (!(args.ttft >= 1)) throw new Error('--ttft must be >= 1');
  if (!(args.streams >= 0) || !(args.streamDelay >= 1)) throw new Error('--streams and --stream-delay must be positive numbers');
  if (args.tls && !args.streams) throw new Error('--tls goes with --streams');
  if (!(Number.isInteger(args.sessions) && args.sessions >= 1) || !(Number.isInteger(args.turns) && args.turns >= 1))
    throw new Error('--sessions and --turns must be whole numbers >= 1');
  if (!args.agent && argv.some((a) => /^--(sessions|turns)\b/.test(a))) throw new Error('--sessions and --turns go with --agent');
  if (args.agent && (args.streams || args.workers)) throw new Error('--agent is a scenario of its own: not with --streams or --workers');
  return args;
}

const log = (message: string) => process.stdout.write(`${message}\n`);
/** The provider latency of the last scenario (the mock's `mock-slow-<ms>` model). */
const PROVIDER_LATENCY_MS = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request per target and mode before any load: a clear error beats 100k non-2xx. */
async function smokeTest(targets: Target[]): Promise<void> {
  for (const target of targets) {
    const dispatcher = target.ca ? new Agent({ connect: { ca: target.ca } }) : undefined;
    for (const stream of [false, true]) {
      const response = await request(target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...target.headers },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], ...(stream ? { stream: true } : {}) }),
        dispatcher,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200 || !text.includes(stream ? 'data: [DONE]' : '"choices"')) {
        throw new Error(`${target.name} ${stream ? 'streaming' : 'non-streaming'} smoke test: ${response.statusCode} ${text.slice(0, 500)}`);
      }
    }
    await dispatcher?.close();
  }
}

function describe(r: LoadResult): string {
  const problems = problemsOf(r);
  return (
    `  ${r.target.padEnd(7)} ${r.stream ? 'stream' : 'json  '} c=${String(r.connections).padEnd(2)} ` +
    `${Math.round(r.rps).toString().padStart(6)} req/s  p50 ${r.latency.p50.toFixed(3)} ms  p99 ${r.latency.p99.toFixed(3)} ms` +
    (problems.length ? `   !!! ${problems.join(', ')}` : '')
  );
}

async function gatewayRun(gateway: Child, run: () => Promise<LoadResult>): Promise<{ result: LoadResult; cpu: Scenario['gatewayCpu'] }> {
  const pid = gateway.proc.pid!;
  const before = cpuSeconds(pid);
  const result = await run();
  const after = cpuSeconds(pid);
  return { result, cpu: { gateway: after.self - before.self, postgres: after.descendants - before.descendants } };
}

async function compareRuns(args: Args, direct: Target, gateway: Target, gatewayChild: Child, gatewayUrl: string): Promise<Scenario[]> {
  const scenarios: Scenario[] = [];
  for (const stream of [false, true]) {
    for (const connections of [1, 32]) {
      await waitForLogsWritten(gatewayUrl);
      const d = await runLoad(direct, stream, connections, args.duration);
      log(describe(d));
      await waitForLogsWritten(gatewayUrl);
      const g = await gatewayRun(gatewayChild, () => runLoad(gateway, stream, connections, args.duration));
      log(describe(g.result));
      scenarios.push({
        name: `${stream ? 'streaming' : 'non-streaming'} c=${connections}`,
        stream,
        connections,
        direct: d,
        gateway: g.result,
        gatewayCpu: g.cpu,
      });
    }
  }
  // As in production: the provider takes its time, the gateway must not be what limits the rate.
  const slow = `mock-slow-${PROVIDER_LATENCY_MS}`;
  await waitForLogsWritten(gatewayUrl);
  const d = await runLoad(direct, false, 64, args.duration, slow);
  log(describe(d));
  await waitForLogsWritten(gatewayUrl);
  const g = await gatewayRun(gatewayChild, () => runLoad(gateway, false, 64, args.duration, slow));
  log(describe(g.result));
  scenarios.push({
    name: `non-streaming c=64, provider ${PROVIDER_LATENCY_MS} ms`,
    stream: false,
    connections: 64,
    providerLatencyMs: PROVIDER_LATENCY_MS,
    direct: d,
    gateway: g.result,
    gatewayCpu: g.cpu,
  });
  return scenarios;
}

/** N slow streams, straight to the mock, then through the gateway (its RSS sampled). */
async function streamsScenario(args: Args, direct: Target, gateway: Target, gatewayChild: Child): Promise<void> {
  const model = `mock-slow-${args.streamDelay}`;
  const single = await runStreams(direct, 1, model);
  const upstream = !args.tls ? 'plain HTTP/1.1' : process.env.UPSTREAM_HTTP2 === 'false' ? 'TLS, HTTP/1.1 (UPSTREAM_HTTP2=false)' : 'TLS, HTTP/2';
  log(
    `many streams: ${args.streams} at once of ${model} (one alone takes ${single.wallSeconds.toFixed(1)} s); gateway to mock over ${upstream}; ulimit -n ${fileLimit()}`,
  );
  const results: StreamsResult[] = [];
  for (const [target, rssOf] of [
    [direct, undefined],
    [gateway, () => gatewayRssKiB(gatewayChild.proc.pid!)],
  ] as const) {
    const result = await runStreams(target, args.streams, model, rssOf);
    log(describeStreams(result));
    // e.g. `accept EMFILE`: each stream holds two of the gateway's file descriptors.
    if (result.failed && target === gateway) log(`  the gateway's last lines:\n${gatewayChild.tail.slice(-5).join('\n')}`);
    results.push(result);
    await sleep(2_000); // sockets closing, log rows written
  }
  writeFileSync(join(RESULTS_DIR, 'streams-latest.json'), JSON.stringify({ model, upstream, singleStreamSeconds: single.wallSeconds, results }, null, 2));
}

/** The soft limit of open files of this shell (the gateway inherits it). */
function fileLimit(): string {
  try {
    return /Max open files\s+(\d+|unlimited)/.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? '?';
  } catch {
    return '?';
  }
}

/**
 * Throughput of the running gateway (WORKERS=1) and of a second one with WORKERS=2 (its
 * own embedded PostgreSQL), both up at once and measured in turn, twice: on a machine
 * shared with other work, alternating keeps a passing load from favouring one side.
 */
async function workersScenario(args: Args, mockUrl: string, gateway: Target, adminKey: string): Promise<void> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = makeDataDir();
  try {
    const two = startGateway({ port, dataDir, adminKey, env: { WORKERS: '2' } });
    await waitForHealth(url, two);
    await createVirtualKey(url, adminKey, mockUrl);
    const targets = new Map<number, Target>([
      [1, gateway],
      [2, { ...gateway, url: `${url}/v1/chat/completions` }],
    ]);
    for (const stream of [false, true]) await runLoad(targets.get(2)!, stream, 8, 1.5);
    const runs: { workers: number; json: number; stream: number }[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [workers, target] of targets) {
        const json = await runLoad(target, false, 32, args.duration);
        log(`  WORKERS=${workers} ${describe(json).trim()}`);
        const stream = await runLoad(target, true, 32, args.duration);
        log(`  WORKERS=${workers} ${describe(stream).trim()}`);
        runs.push({ workers, json: json.rps, stream: stream.rps });
      }
    }
    await stopChild(two);
    const mean = (workers: number, key: 'json' | 'stream') => runs.filter((run) => run.workers === workers).reduce((sum, run) => sum + run[key], 0) / 2;
    log(`\n  workers   json req/s   stream req/s   (mean of 2 runs each, c=32, ${cpus().length} cores)`);
    for (const workers of targets.keys())
      log(
        `  ${String(workers).padEnd(9)} ${Math.round(mean(workers, 'json')).toString().padStart(10)}   ${Math.round(mean(workers, 'stream')).toString().padStart(12)}`,
      );
    writeFileSync(join(RESULTS_DIR, 'workers-latest.json'), JSON.stringify({ cores: cpus().length, runs }, null, 2));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  mkdirSync(RESULTS_DIR, { recursive: true });
  const dataDir = makeDataDir();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${signal}: stopping the gateway and the mock...\n`);
    stopLoad();
    void stopAll(dataDir).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let pin = false;
  if (args.pin) {
    pin = hasTaskset() && cpus().length >= 2 && pinSelf(0);
    log(pin ? 'pinned: load generator + mock on core 0, gateway + PostgreSQL on core 1' : '--pin ignored: needs taskset and 2 cores');
  }
  const startedAt = new Date();
  const profileName = `gateway-${startedAt.toISOString().replace(/[:.]/g, '-')}.cpuprofile`;
  const windows: { name: string; fromUs: number; toUs: number }[] = [];
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  let failed = false;

  try {
    const mock = await startMock(pin ? 0 : undefined, args.tls);
    const port = await freePort();
    const adminKey = `bench-${randomBytes(13).toString('hex')}`; // 32 characters
    const gatewayUrl = `http://127.0.0.1:${port}`;
    log(`mock upstream ${mock.url}; starting the gateway on ${gatewayUrl} (embedded PostgreSQL in ${dataDir})`);
    const gatewayChild = startGateway({
      port,
      dataDir,
      adminKey,
      core: pin ? 1 : undefined,
      nodeFlags: args.profile ? ['--cpu-prof', `--cpu-prof-dir=${RESULTS_DIR}`, `--cpu-prof-name=${profileName}`] : [],
      env: mock.caFile ? { UPSTREAM_CA_FILE: mock.caFile } : {},
    });
    await waitForHealth(gatewayUrl, gatewayChild);
    await createVirtualKey(gatewayUrl, adminKey, mock.url);

    const direct: Target = {
      name: 'direct',
      url: `${mock.url}/v1/chat/completions`,
      headers: {},
      ca: mock.caFile ? readFileSync(mock.caFile, 'utf8') : undefined,
    };
    const gateway: Target = {
      name: 'gateway',
      url: `${gatewayUrl}/v1/chat/completions`,
      headers: { 'x-gateway-api-key': adminKey, 'x-gateway-virtual-key': 'bench' },
    };
    await smokeTest([direct, gateway]);

    // (The load generator's runs go over plain HTTP only: with --tls the gateway alone warms up. --agent warms up with its own sessions.)
    const warmUpTargets = args.agent || args.batch ? [] : args.profile || args.workers || args.tls ? [gateway] : [direct, gateway];
    if (warmUpTargets.length) log('warming up...');
    for (const target of warmUpTargets) {
      for (const stream of [false, true]) await runLoad(target, stream, 8, 1.5);
    }

    if (args.streams) {
      await streamsScenario(args, direct, gateway, gatewayChild);
    } else if (args.workers) {
      await workersScenario(args, mock.url, gateway, adminKey);
    } else if (args.batch) {
      await batchScenario({ lines: args.batch, duration: args.duration, gateway, gatewayChild, gatewayUrl, adminKey, mockUrl: mock.url });
    } else if (args.agent) {
      failed = await agentScenario({
        args: { sessions: args.sessions, turns: args.turns },
        mock,
        gateway: { child: gatewayChild, url: gatewayUrl, dataDir },
        adminKey,
        gatewayCore: pin ? 1 : undefined,
        resultsDir: RESULTS_DIR,
        onGatewayWindow: (name, fromUs, toUs) => windows.push({ name, fromUs, toUs }),
      });
    } else if (args.profile) {
      for (const stream of [false, true]) {
        await waitForLogsWritten(gatewayUrl);
        const fromUs = nowUs();
        log(describe(await runLoad(gateway, stream, 32, args.duration)));
        windows.push({ name: `gateway ${stream ? 'streaming' : 'non-streaming'} c=32`, fromUs, toUs: nowUs() });
      }
    } else {
      log(`measuring: ${args.duration} s per run, direct and gateway alternating`);
      const scenarios = await compareRuns(args, direct, gateway, gatewayChild, gatewayUrl);
      log(`time to first token: ${args.ttft} sequential streaming requests per target...`);
      const ttft = await measureTtft([direct, gateway], args.ttft);
      failed = finishReport({ file: join(RESULTS_DIR, 'latest.json'), args, pinned: pin, startedAt, scenarios, ttft, gateway: gatewayChild });
    }
  } catch (error) {
    failed = true;
    if (!interrupted) process.stderr.write(`\n!!! BENCHMARK FAILED: ${(error as Error)?.stack ?? error}\n`);
  } finally {
    if (!interrupted) {
      log('stopping the gateway (and its PostgreSQL) and the mock...');
      await stopAll(dataDir);
    }
  }

  if (args.profile && !interrupted) {
    const file = readdirSync(RESULTS_DIR).includes(profileName) ? join(RESULTS_DIR, profileName) : undefined;
    if (!file) {
      failed = true;
      process.stderr.write(`!!! no profile was written (${profileName})\n`);
    } else {
      const summaries: Record<string, ProfileSummary> = {};
      for (const w of windows) {
        summaries[w.name] = summarizeProfile(file, w);
        log('\n' + formatProfile(summaries[w.name], w.name));
      }
      writeFileSync(join(RESULTS_DIR, 'profile-latest.json'), JSON.stringify({ file, summaries }, null, 2));
      log(`\nprofile: ${file}\nsummary: ${join(RESULTS_DIR, 'profile-latest.json')} (figures under --cpu-prof are not representative)`);
    }
  }
  process.exitCode = failed ? 1 : 0;
}

void main();
