/**
 * Agent traffic (--agent): coding-agent sessions replayed from the recorded Claude Code and
 * Codex requests (test/fixtures/clients/). Every turn resends the whole conversation, grown
 * by one tool round trip (the assistant's call, ~3 KB of tool output), as agents do, so the
 * bodies are large and mostly repeated: what logging bodies costs is measured on them.
 *
 * Three sides, one after the other, the same sessions each: straight to the mock, through the
 * bench's gateway (bodies logged, the default) and through a second gateway started with
 * LOG_BODIES=false (its own embedded PostgreSQL). Per side: rate, CPU per request of the
 * gateway process, the mock and the gateway's PostgreSQL cluster (log writing finished and a
 * CHECKPOINT included), bytes sent and bytes stored (growth of pg_database_size) per request;
 * then a sample of logged rows read back through `GET /v1/logs/{id}` and compared with what
 * was sent.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client as PgClient } from 'pg';
import { Agent, request } from 'undici';
import { percentiles, type Percentiles } from './load';
import {
  cpuSeconds,
  createVirtualKey,
  embeddedPostgresOf,
  freePort,
  makeDataDir,
  startGateway,
  stopChild,
  waitForHealth,
  waitForLogsWritten,
  type Child,
} from './processes';
import { table } from './report';

const log = (message: string) => process.stdout.write(`${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

const FIXTURES_DIR = join(__dirname, '..', '..', 'test', 'fixtures', 'clients');
/** Tool output per round trip, about (bytes of text, before JSON escaping). */
const TOOL_OUTPUT_BYTES = 3000;
/** Logged rows compared with the bodies sent. */
const READ_BACK_SAMPLE = 20;
const VIRTUAL_KEYS = { 'claude-code': { provider: 'anthropic', slug: 'bench-anthropic' }, codex: { provider: 'openai', slug: 'bench-openai' } } as const;

type AgentClient = 'claude-code' | 'codex';

export interface AgentArgs {
  sessions: number;
  turns: number;
}

interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
}

interface Session {
  index: number;
  client: AgentClient;
  stream: boolean;
  /** The recorded path (Claude Code's `/v1/messages?beta=true`, Codex's `/v1/responses`). */
  path: string;
  /** The client's recorded headers, its credential left out (each side sets its own). */
  headers: Record<string, string>;
  /** The JSON sent at each turn, built before any load (the load generator only sends). */
  bodies: string[];
  bytes: number[];
}

// ---------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------

/** A small seeded generator (mulberry32): the same sessions on every side and every run. */
class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  chars(alphabet: string, length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }

  bytes(length: number): Buffer {
    return Buffer.from(Array.from({ length }, () => Math.floor(this.next() * 256)));
  }

  uuid(): string {
    const hex = this.chars('0123456789abcdef', 32);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  }
}

