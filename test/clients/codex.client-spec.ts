/**
 * The Codex CLI (`@openai/codex`, pinned in package.json) headless: `codex exec`, with a
 * CODEX_HOME of its own whose config.toml names the gateway as a custom model provider
 * (`base_url`, `env_key`: the gateway key goes as `Authorization: Bearer gk-…`,
 * `wire_api = "responses"`). Its requests are what test/fixtures/clients/codex-*.json show.
 * Against Anthropic and Gemini targets the gateway bridges the Responses API through chat.
 * Update checks and analytics off; no sandbox (nothing but `exec_command` is ever asked for).
 *
 * With `supports_websockets = true` Codex opens `GET /v1/responses` as a WebSocket: relayed to the
 * OpenAI target (its prewarm and its turn, each a log row), a 426 for the others (Codex then
 * uses HTTP).
 *
 * The tool round trip: the mock calls the first function Codex offers (`exec_command`) with
 * {"location":"Paris"}; Codex answers with a function_call_output (its argument error) and
 * sends the history back.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ClientWorld,
  describeRun,
  GatewayKey,
  isolatedEnv,
  logRowsOf,
  MOCK_TEXT,
  ROOT,
  runProcess,
  TARGETS,
  TOOL_PROMPT,
  upstreamCalls,
} from './client-harness';
import { describeClient, startClientWorld, toolCallsInHistory } from './client-matrix';

const CODEX = join(ROOT, 'node_modules/.bin/codex');

async function codex(baseUrl: string, key: GatewayKey, prompt: string, extraArgs: string[], websockets = false) {
  const home = mkdtempSync(join(tmpdir(), 'codex-client-'));
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome);
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      `model = "${key.target.model}"`,
      'model_provider = "gateway"',
      'check_for_update_on_startup = false',
      '[analytics]',
      'enabled = false',
      '[model_providers.gateway]',
      'name = "Gateway"',
      `base_url = "${baseUrl}/v1"`,
      'env_key = "GATEWAY_API_KEY"',
      'wire_api = "responses"',
      // WebSocket mode (GET /v1/responses upgraded): relayed for OpenAI, a 426 sends Codex back to HTTP for the others.
      ...(websockets ? ['supports_websockets = true'] : []),
      // One try: a failure shows at once instead of after Codex's retries.
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  const env = isolatedEnv(home, { CODEX_HOME: codexHome, GATEWAY_API_KEY: key.key });
  const args = ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '--color', 'never', ...extraArgs, prompt];
  const run = await runProcess(CODEX, args, { env, cwd: home, timeoutMs: 45_000 }).finally(() => rmSync(home, { recursive: true, force: true }));
  if (run.code !== 0) throw new Error(`codex ${args.join(' ')}: ${describeRun(run)}`);
  return run;
}

/** The JSON lines `codex exec --json` prints (thread / turn / item events). */
const events = (stdout: string): any[] =>
  stdout
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line));
const agentText = (all: any[]) =>
  all
    .filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message')
    .map((e) => e.item.text)
    .join('\n');

describeClient('Codex CLI (codex exec)', (world) => ({
  operation: 'responses',
  expectedTool: 'exec_command',
  plain: async (key) => (await codex(world.baseUrl, key, 'Say hello', [])).stdout,
  stream: async (key) => {
    const all = events((await codex(world.baseUrl, key, 'Say hello', ['--json'])).stdout);
    expect(all.find((e) => e.type === 'turn.completed')?.usage?.input_tokens).toBeGreaterThan(0);
    return agentText(all);
  },
  tool: async (key) => {
    const run = await codex(world.baseUrl, key, TOOL_PROMPT, ['--json']);
    const all = events(run.stdout);
    // A call whose arguments Codex refused is no command_execution item: the history it sends back shows it.
    const last = upstreamCalls(world, key.target).pop();
    return { text: agentText(all), toolCalls: toolCallsInHistory(key.target, last?.body) };
  },
}));

describe('Codex CLI over WebSocket (supports_websockets)', () => {
  let world: ClientWorld;

  beforeAll(async () => {
    world = await startClientWorld();
  }, 240_000);

  afterAll(async () => {
    await world?.close();
  });

  beforeEach(() => world.mock.reset());

  it('to OpenAI: one WebSocket through the gateway to the provider, each response a log row', async () => {
    const key = await world.keyFor(TARGETS.openai, 'codex websocket openai');
    const run = await codex(world.baseUrl, key, 'Say hello', [], true);
    expect(run.stdout).toContain(MOCK_TEXT);
    // Codex opens a socket to prewarm (`generate: false`) and one for the turn: every one reaches the provider with its key.
    const sockets = world.mock.responsesSockets;
    expect(sockets.length).toBeGreaterThan(0);
    for (const socket of sockets) expect(socket.headers.authorization).toBe('Bearer upstream-secret-openai');
    const created = sockets.flatMap((socket) => socket.events.filter((event) => event.type === 'response.create'));
    expect(created.some((event) => event.generate !== false)).toBe(true);
    // Nothing went over HTTP: the answer came through the socket.
    expect(world.mock.requests.filter((request) => request.path === '/v1/responses')).toHaveLength(0);
    const rows = await logRowsOf(world, key);
    expect(rows).toHaveLength(created.length);
    expect(rows.map((row: any) => [row.operation, row.status_code, row.is_stream, row.error])).toEqual(rows.map(() => ['responses', 200, true, null]));
  });

  it('to Anthropic: the 426 sends Codex to HTTP at once, bridged through chat as usual', async () => {
    const key = await world.keyFor(TARGETS.anthropic, 'codex websocket anthropic');
    const run = await codex(world.baseUrl, key, 'Say hello', [], true);
    expect(run.stdout).toContain(MOCK_TEXT);
    expect(world.mock.responsesSockets).toHaveLength(0);
    expect(world.mock.requests.filter((request) => request.path === '/v1/messages')).toHaveLength(1);
  });
});
