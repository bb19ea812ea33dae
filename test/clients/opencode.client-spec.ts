/**
 * opencode (its native binary, pinned as OPENCODE_VERSION and installed on first use: see
 * opencodeBinary in client-harness.ts) headless: `opencode run`,
 * with a HOME of its own whose ~/.config/opencode/opencode.json names the gateway as a custom
 * provider of the OpenAI-compatible kind (`"npm": "@ai-sdk/openai-compatible"`, bundled in the
 * binary, nothing installed at run time; `options.baseURL` the gateway's `/v1`, `options.apiKey`
 * the gateway key, sent as `Authorization: Bearer gk-…`). It streams chat completions always;
 * the plain case reads its formatted output, the stream case its JSON events. For Claude models
 * it sends `cache_control` marks on chat messages, which reach an Anthropic target as cache
 * breakpoints.
 * Offline and quiet: OPENCODE_DISABLE_MODELS_FETCH (no models.dev), auto-update, share and LSP
 * downloads off, and a config dir that already lists `@opencode-ai/plugin` in a lock file next
 * to a `node_modules` (else opencode starts installing it from the npm registry in the
 * background on every start). `--title` names the session, so no title request is made: one
 * request an answer.
 *
 * The tool round trip: the mock calls the first tool opencode offers (`bash`) with
 * {"location":"Paris"}; opencode answers with a tool result (its parameter error, which is
 * fine: it is the client's real result) and sends the history back.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRun, GatewayKey, isolatedEnv, opencodeBinary, runProcess, TOOL_PROMPT, upstreamCalls } from './client-harness';
import { describeClient, toolCallsInHistory } from './client-matrix';

async function opencode(baseUrl: string, key: GatewayKey, prompt: string, extraArgs: string[]) {
  const home = mkdtempSync(join(tmpdir(), 'opencode-client-'));
  const configDir = join(home, '.config/opencode');
  mkdirSync(join(configDir, 'node_modules'), { recursive: true });
  writeFileSync(join(configDir, 'package-lock.json'), JSON.stringify({ packages: { '': { dependencies: { '@opencode-ai/plugin': '*' } } } }));
  writeFileSync(
    join(configDir, 'opencode.json'),
    JSON.stringify({
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      provider: {
        gateway: {
          npm: '@ai-sdk/openai-compatible',
          name: 'AI Gateway',
          options: { baseURL: `${baseUrl}/v1`, apiKey: key.key },
          models: { [key.target.model]: { name: key.target.model } },
        },
      },
    }),
  );
  const work = join(home, 'work');
  mkdirSync(work);
  const env = isolatedEnv(home, {
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  });
  const args = ['run', '-m', `gateway/${key.target.model}`, '--title', 'client suite', ...extraArgs, prompt];
  const run = await runProcess(await opencodeBinary(), args, { env, cwd: work, timeoutMs: 45_000 }).finally(() =>
    rmSync(home, { recursive: true, force: true }),
  );
  if (run.code !== 0) throw new Error(`opencode ${args.join(' ')}: ${describeRun(run)}`);
  return run;
}

/** The JSON lines `opencode run --format json` prints (step_start, text, tool_use, step_finish, error). */
const events = (stdout: string): any[] =>
  stdout
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line));
const assistantText = (all: any[]) =>
  all
    .filter((e) => e.type === 'text')
    .map((e) => e.part.text)
    .join('');
function expectNoError(all: any[]): void {
  expect(all.filter((e) => e.type === 'error')).toEqual([]);
}

describeClient('opencode (opencode run)', (world) => ({
  operation: 'chat.completions',
  expectedTool: 'bash',
  plain: async (key) => (await opencode(world.baseUrl, key, 'Say hello', [])).stdout,
  stream: async (key) => {
    const all = events((await opencode(world.baseUrl, key, 'Say hello', ['--format', 'json'])).stdout);
    expectNoError(all);
    // opencode streams every request (the plain case's too): the gateway streamed it on to the target.
    const calls = upstreamCalls(world, key.target);
    expect(calls.map((r) => r.body?.stream === true || r.path.endsWith(':streamGenerateContent'))).toEqual([true]);
    // For a Claude model opencode marks the system prompt and the last message with `cache_control`:
    // the gateway's chat-to-messages translation keeps them as Anthropic cache breakpoints.
    if (key.target.name === 'anthropic') expect(JSON.stringify(calls[0].body)).toContain('"cache_control":{"type":"ephemeral"}');
    // The tokens opencode counted from the stream's usage.
    const finish = all.filter((e) => e.type === 'step_finish').at(-1);
    expect(finish?.part.tokens.input).toBeGreaterThan(0);
    expect(finish?.part.tokens.output).toBeGreaterThan(0);
    return assistantText(all);
  },
  tool: async (key) => {
    const all = events((await opencode(world.baseUrl, key, TOOL_PROMPT, ['--format', 'json'])).stdout);
    expectNoError(all);
    const uses = all.filter((e) => e.type === 'tool_use');
    expect(uses.map((e) => e.part.state.input)).toEqual([{ location: 'Paris' }]);
    // The history opencode sent back names the same call.
    expect(toolCallsInHistory(key.target, upstreamCalls(world, key.target).at(-1)?.body)).toEqual(uses.map((e) => e.part.tool));
    return { text: assistantText(all), toolCalls: uses.map((e) => e.part.tool) };
  },
}));