const HEX = '0123456789abcdef';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Vocabulary of the tool outputs: a TypeScript service's files, code and test names.
const NOUNS = [
  'budget',
  'ledger',
  'router',
  'stream',
  'session',
  'upstream',
  'journal',
  'retry',
  'policy',
  'tenant',
  'cache',
  'token',
  'usage',
  'price',
  'config',
  'guard',
  'span',
  'metric',
  'partition',
  'rollup',
  'export',
  'prompt',
  'tool',
  'schema',
  'adapter',
  'decoder',
  'writer',
  'reader',
  'queue',
  'worker',
  'health',
  'audit',
  'webhook',
  'limit',
  'window',
  'catalog',
  'model',
  'request',
  'response',
  'header',
  'workspace',
  'trace',
  'event',
  'chunk',
  'message',
  'attempt',
  'target',
  'provider',
  'credential',
  'snapshot',
];
const VERBS = [
  'load',
  'save',
  'resolve',
  'reserve',
  'settle',
  'parse',
  'encode',
  'decode',
  'flush',
  'merge',
  'split',
  'route',
  'record',
  'verify',
  'render',
  'compact',
  'prune',
  'count',
  'replay',
  'release',
  'open',
  'close',
  'read',
  'write',
  'refresh',
  'apply',
];
const ROLES = ['service', 'controller', 'module', 'guard', 'adapter', 'store', 'writer', 'decoder', 'planner', 'client'];
const DIRS = ['src/modules', 'src/providers', 'src/common', 'test/e2e', 'src/gateway', 'packages/core/src', 'lib', 'scripts'];
const TYPES = ['string', 'number', 'boolean', 'Date', 'unknown', 'Buffer', 'string[]', 'Record<string, string>'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const pascal = (...words: string[]) => words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
const camel = (...words: string[]) => words[0] + pascal(...words.slice(1));

interface ToolCall {
  command: string;
  /** Claude Code's Bash `description`. */
  description: string;
  output: string;
}

/** One line of plausible TypeScript. */
function codeLine(rng: Rng): string {
  const [a, b, c] = [rng.pick(NOUNS), rng.pick(NOUNS), rng.pick(NOUNS)];
  const verb = rng.pick(VERBS);
  switch (rng.int(0, 11)) {
    case 0:
      return `import { ${pascal(a, b)}${pascal(rng.pick(ROLES))} } from '../${a}/${a}-${b}.${rng.pick(ROLES)}';`;
    case 1:
      return `export class ${pascal(a, b)}${pascal(rng.pick(ROLES))} {`;
    case 2:
      return `  private readonly ${camel(a, b)} = new Map<string, ${pascal(c)}>();`;
    case 3:
      return `  async ${camel(verb, a)}(${b}: ${pascal(b)}, options: ${pascal(a)}Options = {}): Promise<${pascal(c)} | undefined> {`;
    case 4:
      return `    const ${camel(a, c)} = await this.${camel(b, 'store')}.${verb}(${b}.id, { ${c}: options.${c} ?? ${rng.int(1, 5000)} });`;
    case 5:
      return `    if (!${camel(a, c)}) throw new NotFoundException(\`${a} \${${b}.id} has no ${c}\`);`;
    case 6:
      return `    return { ...${b}, ${camel(c, 'at')}: new Date(), ${a}: ${camel(a, c)}.${a} ?? null };`;
    case 7:
      return `    // ${pascal(verb)}s the ${a} before the ${b} answers: a late ${c} must not ${rng.pick(VERBS)} it twice.`;
    case 8:
      return `    for (const ${a} of ${camel(b, c)}s) total += ${a}.${camel(c, 'count')} * ${rng.int(2, 64)};`;
    case 9:
      return `  ${camel(a, b)}: ${rng.pick(TYPES)};`;
    case 10:
      return `    this.logger.debug(\`${verb} ${a} \${${b}.id} in \${Date.now() - started} ms\`);`;
    default:
      return rng.next() < 0.5 ? '  }' : '';
  }
}

/** `cat -n` of a source file: numbered TypeScript. */
function sourceFile(rng: Rng): ToolCall {
  const file = `${rng.pick(DIRS)}/${rng.pick(NOUNS)}/${rng.pick(NOUNS)}-${rng.pick(NOUNS)}.${rng.pick(ROLES)}.ts`;
  const from = rng.int(1, 400);
  let output = '';
  for (let line = from; output.length < TOOL_OUTPUT_BYTES; line++) output += `${String(line).padStart(6)}\t${codeLine(rng)}\n`;
  const to = from + output.split('\n').length - 2;
  return { command: `cat -n ${file} | sed -n '${from},${to}p'`, description: `Show lines ${from}-${to} of the ${file.split('/').pop()} file`, output };
}

/** `ls -la` of a folder. */
function listing(rng: Rng): ToolCall {
  const dir = `${rng.pick(DIRS)}/${rng.pick(NOUNS)}`;
  const stamp = () =>
    `${rng.pick(MONTHS)} ${String(rng.int(1, 28)).padStart(2)} ${String(rng.int(0, 23)).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')}`;
  let output = `total ${rng.int(40, 900)}\ndrwxr-xr-x ${rng.int(3, 20)} dev dev  4096 ${stamp()} .\ndrwxr-xr-x ${rng.int(3, 20)} dev dev  4096 ${stamp()} ..\n`;
  while (output.length < TOOL_OUTPUT_BYTES) {
    const folder = rng.next() < 0.12;
    const name = folder
      ? rng.pick(NOUNS) + 's'
      : `${rng.pick(NOUNS)}-${rng.pick(NOUNS)}.${rng.pick(ROLES)}${rng.next() < 0.3 ? '.spec' : ''}.${rng.pick(['ts', 'ts', 'ts', 'json', 'md'])}`;
    const size = folder ? 4096 : rng.int(180, 48_000);
    output += `${folder ? 'drwxr-xr-x' : '-rw-r--r--'} ${folder ? rng.int(2, 9) : 1} dev dev ${String(size).padStart(5)} ${stamp()} ${name}\n`;
  }
  return { command: `ls -la ${dir}`, description: `List the files in ${dir}`, output };
}

/** `grep -rn` over the sources. */
function search(rng: Rng): ToolCall {
  const word = camel(rng.pick(VERBS), rng.pick(NOUNS));
  let output = '';
  while (output.length < TOOL_OUTPUT_BYTES) {
    const file = `${rng.pick(DIRS)}/${rng.pick(NOUNS)}/${rng.pick(NOUNS)}.${rng.pick(ROLES)}.ts`;
    output += `${file}:${rng.int(1, 900)}:${codeLine(rng).replace(/\b[a-z]+[A-Z]\w*\(/, `${word}(`)}\n`;
  }
  return { command: `grep -rn "${word}" src test`, description: `Find where ${word} is used`, output };
}

/** A test run's report. */
function testRun(rng: Rng): ToolCall {
  const file = `${rng.pick(NOUNS)}-${rng.pick(NOUNS)}.${rng.pick(ROLES)}.spec.ts`;
  let output = '';
  let passed = 0;
  while (output.length < TOOL_OUTPUT_BYTES - 200) {
    output += `${rng.next() < 0.85 ? 'PASS' : 'FAIL'} src/modules/${rng.pick(NOUNS)}/${rng.pick(NOUNS)}-${rng.pick(NOUNS)}.${rng.pick(ROLES)}.spec.ts (${rng.int(1, 30)}.${rng.int(100, 999)} s)\n`;
    for (let i = rng.int(2, 6); i > 0; i--, passed++) {
      output += `  ✓ ${rng.pick(VERBS)}s the ${rng.pick(NOUNS)} ${rng.pick(['before', 'after', 'without', 'with', 'once per'])} the ${rng.pick(NOUNS)} ${rng.pick(['answers', 'is written', 'expires', 'fails', 'is retried', 'streams'])} (${rng.int(1, 400)} ms)\n`;
    }
  }
  output += `\nTest Suites: ${rng.int(1, 40)} passed\nTests:       ${passed} passed, ${passed} total\nSnapshots:   0 total\nTime:        ${rng.int(2, 90)}.${rng.int(100, 999)} s\nRan all test suites matching /${file}/i.\n`;
  return { command: `npx jest ${file}`, description: `Run the ${file} tests`, output };
}

const TOOL_CALLS = [sourceFile, listing, search, testRun];

const recordings = new Map<string, RecordedRequest[]>();

/** A fixture's requests (read once; asSession copies them). */
function recordedRequests(file: string): RecordedRequest[] {
  let requests = recordings.get(file);
  if (!requests) recordings.set(file, (requests = (JSON.parse(readFileSync(join(FIXTURES_DIR, file), 'utf8')) as { requests: RecordedRequest[] }).requests));
  return requests;
}

/** Headers the load generator sets itself, and the recorded (redacted) credentials. */
const DROPPED_HEADERS = new Set(['host', 'content-length', 'connection', 'accept-encoding', 'x-api-key', 'authorization']);

function clientHeaders(recorded: RecordedRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(recorded.headers).filter(([name]) => !DROPPED_HEADERS.has(name.toLowerCase())));
}

/** The recording with its session id replaced: each session is a conversation of its own. */
function asSession(recorded: RecordedRequest, recordedId: string, sessionId: string): RecordedRequest {
  return JSON.parse(JSON.stringify(recorded).split(recordedId).join(sessionId)) as RecordedRequest;
}

/**
 * Claude Code: turn 0 is the recorded first request; turn t resends the recorded second
 * request's first two messages (the user prompt, the `system` message) and t round trips:
 * the assistant's Bash tool_use, the user's tool_result (cache_control on the last only).
 */
function claudeCodeSession(rng: Rng, turns: number, stream: boolean): Pick<Session, 'path' | 'headers' | 'bodies'> {
  const recorded = recordedRequests('claude-code-tool.json');
  const sessionId = rng.uuid();
  const [first, later] = recorded.map((r) => asSession(r, recorded[0].headers['x-claude-code-session-id'], sessionId));
  const rounds: { id: string; call: ToolCall }[] = [];
  const bodies: string[] = [];
  for (let turn = 0; turn < turns; turn++) {
    if (turn > 0) rounds.push({ id: `toolu_01${rng.chars(BASE62, 22)}`, call: rng.pick(TOOL_CALLS)(rng) });
    const messages =
      turn === 0
        ? first.body.messages
        : [
            ...later.body.messages.slice(0, 2),
            ...rounds.flatMap(({ id, call }, i) => [
              { role: 'assistant', content: [{ type: 'tool_use', id, name: 'Bash', input: { command: call.command, description: call.description } }] },
              {
                role: 'user',
                content: [
                  {
                    tool_use_id: id,
                    type: 'tool_result',
                    content: call.output,
                    is_error: false,
                    ...(i === rounds.length - 1 ? { cache_control: { type: 'ephemeral' } } : {}),
                  },
                ],
              },
            ]),
          ];
    bodies.push(JSON.stringify({ ...(turn === 0 ? first : later).body, messages, stream }));
  }
  return { path: first.path, headers: clientHeaders(first), bodies };
}

/**
 * Codex: the recorded first request's input, then per turn a `reasoning` item (encrypted
 * content sent back as received), the `exec_command` function_call and its output, in
 * Codex's wrapping ("Chunk ID … Output:").
 */
function codexSession(rng: Rng, turns: number, stream: boolean): Pick<Session, 'path' | 'headers' | 'bodies'> {
  const recorded = recordedRequests('codex-tool.json');
  const first = asSession(recorded[0], recorded[0].headers['session-id'], rng.uuid());
  const items: unknown[] = [...(first.body.input as unknown[])];
  const bodies: string[] = [];
  for (let turn = 0; turn < turns; turn++) {
    if (turn > 0) {
      const call = rng.pick(TOOL_CALLS)(rng);
      const callId = `call_${rng.chars(BASE62, 24)}`;
      const output =
        `Chunk ID: ${rng.chars(HEX, 6)}\nWall time: ${(rng.next() * 3).toFixed(4)} seconds\nProcess exited with code 0\n` +
        `Original token count: ${Math.ceil(call.output.length / 4)}\nOutput:\n${call.output}`;
      items.push(
        {
          type: 'reasoning',
          id: `rs_${rng.chars(HEX, 48)}`,
          summary: [],
          content: null,
          encrypted_content: `gAAAAAB${rng.bytes(rng.int(280, 420)).toString('base64url')}`,
        },
        {
          type: 'function_call',
          status: 'completed',
          id: `fc_${rng.chars(HEX, 48)}`,
          name: 'exec_command',
          arguments: JSON.stringify({ cmd: call.command }),
          call_id: callId,
        },
        { type: 'function_call_output', id: `fco_${rng.uuid()}`, call_id: callId, output },
      );
    }
    bodies.push(JSON.stringify({ ...first.body, input: items, stream }));
  }
  return { path: first.path, headers: clientHeaders(first), bodies };
}

/** Claude Code and Codex sessions alternate; within each, streaming and not alternate. */
function buildSessions(count: number, turns: number, seed: number): Session[] {
  return Array.from({ length: count }, (_, index) => {
    const rng = new Rng(seed + index * 7919);
    const client: AgentClient = index % 2 === 0 ? 'claude-code' : 'codex';
    const stream = Math.floor(index / 2) % 2 === 0;
    const built = client === 'claude-code' ? claudeCodeSession(rng, turns, stream) : codexSession(rng, turns, stream);
    return { index, client, stream, ...built, bytes: built.bodies.map((body) => Buffer.byteLength(body)) };
  });
}

// ---------------------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------------------

interface Side {
  name: string;
  baseUrl: string;
  /** The headers each client's requests get on this side (credential, routing). */
  headers: Record<AgentClient, Record<string, string>>;
  gateway?: GatewayUnderTest;
}

interface GatewayUnderTest {
  url: string;
  child: Child;
  dataDir: string;
  logBodies: boolean;
  postgresPid: number;
  db: PgClient;
}

interface SentRequest {
  session: number;
  turn: number;
  client: AgentClient;
  stream: boolean;
  bytes: number;
  ok: boolean;
  /** x-gateway-request-id: the log row's id. */
  logId?: string;
}

interface LoadRun {
  seconds: number;
  sent: SentRequest[];
  /** ms, of the answered requests. */
  latencies: number[];
  failures: string[];
}

/** What a complete answer of each API looks like, streamed or not; undefined = complete. */
function incompleteAnswer(session: Session, text: string): string | undefined {
  if (session.stream) {
    const end = session.client === 'claude-code' ? 'event: message_stop' : 'event: response.completed';
    return text.includes(end) ? undefined : `stream without ${end}`;
  }
  try {
    const answer = JSON.parse(text) as { type?: string; object?: string; status?: string };
    const complete = session.client === 'claude-code' ? answer.type === 'message' : answer.object === 'response' && answer.status === 'completed';
    return complete ? undefined : 'not a complete answer';
  } catch {
    return 'answer is not JSON';
  }
}

/** Every session at once, each one turn after the other, on one connection per session. */
async function runSessions(sessions: Session[], side: Side): Promise<LoadRun> {
  const dispatcher = new Agent({ connections: sessions.length, keepAliveTimeout: 60_000 });
  const sent: SentRequest[] = [];
  const latencies: number[] = [];
  const failures: string[] = [];
  const started = performance.now();
  await Promise.all(
    sessions.map(async (session) => {
      for (let turn = 0; turn < session.bodies.length; turn++) {
        const record: SentRequest = { session: session.index, turn, client: session.client, stream: session.stream, bytes: session.bytes[turn], ok: false };
        sent.push(record);
        const begun = performance.now();
        try {
          const response = await request(`${side.baseUrl}${session.path}`, {
            method: 'POST',
            headers: { ...session.headers, ...side.headers[session.client] },
            body: session.bodies[turn],
            dispatcher,
          });
          const text = await response.body.text();
          const problem = response.statusCode !== 200 ? `HTTP ${response.statusCode}: ${text.slice(0, 300)}` : incompleteAnswer(session, text);
          const logId = response.headers['x-gateway-request-id'];
          if (typeof logId === 'string') record.logId = logId;
          if (problem) failures.push(`${side.name}, session ${session.index} (${session.client}${session.stream ? ', stream' : ''}) turn ${turn}: ${problem}`);
          else {
            record.ok = true;
            latencies.push(performance.now() - begun);
          }
        } catch (error) {
          failures.push(`${side.name}, session ${session.index} turn ${turn}: ${(error as Error).message}`);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await dispatcher.close();
  return { seconds, sent, latencies, failures };
}

// ---------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------

/** Bytes of one table (a partitioned one: all its partitions). */
interface TableBytes {
  heap: number;
  toast: number;
  indexes: number;
}

interface Sample {
  mockCpu: number;
  gatewayCpu: number;
  postgresCpu: number;
  /** This process: the load generator. */
  loadCpu: number;
  databaseBytes: number;
  tables: Map<string, TableBytes>;
}

/** All of the cluster's processes: the postmaster, its children, and those that exited. */
function postgresCpuSeconds(postmasterPid: number): number {
  const cpu = cpuSeconds(postmasterPid);
  return cpu.self + cpu.reaped + cpu.descendants;
}

/** Per table of the gateway (partitions summed under their root): heap (with its maps), TOAST, indexes. */
const TABLE_BYTES = `
  select coalesce(pg_partition_root(c.oid), c.oid::regclass)::text as name,
         sum(pg_table_size(c.oid) - coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0))::bigint as heap,
         sum(coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0))::bigint as toast,
         sum(pg_indexes_size(c.oid))::bigint as indexes
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where c.relkind in ('r', 'm') and n.nspname not in ('pg_catalog', 'information_schema')
   group by 1`;

async function sample(mockPid: number, gateway?: GatewayUnderTest): Promise<Sample> {
  const own = process.cpuUsage();
  const tables = new Map<string, TableBytes>();
  let databaseBytes = NaN;
  if (gateway) {
    databaseBytes = Number((await gateway.db.query<{ size: string }>('select pg_database_size(current_database()) as size')).rows[0].size);
    for (const row of (await gateway.db.query<{ name: string; heap: string; toast: string; indexes: string }>(TABLE_BYTES)).rows) {
      tables.set(row.name, { heap: Number(row.heap), toast: Number(row.toast), indexes: Number(row.indexes) });
    }
  }
  return {
    mockCpu: cpuSeconds(mockPid).self,
    gatewayCpu: gateway ? cpuSeconds(gateway.child.proc.pid!).self : NaN,
    postgresCpu: gateway ? postgresCpuSeconds(gateway.postgresPid) : NaN,
    loadCpu: (own.user + own.system) / 1e6,
    databaseBytes,
    tables,
  };
}

/** The gateway's log rows all written and flushed to the data files: what the load costs PostgreSQL, in full. */
async function settle(gateway: GatewayUnderTest): Promise<number> {
  const started = performance.now();
  // A streamed answer's row is queued as its response closes, a moment after the client read the end.
  await sleep(200);
  await waitForLogsWritten(gateway.url, 180_000);
  const seconds = (performance.now() - started) / 1000;
  await gateway.db.query('CHECKPOINT');
  return seconds;
}

/** One side's run of a round: the load, and what it cost until its log was written. */
interface Measurement {
  run: LoadRun;
  before: Sample;
  after: Sample;
  /** From the last answer to `pending_logs: 0`. */
  logTailSeconds: number;
}

async function measure(sessions: Session[], side: Side, mockPid: number): Promise<Measurement> {
  if (side.gateway) await settle(side.gateway);
  const before = await sample(mockPid, side.gateway);
  const run = await runSessions(sessions, side);
  const logTailSeconds = side.gateway ? await settle(side.gateway) : NaN;
  const after = await sample(mockPid, side.gateway);
  const ok = run.sent.filter((r) => r.ok).length;
  // Per round too: how far the rounds agree tells how much to trust the sums.
  const perRequestMs = (key: 'gatewayCpu' | 'postgresCpu') => (((after[key] - before[key]) * 1000) / run.sent.length).toFixed(2);
  log(
    `  ${side.name.padEnd(26)} ${ok}/${run.sent.length} answered in ${run.seconds.toFixed(1)} s, ${Math.round(ok / run.seconds)
      .toString()
      .padStart(3)} req/s` +
      (side.gateway
        ? `; CPU ms/request gateway ${perRequestMs('gatewayCpu')}, PostgreSQL ${perRequestMs('postgresCpu')}; ` +
          `stored ${kib((after.databaseBytes - before.databaseBytes) / run.sent.length)}/request; log written ${logTailSeconds.toFixed(1)} s after the last answer`
        : '') +
      (run.failures.length ? `   !!! ${run.failures.length} failed` : ''),
  );
  return { run, before, after, logTailSeconds };
}

interface TableGrowth extends TableBytes {
  name: string;
}

/** What a side's runs measured, per request where it says so. */
interface Figures {
  requests: number;
  ok: number;
  seconds: number;
  rps: number;
  latency: Percentiles;
  bytesSentPerRequest: number;
  /** ms of CPU per request; NaN where there is no gateway. */
  gatewayCpuMs: number;
  mockCpuMs: number;
  postgresCpuMs: number;
  loadGeneratorCpuMs: number;
  bytesStoredPerRequest: number;
  /** Per request, by table, largest first; `other`: the rest of the database's growth (catalogs…). */
  storedByTable: TableGrowth[];
  /** From the last answers to `pending_logs: 0`, summed over the runs. */
  logTailSeconds: number;
  failures: string[];
}

interface SideResult extends Figures {
  name: string;
  /** Each round alone: how far they agree tells how far to trust the sums. */
  rounds: Omit<Figures, 'latency' | 'failures'>[];
  readBack?: ReadBack;
}

/** Runs summed: rates over the time of all the runs, costs over all their requests. */
function figuresOf(measurements: Measurement[]): Figures {
  const sum = (f: (m: Measurement) => number) => measurements.reduce((total, m) => total + f(m), 0);
  const sent = measurements.flatMap((m) => m.run.sent);
  const requests = Math.max(1, sent.length);
  const ok = sent.filter((r) => r.ok).length;
  const seconds = sum((m) => m.run.seconds);
  const cpuMs = (key: 'mockCpu' | 'gatewayCpu' | 'postgresCpu' | 'loadCpu') => (sum((m) => m.after[key] - m.before[key]) * 1000) / requests;
  const growth = new Map<string, TableBytes>();
  for (const { before, after } of measurements) {
    for (const [tableName, bytes] of after.tables) {
      const was = before.tables.get(tableName) ?? { heap: 0, toast: 0, indexes: 0 };
      const total = growth.get(tableName) ?? { heap: 0, toast: 0, indexes: 0 };
      growth.set(tableName, {
        heap: total.heap + bytes.heap - was.heap,
        toast: total.toast + bytes.toast - was.toast,
        indexes: total.indexes + bytes.indexes - was.indexes,
      });
    }
  }
  const bytesStoredPerRequest = sum((m) => m.after.databaseBytes - m.before.databaseBytes) / requests;
  const grown = [...growth].map(([tableName, b]) => ({ name: tableName, heap: b.heap / requests, toast: b.toast / requests, indexes: b.indexes / requests }));
  const tablesTotal = grown.reduce((total, t) => total + t.heap + t.toast + t.indexes, 0);
  const storedByTable = Number.isFinite(bytesStoredPerRequest)
    ? [...grown.filter((t) => t.heap + t.toast + t.indexes !== 0), { name: 'other', heap: bytesStoredPerRequest - tablesTotal, toast: 0, indexes: 0 }].sort(
        (a, b) => b.heap + b.toast + b.indexes - (a.heap + a.toast + a.indexes),
      )
    : [];
  return {
    requests: sent.length,
    ok,
    seconds,
    rps: ok / seconds,
    latency: percentiles(measurements.flatMap((m) => m.run.latencies)),
    bytesSentPerRequest: sent.reduce((total, r) => total + r.bytes, 0) / requests,
    gatewayCpuMs: cpuMs('gatewayCpu'),
    mockCpuMs: cpuMs('mockCpu'),
    postgresCpuMs: cpuMs('postgresCpu'),
    loadGeneratorCpuMs: cpuMs('loadCpu'),
    bytesStoredPerRequest,
    storedByTable,
    logTailSeconds: sum((m) => m.logTailSeconds),
    failures: measurements.flatMap((m) => m.run.failures),
  };
}

function summarize(name: string, measurements: Measurement[]): SideResult {
  const rounds = measurements.map((m) => {
    const { latency: _latency, failures: _failures, ...figures } = figuresOf([m]);
    return figures;
  });
  return { name, ...figuresOf(measurements), rounds };
}

// ---------------------------------------------------------------------------------------
// Read-back
// ---------------------------------------------------------------------------------------

interface ReadBack {
  checked: number;
  matching: number;
  /** "session 3 turn 19 (codex, stream): <what>" for each that did not match. */
  mismatches: string[];
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const brief = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
};

/** The path of the first difference between two JSON values (key order aside: jsonb sorts keys), or undefined. */
function firstDifference(sent: unknown, stored: unknown, path = '$'): string | undefined {
  if (sent === stored) return undefined;
  if (Array.isArray(sent) && Array.isArray(stored)) {
    if (sent.length !== stored.length) return `${path}: ${sent.length} items sent, ${stored.length} stored`;
    for (let i = 0; i < sent.length; i++) {
      const difference = firstDifference(sent[i], stored[i], `${path}[${i}]`);
      if (difference) return difference;
    }
    return undefined;
  }
  if (isObject(sent) && isObject(stored)) {
    for (const key of new Set([...Object.keys(sent), ...Object.keys(stored)])) {
      if (!(key in stored)) return `${path}.${key}: not stored`;
      if (!(key in sent)) return `${path}.${key}: stored, not sent (${brief(stored[key])})`;
      const difference = firstDifference(sent[key], stored[key], `${path}.${key}`);
      if (difference) return difference;
    }
    return undefined;
  }
  return `${path}: sent ${brief(sent)}, stored ${brief(stored)}`;
}

/** The last turn of every session first (the largest bodies), then first and middle turns, answered ones only. */
function readBackSample(sent: SentRequest[], turns: number, size: number): SentRequest[] {
  const answered = sent.filter((r) => r.ok && r.logId).sort((a, b) => a.session - b.session);
  const picked = new Set<SentRequest>();
  for (const turn of [turns - 1, 0, Math.floor(turns / 2), 1]) {
    for (const r of answered) if (r.turn === turn && picked.size < size) picked.add(r);
  }
  return [...picked];
}

async function logRow(gatewayUrl: string, adminKey: string, id: string): Promise<Record<string, unknown>> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${gatewayUrl}/v1/logs/${encodeURIComponent(id)}`, { headers: { 'x-gateway-api-key': adminKey } });
    if (response.status === 200) return (await response.json()) as Record<string, unknown>;
    // A row still on its way to the database.
    if (response.status !== 404 || attempt >= 20) throw new Error(`GET /v1/logs/${id}: ${response.status} ${(await response.text()).slice(0, 200)}`);
    await sleep(100);
  }
}

/** Logged: request_body JSON-equal to the body sent, a response_body. Not logged: neither stored. */
async function readBack(sessions: Session[], run: LoadRun, gateway: GatewayUnderTest, adminKey: string, turns: number): Promise<ReadBack> {
  const chosen = readBackSample(run.sent, turns, READ_BACK_SAMPLE);
  const mismatches: string[] = [];
  for (const r of chosen) {
    const label = `session ${r.session} turn ${r.turn} (${r.client}${r.stream ? ', stream' : ''})`;
    try {
      const row = await logRow(gateway.url, adminKey, r.logId!);
      if (gateway.logBodies) {
        const difference = firstDifference(JSON.parse(sessions[r.session].bodies[r.turn]), row.request_body);
        if (difference) mismatches.push(`${label}: request_body ${difference}`);
        else if (row.response_body == null) mismatches.push(`${label}: no response_body`);
      } else if (row.request_body != null || row.response_body != null) {
        mismatches.push(`${label}: a body was stored with LOG_BODIES=false`);
      }
    } catch (error) {
      mismatches.push(`${label}: ${(error as Error).message}`);
    }
  }
  return { checked: chosen.length, matching: chosen.length - mismatches.length, mismatches };
}

// ---------------------------------------------------------------------------------------
// Scenario
// ---------------------------------------------------------------------------------------

/** Each side is measured this many times, the sides alternating, new sessions each round: a passing load on the shared machine does not favour one side. */
const ROUNDS = 2;

export interface AgentScenarioOptions {
  args: AgentArgs;
  mock: { child: Child; url: string };
  /** The bench's gateway (default settings: bodies logged). */
  gateway: { child: Child; url: string; dataDir: string };
  adminKey: string;
  /** Core of the second gateway with --pin. */
  gatewayCore?: number;
  resultsDir: string;
  /** Each run of the bench's gateway, on the monotonic clock (µs): the --profile windows. */
  onGatewayWindow?: (name: string, fromUs: number, toUs: number) => void;
}

async function gatewayUnderTest(url: string, child: Child, dataDir: string, logBodies: boolean): Promise<GatewayUnderTest> {
  const postgres = embeddedPostgresOf(dataDir);
  const db = new PgClient({ connectionString: postgres.url });
  db.on('error', () => undefined); // the gateway stops its PostgreSQL first at the end
  await db.connect();
  return { url, child, dataDir, logBodies, postgresPid: postgres.pid, db };
}

function gatewaySide(name: string, gateway: GatewayUnderTest, adminKey: string): Side {
  const routed = (client: AgentClient) => ({ 'x-gateway-api-key': adminKey, 'x-gateway-virtual-key': VIRTUAL_KEYS[client].slug });
  return { name, baseUrl: gateway.url, headers: { 'claude-code': routed('claude-code'), codex: routed('codex') }, gateway };
}

const perRequest = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

function formatAgentReport(results: SideResult[]): string {
  const cells = (f: (r: SideResult) => string) => results.map(f);
  const rows: string[][] = [
    ['requests answered', ...cells((r) => `${r.ok}/${r.requests}`)],
    ['requests per second', ...cells((r) => Math.round(r.rps).toString())],
    ['latency p50 / p99 (ms)', ...cells((r) => `${r.latency.p50.toFixed(1)} / ${r.latency.p99.toFixed(1)}`)],
    ['gateway CPU per request (ms)', ...cells((r) => perRequest(r.gatewayCpuMs))],
    ['mock CPU per request (ms)', ...cells((r) => perRequest(r.mockCpuMs))],
    ['PostgreSQL CPU per request (ms)', ...cells((r) => perRequest(r.postgresCpuMs))],
    ['load generator CPU per request (ms)', ...cells((r) => perRequest(r.loadGeneratorCpuMs))],
    ['bytes sent per request', ...cells((r) => kib(r.bytesSentPerRequest))],
    [
      'bytes stored per request (% of sent)',
      ...cells((r) =>
        Number.isFinite(r.bytesStoredPerRequest)
          ? `${kib(r.bytesStoredPerRequest)} (${((r.bytesStoredPerRequest / r.bytesSentPerRequest) * 100).toFixed(1)}%)`
          : 'n/a',
      ),
    ],
    ['log written after the load (s)', ...cells((r) => (Number.isFinite(r.logTailSeconds) ? r.logTailSeconds.toFixed(1) : 'n/a'))],
    [
      'read-back',
      ...cells((r) =>
        !r.readBack
          ? 'n/a'
          : `${r.readBack.mismatches.length ? 'DIFFERS' : r.name.includes('LOG_BODIES=false') ? 'no bodies' : 'equal'} ${r.readBack.matching}/${r.readBack.checked}`,
      ),
    ],
  ];
  return table(['', ...results.map((r) => r.name)], rows);
}

/** Where a gateway's bytes went, per request: the tables that grew. */
function formatStorage(result: SideResult): string {
  const parts = result.storedByTable
    .filter((t) => Math.abs(t.heap + t.toast + t.indexes) >= 51)
    .map((t) =>
      t.name === 'other'
        ? `other ${kib(t.heap)}`
        : `${t.name} ${kib(t.heap + t.toast + t.indexes)} (heap ${kib(t.heap)}, TOAST ${kib(t.toast)}, indexes ${kib(t.indexes)})`,
    );
  return `  ${result.name}: ${parts.join('; ') || 'nothing'}`;
}

/** Runs the scenario, prints its table, writes agent-latest.json; true when something failed. */
export async function agentScenario(options: AgentScenarioOptions): Promise<boolean> {
  const { args, mock, adminKey } = options;
  const rounds = Array.from({ length: ROUNDS }, (_, round) => buildSessions(args.sessions, args.turns, 1 + round * 100_003));
  // Other conversations (same prompts and tools) to warm up every side: JIT, connections, the log tables.
  const warmup = buildSessions(Math.min(4, args.sessions), Math.min(3, args.turns), 1_000_003);
  const sessions = rounds[0];
  const counts = { claude: sessions.filter((s) => s.client === 'claude-code').length, streams: sessions.filter((s) => s.stream).length };
  const totalBytes = sessions.reduce((sum, s) => sum + s.bytes.reduce((a, b) => a + b, 0), 0);
  log(
    `agent traffic: ${args.sessions} sessions at once (${counts.claude} Claude Code, ${args.sessions - counts.claude} Codex; ${counts.streams} streaming) x ${args.turns} turns ` +
      `= ${args.sessions * args.turns} requests per side and round (${ROUNDS} rounds), ${kib(totalBytes / (args.sessions * args.turns))} a request on average, ` +
      `${kib(Math.max(...sessions.map((s) => s.bytes[s.bytes.length - 1])))} the largest`,
  );

  const port = await freePort();
  const quietUrl = `http://127.0.0.1:${port}`;
  const quietDir = makeDataDir();
  const quietChild = startGateway({ port, dataDir: quietDir, adminKey, core: options.gatewayCore, env: { LOG_BODIES: 'false' } });
  const gateways: GatewayUnderTest[] = [];
  let failed = false;
  try {
    log(`starting a second gateway with LOG_BODIES=false on ${quietUrl} (embedded PostgreSQL in ${quietDir})`);
    await waitForHealth(quietUrl, quietChild);
    for (const url of [options.gateway.url, quietUrl]) {
      for (const { provider, slug } of Object.values(VIRTUAL_KEYS)) await createVirtualKey(url, adminKey, mock.url, provider, slug);
    }
    gateways.push(await gatewayUnderTest(options.gateway.url, options.gateway.child, options.gateway.dataDir, true));
    gateways.push(await gatewayUnderTest(quietUrl, quietChild, quietDir, false));

    const mockSide: Side = {
      name: 'mock alone',
      baseUrl: mock.url,
      headers: { 'claude-code': { 'x-api-key': 'sk-ant-bench-0000000000' }, codex: { authorization: 'Bearer sk-bench-0000000000' } },
    };
    const sides = [mockSide, gatewaySide('gateway (bodies logged)', gateways[0], adminKey), gatewaySide('gateway, LOG_BODIES=false', gateways[1], adminKey)];

    log('warming up...');
    for (const side of sides) {
      const run = await runSessions(warmup, side);
      // A refusal here (the mock's validation, the gateway's) would spoil every figure: stop with it.
      if (run.failures.length) throw new Error(`warm-up failed on ${side.name}:\n  ${run.failures.slice(0, 5).join('\n  ')}`);
    }

    const measurements = new Map<Side, Measurement[]>(sides.map((side) => [side, []]));
    for (const [round, roundSessions] of rounds.entries()) {
      log(`round ${round + 1} of ${ROUNDS} (one side after the other, the same sessions each):`);
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const fromUs = nowUs();
        measurements.get(side)!.push(await measure(roundSessions, side, mock.child.proc.pid!));
        if (side.gateway === gateways[0]) options.onGatewayWindow?.(`agent traffic, ${side.name}, round ${round + 1}`, fromUs, nowUs());
      }
    }
    const results = sides.map((side) => summarize(side.name, measurements.get(side)!));
    // The last round's bodies are still at hand: compare its rows with them.
    for (const [i, side] of sides.entries()) {
      if (side.gateway) results[i].readBack = await readBack(rounds[ROUNDS - 1], measurements.get(side)![ROUNDS - 1].run, side.gateway, adminKey, args.turns);
    }

    log('\n' + formatAgentReport(results));
    log(`(${ROUNDS} rounds per side summed; CPU and bytes stored: from before each run until the gateway had written every log row and`);
    log(" PostgreSQL had checkpointed; PostgreSQL = all processes of the gateway's embedded cluster; stored = growth of pg_database_size;");
    log(' the warm-up stored the recorded prompts and tools once already)');
    log('\nbytes stored per request, by table:');
    for (const result of results.slice(1)) log(formatStorage(result));
    const logged = results[1].readBack!;
    log(
      `\nlogged bodies read back equal: ${logged.mismatches.length ? 'NO' : 'yes'} (${logged.matching}/${logged.checked})` +
        logged.mismatches.map((m) => `\n  ${m}`).join(''),
    );
    const quiet = results[2].readBack!;
    log(
      `LOG_BODIES=false rows without bodies: ${quiet.mismatches.length ? 'NO' : 'yes'} (${quiet.matching}/${quiet.checked})` +
        quiet.mismatches.map((m) => `\n  ${m}`).join(''),
    );

    const failures = results.flatMap((r) => r.failures);
    if (failures.length)
      process.stderr.write(
        `\n!!! NOT EVERY REQUEST SUCCEEDED (${failures.length}):\n${failures
          .slice(0, 10)
          .map((f) => `!!!   ${f}`)
          .join('\n')}\n`,
      );
    for (const gateway of gateways) {
      if (gateway.child.linesSinceReady > 0) {
        log(`\nthe gateway on ${gateway.url} wrote ${gateway.child.linesSinceReady} log line(s) at warn or above; the last ones:`);
        for (const line of gateway.child.tail.slice(-10)) log(`  ${line}`);
      }
    }
    failed = failures.length > 0 || logged.mismatches.length > 0 || quiet.mismatches.length > 0;

    const file = join(options.resultsDir, 'agent-latest.json');
    const requestsPerSide = args.sessions * args.turns * ROUNDS;
    writeFileSync(
      file,
      JSON.stringify({ startedAt: new Date().toISOString(), node: process.version, args, rounds: ROUNDS, requestsPerSide, results }, null, 2),
    );
    log(`results written to ${file}`);
  } finally {
    for (const gateway of gateways) await gateway.db.end().catch(() => undefined);
    await stopChild(quietChild);
    rmSync(quietDir, { recursive: true, force: true });
  }
  return failed;
}
