/**
 * Batches (--batch [N]): a gateway-run batch of N chat lines (default 2000) to a provider
 * without batches (groq, the mock behind it), measured twice: alone (lines per second, the
 * gateway's CPU per line, its PostgreSQL's too), then beside interactive traffic (8
 * connections to a provider answering in 50 ms), whose latency is compared with the same
 * traffic with no batch running: what a batch costs the users who are waiting.
 */
import { Agent, request } from 'undici';
import { runLoad, type LoadResult, type Target } from './load';
import { cpuSeconds, createVirtualKey, waitForLogsWritten, type Child } from './processes';

const log = (message: string) => process.stdout.write(`${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface BatchScenario {
  lines: number;
  duration: number;
  gateway: Target;
  gatewayChild: Child;
  gatewayUrl: string;
  adminKey: string;
  mockUrl: string;
}

/** The model of the batch's lines: `mock-slow-<ms>` for a provider that takes its time, else answered at once (the worst case for the gateway). */
export async function batchScenario(s: BatchScenario): Promise<void> {
  for (const model of ['llama-3.1-8b-instant', 'mock-slow-1000']) await batchRun(s, model);
}

async function batchRun(s: BatchScenario, model: string): Promise<void> {
  const lines = model === 'llama-3.1-8b-instant' ? s.lines : Math.min(s.lines, 100);
  if (model === 'llama-3.1-8b-instant') await createVirtualKey(s.gatewayUrl, s.adminKey, s.mockUrl, 'groq', 'bench-groq');
  const agent = new Agent();
  const call = async (method: 'GET' | 'POST', path: string, body?: Buffer | string, contentType = 'application/json') => {
    const answer = await request(`${s.gatewayUrl}${path}`, {
      method,
      headers: { 'x-gateway-api-key': s.adminKey, 'x-gateway-virtual-key': 'bench-groq', ...(body ? { 'content-type': contentType } : {}) },
      body,
      dispatcher: agent,
    });
    const text = await answer.body.text();
    if (answer.statusCode >= 300) throw new Error(`${method} ${path}: ${answer.statusCode} ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, any>;
  };
  const submit = async () => {
    const jsonl = Array.from({ length: lines }, (_, i) =>
      JSON.stringify({
        custom_id: `line-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model, messages: [{ role: 'user', content: `Classify item ${i}: is it a fruit?` }] },
      }),
    ).join('\n');
    const boundary = 'benchbatchboundary';
    const form = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.jsonl"\r\n\r\n${jsonl}\r\n--${boundary}--\r\n`,
    );
    const file = await call('POST', '/v1/files', form, `multipart/form-data; boundary=${boundary}`);
    return call('POST', '/v1/batches', JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }));
  };
  const finished = async (id: string) => {
    for (;;) {
      const batch = await call('GET', `/v1/batches/${id}`);
      if (batch.status === 'completed') return batch;
      await sleep(100);
    }
  };
  const interactive = () => runLoad(s.gateway, false, 8, s.duration, 'mock-slow-50');
  const describe = (r: LoadResult) => `${Math.round(r.rps)} req/s, p50 ${r.latency.p50.toFixed(1)} ms, p99 ${r.latency.p99.toFixed(1)} ms`;

  log(`batches: ${lines} lines of ${model} run by the gateway (groq, no native batches), BATCH_CONCURRENCY default`);
  const pid = s.gatewayChild.proc.pid!;
  await waitForLogsWritten(s.gatewayUrl);
  const before = cpuSeconds(pid);
  const started = performance.now();
  const alone = await finished((await submit()).id);
  const seconds = (performance.now() - started) / 1000;
  await waitForLogsWritten(s.gatewayUrl);
  const after = cpuSeconds(pid);
  log(`  batch alone: ${(lines / seconds).toFixed(0)} lines/s (${seconds.toFixed(1)} s; ${alone.request_counts.completed} completed)`);
  log(
    `  per line: gateway CPU ${(((after.self - before.self) / lines) * 1000).toFixed(2)} ms, PostgreSQL CPU ${(((after.descendants - before.descendants) / lines) * 1000).toFixed(2)} ms`,
  );

  await waitForLogsWritten(s.gatewayUrl);
  const quiet = await interactive();
  log(`  interactive, no batch:   ${describe(quiet)}`);
  const running = await submit();
  const busy = await interactive();
  const state = await call('GET', `/v1/batches/${running.id}`);
  log(`  interactive, with batch: ${describe(busy)} (batch lines done meanwhile: ${state.request_counts.completed} of ${lines})`);
  log(`  added latency: p50 ${(busy.latency.p50 - quiet.latency.p50).toFixed(1)} ms, p99 ${(busy.latency.p99 - quiet.latency.p99).toFixed(1)} ms`);
  await finished(running.id);
  await agent.close();
}
