/**
 * Claude Code (`@anthropic-ai/claude-code`, pinned in package.json) headless: `claude -p`, set up
 * as its docs say for a gateway: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY (sent as `x-api-key`),
 * nothing else. Its requests are what test/fixtures/clients/claude-code-*.json show: streamed
 * always, a mid-conversation `system` message, thinking, context_management, cache_control and
 * the anthropic-beta header. A temporary HOME and config dir per run; telemetry, error reports
 * and the auto-updater off, and no traffic but the model's.
 *
 * The tool round trip: the mock calls the first tool Claude Code offers (`Agent`) with
 * {"location":"Paris"}; Claude Code answers with a tool_result (an input validation error,
 * which is fine: it is the client's real result) and sends the history back.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRun, GatewayKey, isolatedEnv, ROOT, runProcess, TOOL_PROMPT } from './client-harness';
import { describeClient } from './client-matrix';

// The native binary of the platform package; `.bin/claude` is that binary only once the
// wrapper's postinstall has copied it (allowScripts), a stub before.
const PLATFORM_BINARY = join(ROOT, `node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`);
const CLAUDE = existsSync(PLATFORM_BINARY) ? PLATFORM_BINARY : join(ROOT, 'node_modules/.bin/claude');

async function claude(baseUrl: string, key: GatewayKey, prompt: string, extraArgs: string[]) {
  const home = mkdtempSync(join(tmpdir(), 'claude-client-'));
  const env = isolatedEnv(home, {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: key.key,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    // One try: a refusal shows at once instead of after Claude Code's retries with backoff.
    CLAUDE_CODE_MAX_RETRIES: '0',
  });
  const args = ['-p', prompt, '--model', key.target.model, '--no-session-persistence', ...extraArgs];
  const run = await runProcess(CLAUDE, args, { env, cwd: home, timeoutMs: 45_000 }).finally(() => rmSync(home, { recursive: true, force: true }));
  if (run.code !== 0) throw new Error(`claude ${args.join(' ')}: ${describeRun(run)}`);
  return run;
}

/** The stream-json lines Claude Code prints with --output-format stream-json --verbose. */
const events = (stdout: string): any[] =>
  stdout
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line));

describeClient('Claude Code (claude -p)', (world) => ({
  operation: 'messages',
  expectedTool: 'Agent',
  plain: async (key) => (await claude(world.baseUrl, key, 'Say hello', ['--output-format', 'text'])).stdout,
  stream: async (key) => {
    const run = await claude(world.baseUrl, key, 'Say hello', ['--output-format', 'stream-json', '--verbose', '--include-partial-messages']);
    const deltas = events(run.stdout).filter((e) => e.type === 'stream_event' && e.event?.delta?.type === 'text_delta');
    expect(deltas.length).toBeGreaterThan(0);
    return deltas.map((e) => e.event.delta.text).join('');
  },
  tool: async (key) => {
    const run = await claude(world.baseUrl, key, TOOL_PROMPT, ['--output-format', 'stream-json', '--verbose']);
    const all = events(run.stdout);
    const toolUses = all
      .filter((e) => e.type === 'assistant')
      .flatMap((e) => e.message.content)
      .filter((block: any) => block.type === 'tool_use');
    const results = all
      .filter((e) => e.type === 'user')
      .flatMap((e) => e.message.content)
      .filter((block: any) => block.type === 'tool_result');
    expect(results.map((r: any) => r.tool_use_id)).toEqual(toolUses.map((u: any) => u.id));
    const final = all.find((e) => e.type === 'result');
    expect(final).toMatchObject({ subtype: 'success', is_error: false });
    return { text: final.result, toolCalls: toolUses.map((u: any) => u.name) };
  },
}));
