#!/usr/bin/env node
/**
 * Records what the real Claude Code and Codex CLIs send, as fixtures for the gateway's tests
 * (test/fixtures/clients/). Run: `node test/clients/record-fixtures.mjs` (no network needed).
 *
 * A capture server on 127.0.0.1 answers like Anthropic's Messages API (POST /v1/messages,
 * streamed events or JSON) and OpenAI's Responses API (POST /v1/responses, streamed typed
 * events), and writes each request's headers (secrets masked) and body to a fixture file.
 * The model is made to call the client's shell tool once (when the prompt asks for it), so the
 * second request carries the whole tool round trip as the client sends it.
 *
 * Each client runs with a temporary HOME / CODEX_HOME so nothing of this machine leaks into the
 * fixtures, and with its telemetry and update checks off.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixtureDir = path.join(root, 'test/fixtures/clients');
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'api-key', 'x-gateway-api-key', 'cookie']);
const TOOL_MARKER = 'Run the shell command';

const captured = [];

function maskedHeaders(headers) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = SECRET_HEADERS.has(name) ? '<redacted>' : value;
  }
  return out;
}

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

/**
 * Whether the model should call the Bash tool now. Claude Code appends a mid-conversation
 * `system` message after the user's, so the whole history is looked at, not the last message.
 */
function anthropicTurn(body) {
  const blocks = (body.messages ?? [])
    .filter((m) => m.role === 'user')
    .flatMap((m) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? [])));
  const hasToolResult = blocks.some((b) => b.type === 'tool_result');
  const text = blocks.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
  const wantsTool = !hasToolResult && text.includes(TOOL_MARKER) && (body.tools ?? []).some((t) => t.name === 'Bash');
  return { wantsTool, hasToolResult };
}

function answerAnthropic(body, res) {
  const { wantsTool, hasToolResult } = anthropicTurn(body);
  const id = `msg_capture_${captured.length}`;
  const usage = { input_tokens: 42, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const text = hasToolResult ? 'The command printed fixture-ok.' : 'Hello from the capture server.';
  const toolInput = { command: 'echo fixture-ok', description: 'Print a marker' };
  const content = wantsTool
    ? [{ type: 'tool_use', id: 'toolu_capture_1', name: 'Bash', input: toolInput }]
    : [{ type: 'text', text }];
  const stopReason = wantsTool ? 'tool_use' : 'end_turn';
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stopReason, stop_sequence: null, usage }));
    return;
  }
  const events = [
    ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }],
  ];
  if (wantsTool) {
    events.push(
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_capture_1', name: 'Bash', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(toolInput) } }],
    );
  } else {
    events.push(
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }],
    );
  }
  events.push(
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 7 } }],
    ['message_stop', { type: 'message_stop' }],
  );
  sse(res, events);
}

function codexShellTool(body) {
  const names = (body.tools ?? []).map((t) => t.name ?? t.type);
  for (const name of ['exec_command', 'shell_command', 'shell', 'local_shell']) if (names.includes(name)) return name;
  return undefined;
}

