/**
 * The Gemini CLI (`@google/gemini-cli`, pinned in package.json) headless: `gemini -p`, set up for
 * a gateway as a user does it: GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY (sent as
 * `x-goog-api-key`), and in its settings.json `security.auth.selectedType: "gemini-api-key"`
 * (0.61.0 takes GOOGLE_GEMINI_BASE_URL alone for an auth type "gateway" that its own check then
 * refuses: "Invalid auth method selected."). It streams every answer
 * (`:streamGenerateContent?alt=sse`) and calls no other route of the gateway: no countTokens,
 * no model list. A temporary HOME per run, `--skip-trust` for that new folder; usage statistics
 * (Clearcut, and the `x-gemini-api-privileged-user-id` header), telemetry and update checks off,
 * so no traffic but the model's; one attempt per request.
 *
 * The tool round trip: the mock calls the first tool the CLI offers (`update_topic`) with
 * {"location":"Paris"}; the CLI answers with a functionResponse (its parameter error, which is
 * fine: it is the client's real result) and sends the history back.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRun, GatewayKey, isolatedEnv, ROOT, runProcess, TOOL_PROMPT, upstreamCalls } from './client-harness';
import { describeClient, toolCallsInHistory } from './client-matrix';

const GEMINI = join(ROOT, 'node_modules/.bin/gemini');

const SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1, retryFetchErrors: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
};

async function gemini(baseUrl: string, key: GatewayKey, prompt: string, extraArgs: string[]) {
  const home = mkdtempSync(join(tmpdir(), 'gemini-client-'));
  mkdirSync(join(home, '.gemini'));
  writeFileSync(join(home, '.gemini/settings.json'), JSON.stringify(SETTINGS, null, 2));
  const env = isolatedEnv(home, {
    GOOGLE_GEMINI_BASE_URL: baseUrl,
    GEMINI_API_KEY: key.key,
    // One process (no relaunch with a larger heap), so the time limit's kill ends it all.
    GEMINI_CLI_NO_RELAUNCH: 'true',
  });
  const args = ['-p', prompt, '-m', key.target.model, '--skip-trust', ...extraArgs];
  const run = await runProcess(GEMINI, args, { env, cwd: home, timeoutMs: 45_000 }).finally(() => rmSync(home, { recursive: true, force: true }));
  if (run.code !== 0) throw new Error(`gemini ${args.join(' ')}: ${describeRun(run)}`);
  return run;
}

/** The JSON lines `gemini -p … --output-format stream-json` prints (init, message, tool_use, tool_result, result). */
const events = (stdout: string): any[] =>
  stdout
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line));
const assistantText = (all: any[]) =>
  all
    .filter((e) => e.type === 'message' && e.role === 'assistant')
    .map((e) => e.content)
    .join('');
/** The last event, `result`, with status success and the tokens the answers counted. */
function expectSuccess(all: any[]): void {
  const result = all.at(-1);
  expect(result).toMatchObject({ type: 'result', status: 'success' });
  expect(result.stats.input_tokens).toBeGreaterThan(0);
  expect(result.stats.output_tokens).toBeGreaterThan(0);
}

describeClient('Gemini CLI (gemini -p)', (world) => ({
  operation: 'gemini.generate_content',
  expectedTool: 'update_topic',
  plain: async (key) => (await gemini(world.baseUrl, key, 'Say hello', ['--output-format', 'text'])).stdout,
  stream: async (key) => {
    const all = events((await gemini(world.baseUrl, key, 'Say hello', ['--output-format', 'stream-json'])).stdout);
    expectSuccess(all);
    // The mocks stream one word a chunk, which the CLI prints as it comes.
    expect(all.filter((e) => e.type === 'message' && e.role === 'assistant' && e.delta).length).toBeGreaterThan(1);
    return assistantText(all);
  },
  tool: async (key) => {
    const all = events((await gemini(world.baseUrl, key, TOOL_PROMPT, ['--output-format', 'stream-json'])).stdout);
    expectSuccess(all);
    const uses = all.filter((e) => e.type === 'tool_use');
    expect(uses.map((e) => e.parameters)).toEqual([{ location: 'Paris' }]);
    expect(all.filter((e) => e.type === 'tool_result').map((e) => e.tool_id)).toEqual(uses.map((e) => e.tool_id));
    // The history the CLI sent back names the same call.
    expect(toolCallsInHistory(key.target, upstreamCalls(world, key.target).at(-1)?.body)).toEqual(uses.map((e) => e.tool_name));
    return { text: assistantText(all), toolCalls: uses.map((e) => e.tool_name) };
  },
}));
