/**
 * The Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`, pinned in package.json) `query()`, set
 * up as claude-code.client-spec.ts sets up Claude Code: ANTHROPIC_BASE_URL and
 * ANTHROPIC_API_KEY (sent as `x-api-key`), a temporary HOME and config dir, telemetry, error
 * reports and the auto-updater off, no traffic but the model's. The SDK drives its own Claude
 * Code binary (0.3.332 bundles 2.1.332, from its optional platform package
 * `@anthropic-ai/claude-agent-sdk-<platform>-<arch>`), not the `@anthropic-ai/claude-code`
 * devDependency. The SDK is ESM only, so each query runs in a Node process of its own
 * (claude-agent-sdk/query.mjs), which prints the SDK's messages as JSON lines; no settings
 * files, no session persisted.
 *
 * The tool round trip: a custom tool (`get_weather`, made with the SDK's `tool()`) served by its
 * in-process MCP server (`createSdkMcpServer`), the only tool offered (built-in tools off): the
 * mock calls it with {"location":"Paris"}, the SDK runs it in the Node process and sends the
 * tool_result back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRun, GatewayKey, isolatedEnv, ROOT, runProcess, TOOL_PROMPT } from './client-harness';
import { describeClient } from './client-matrix';

const SCRIPT = join(ROOT, 'test/clients/claude-agent-sdk/query.mjs');
/** The name Claude Code gives a tool of an MCP server: mcp__<server>__<tool>. */
const WEATHER_TOOL = 'mcp__weather__get_weather';

/** The SDK's messages of one query(). */
async function query(baseUrl: string, key: GatewayKey, mode: 'plain' | 'stream' | 'tool', prompt: string): Promise<any[]> {
  const home = mkdtempSync(join(tmpdir(), 'claude-agent-sdk-client-'));
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
  const args = [SCRIPT, mode, key.target.model, prompt];
  const run = await runProcess(process.execPath, args, { env, cwd: home, timeoutMs: 45_000 }).finally(() => rmSync(home, { recursive: true, force: true }));
  if (run.code !== 0) throw new Error(`node ${args.join(' ')}: ${describeRun(run)}`);
  const messages = run.stdout
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line));
  const result = messages.find((m) => m.type === 'result');
  if (!result || result.subtype !== 'success' || result.is_error) throw new Error(`query() did not succeed: ${describeRun(run)}`);
  return messages;
}

const resultText = (messages: any[]): string => messages.find((m) => m.type === 'result').result;

describeClient('Claude Agent SDK (query())', (world) => ({
  operation: 'messages',
  expectedTool: WEATHER_TOOL,
  plain: async (key) => resultText(await query(world.baseUrl, key, 'plain', 'Say hello')),
  stream: async (key) => {
    const messages = await query(world.baseUrl, key, 'stream', 'Say hello');
    // includePartialMessages: the raw stream events, one text delta a word of the mock's answer.
    const deltas = messages.filter((m) => m.type === 'stream_event' && m.event?.delta?.type === 'text_delta').map((m) => m.event.delta.text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(resultText(messages));
    return deltas.join('');
  },
  tool: async (key) => {
    const messages = await query(world.baseUrl, key, 'tool', TOOL_PROMPT);
    const uses = messages
      .filter((m) => m.type === 'assistant')
      .flatMap((m) => m.message.content)
      .filter((block: any) => block.type === 'tool_use');
    const results = messages
      .filter((m) => m.type === 'user')
      .flatMap((m) => m.message.content)
      .filter((block: any) => block.type === 'tool_result');
    expect(uses.map((u: any) => u.input)).toEqual([{ location: 'Paris' }]);
    // The tool ran in the SDK's process: its answer is the tool_result sent back.
    expect(results.map((r: any) => ({ id: r.tool_use_id, error: r.is_error ?? false }))).toEqual(uses.map((u: any) => ({ id: u.id, error: false })));
    expect(JSON.stringify(results)).toContain('temperature_c');
    return { text: resultText(messages), toolCalls: uses.map((u: any) => u.name) };
  },
}));