function answerResponses(body, res) {
  const input = Array.isArray(body.input) ? body.input : [{ type: 'message', role: 'user', content: body.input }];
  const last = input[input.length - 1];
  const afterToolResult = last?.type === 'function_call_output' || last?.type === 'custom_tool_call_output';
  const userTexts = input
    .filter((i) => i.role === 'user')
    .flatMap((i) => (typeof i.content === 'string' ? [i.content] : (i.content ?? []).map((c) => c.text ?? '')));
  const tool = codexShellTool(body);
  const wantsTool = !afterToolResult && tool && userTexts.some((t) => t.includes(TOOL_MARKER));
  const id = `resp_capture_${captured.length}`;
  const usage = { input_tokens: 42, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 49 };
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model: body.model, error: null, incomplete_details: null };
  let item;
  const events = [];
  let seq = 0;
  const push = (type, data) => events.push([type, { type, sequence_number: seq++, ...data }]);
  push('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  push('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } });
  const output = [];
  if (wantsTool) {
    // A reasoning item first, as OpenAI's reasoning models send it: Codex sends it back in the next input.
    const reasoning = { id: 'rs_capture_1', type: 'reasoning', summary: [], encrypted_content: 'capture-encrypted-reasoning' };
    push('response.output_item.added', { output_index: 0, item: reasoning });
    push('response.output_item.done', { output_index: 0, item: reasoning });
    output.push(reasoning);
    const args = tool === 'exec_command' ? { cmd: 'echo fixture-ok' } : tool === 'shell_command' ? { command: 'echo fixture-ok' } : { command: ['bash', '-lc', 'echo fixture-ok'] };
    const argText = JSON.stringify(args);
    item = { id: 'fc_capture_1', type: 'function_call', status: 'completed', call_id: 'call_capture_1', name: tool, arguments: argText };
    push('response.output_item.added', { output_index: 1, item: { ...item, status: 'in_progress', arguments: '' } });
    push('response.function_call_arguments.delta', { item_id: item.id, output_index: 1, delta: argText });
    push('response.function_call_arguments.done', { item_id: item.id, output_index: 1, arguments: argText });
  } else {
    const text = afterToolResult ? 'The command printed fixture-ok.' : 'Hello from the capture server.';
    item = { id: 'msg_capture_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
    push('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    push('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    push('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text });
    push('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text });
    push('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: item.content[0] });
  }
  output.push(item);
  push('response.output_item.done', { output_index: output.length - 1, item });
  push('response.completed', { response: { ...base, status: 'completed', output, usage } });
  sse(res, events);
}

function startServer() {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = raw;
      }
      const url = req.url ?? '';
      captured.push({ method: req.method, path: url, headers: maskedHeaders(req.headers), body });
      if (req.method === 'POST' && url.startsWith('/v1/messages/count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: 42 }));
      } else if (req.method === 'POST' && url.startsWith('/v1/messages')) {
        answerAnthropic(body, res);
      } else if (req.method === 'POST' && url.startsWith('/v1/responses')) {
        answerResponses(body, res);
      } else if (req.method === 'GET' && url.startsWith('/v1/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `capture server: no route ${req.method} ${url}` } }));
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function run(command, args, env, cwd) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** The machine's environment less anything that could reach a real vendor or leak a key. */
function isolatedEnv(home, extra) {
  return {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_PROXY: '127.0.0.1,localhost',
    ...extra,
  };
}

function save(name, client, command, requests) {
  const file = path.join(fixtureDir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ client, command, requests }, null, 2) + '\n');
  console.log(`wrote ${path.relative(root, file)} (${requests.length} requests)`);
}

async function recordClaude(base, version) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-capture-'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-work-'));
  const env = isolatedEnv(home, {
    ANTHROPIC_BASE_URL: base,
    ANTHROPIC_API_KEY: 'gk-capture-not-a-real-key',
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  });
  const claude = path.join(root, 'node_modules/.bin/claude');
  const runs = [
    ['claude-code-plain', ['-p', 'Say hello.']],
    ['claude-code-tool', ['-p', `${TOOL_MARKER} \`echo fixture-ok\` and tell me what it printed.`, '--allowedTools', 'Bash']],
  ];
  for (const [name, args] of runs) {
    captured.length = 0;
    const result = await run(claude, args, env, work);
    console.log(`${name}: exit ${result.code} out=${JSON.stringify(result.out.slice(0, 200))} err=${JSON.stringify(result.err.slice(0, 400))}`);
    save(name, `@anthropic-ai/claude-code ${version}`, `claude ${args.map((a) => JSON.stringify(a)).join(' ')}`, [...captured]);
  }
  for (const dir of [home, work]) fs.rmSync(dir, { recursive: true, force: true });
}

async function recordCodex(base, version, model, prefix, withPlain) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-capture-'));
  const codexHome = path.join(home, '.codex');
  fs.mkdirSync(codexHome);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-work-'));
  fs.writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "gateway"',
      'check_for_update_on_startup = false',
      '[analytics]',
      'enabled = false',
      '[otel]',
      'exporter = "none"',
      '[model_providers.gateway]',
      'name = "Gateway"',
      `base_url = "${base}/v1"`,
      'env_key = "GATEWAY_API_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  const env = isolatedEnv(home, { CODEX_HOME: codexHome, GATEWAY_API_KEY: 'gk-capture-not-a-real-key' });
  const codex = path.join(root, 'node_modules/.bin/codex');
  const common = ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '--color', 'never'];
  const runs = [
    ...(withPlain ? [[`${prefix}-plain`, [...common, 'Say hello.']]] : []),
    [`${prefix}-tool`, [...common, `${TOOL_MARKER} \`echo fixture-ok\` and tell me what it printed.`]],
  ];
  for (const [name, args] of runs) {
    captured.length = 0;
    const result = await run(codex, args, env, work);
    console.log(`${name}: exit ${result.code} out=${JSON.stringify(result.out.slice(0, 200))} err=${JSON.stringify(result.err.slice(-600))}`);
    save(name, `@openai/codex ${version}`, `codex (model ${model}) ${args.map((a) => JSON.stringify(a)).join(' ')}`, [...captured]);
  }
  for (const dir of [home, work]) fs.rmSync(dir, { recursive: true, force: true });
}

const pkgVersion = (name) => JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;

const server = await startServer();
const base = `http://127.0.0.1:${server.address().port}`;
fs.mkdirSync(fixtureDir, { recursive: true });
const only = process.argv[2];
if (!only || only === 'claude') await recordClaude(base, pkgVersion('@anthropic-ai/claude-code'));
if (!only || only === 'codex') {
  // A model Codex knows (its own metadata: reasoning effort, verbosity, custom tools) ...
  await recordCodex(base, pkgVersion('@openai/codex'), 'gpt-5.5', 'codex', true);
  // ... and one it does not, as when Codex is pointed at Claude through the gateway (fallback metadata).
  await recordCodex(base, pkgVersion('@openai/codex'), 'claude-sonnet-4-5', 'codex-claude-model', false);
}
server.close();
