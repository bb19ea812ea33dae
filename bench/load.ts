/**
 * Load generation: autocannon runs (with exact sub-millisecond latencies collected
 * from its `response` events; its own histogram rounds to whole milliseconds) and
 * a sequential time-to-first-token loop on plain node:http.
 */
import autocannon from 'autocannon';
import * as http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface Target {
  name: 'direct' | 'gateway';
  /** Full URL of the chat completions endpoint. */
  url: string;
  headers: Record<string, string>;
  /** The authority to trust for an https URL (the mock's test certificate, see --tls). */
  ca?: string;
}

export interface Percentiles {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface LoadResult {
  target: Target['name'];
  stream: boolean;
  connections: number;
  seconds: number;
  /** 2xx responses per second. */
  rps: number;
  /** Latency of 2xx responses, ms (full response, last byte). */
  latency: Percentiles;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  resets: number;
  mismatches: number;
  statusCodes: Record<string, number>;
}

export function chatBody(stream: boolean, model = 'gpt-4o-mini'): string {
  return JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Say hello' }],
    ...(stream ? { stream: true } : {}),
  });
}

export function percentiles(values: ArrayLike<number>): Percentiles {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  const at = (p: number) => (n ? sorted[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))] : NaN);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  return { count: n, mean: n ? sum / n : NaN, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: n ? sorted[n - 1] : NaN };
}

let current: autocannon.Instance | undefined;

/** Stops the autocannon run in progress, if any (Ctrl-C). */
export function stopLoad(): void {
  current?.stop();
}

/** `model`: the mock's `mock-slow-<ms>` adds provider latency. */
export function runLoad(target: Target, stream: boolean, connections: number, seconds: number, model?: string): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const samples: number[] = [];
    const started = performance.now();
    const instance = autocannon(
      {
        url: target.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...target.headers },
        body: chatBody(stream, model),
        connections,
        duration: seconds,
        timeout: 10,
        // A 200 is not enough: the body must be a whole completion / a stream up to [DONE].
        verifyBody: stream ? (body) => body.includes('data: [DONE]') : (body) => body.includes('"choices"'),
      },
      (error, result) => {
        current = undefined;
        if (error) return reject(error);
        const elapsed = (performance.now() - started) / 1000;
        const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
        resolve({
          target: target.name,
          stream,
          connections,
          seconds: elapsed,
          rps: samples.length / elapsed,
          latency: percentiles(samples),
          ok: samples.length,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          resets: result.resets,
          mismatches: result.mismatches,
          statusCodes,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) samples.push(responseTime);
    });
    current = instance;
  });
}

export function problemsOf(result: LoadResult): string[] {
  const problems: string[] = [];
  for (const key of ['non2xx', 'errors', 'timeouts', 'resets', 'mismatches'] as const) {
    if (result[key] > 0) problems.push(`${key}=${result[key]}`);
  }
  if (result.ok === 0) problems.push('no successful response');
  if (problems.length && result.non2xx > 0) problems.push(`status codes ${JSON.stringify(result.statusCodes)}`);
  return problems;
}

export interface TtftResult {
  target: Target['name'];
  /** Request start to the first body chunk carrying non-empty `content`, ms. */
  ttft: Percentiles;
  /** Request start to the end of the stream, ms. */
  total: Percentiles;
  failed: number;
  /** The first few failure messages. */
  failures: string[];
}

const CONTENT = /"content":\s*"[^"]/;

function oneStream(target: Target, agent: http.Agent, body: string): Promise<{ ttft: number; total: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL(target.url);
    const started = performance.now();
    let ttft = NaN;
    let text = '';
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...target.headers },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (Number.isNaN(ttft)) {
            text += chunk;
            if (CONTENT.test(text)) ttft = performance.now() - started;
          } else if (text.length < 1_000_000) text += chunk;
        });
        res.on('end', () => {
          const total = performance.now() - started;
          if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
          if (Number.isNaN(ttft)) return reject(new Error(`no content chunk in: ${text.slice(0, 300)}`));
          if (!text.includes('data: [DONE]')) return reject(new Error('stream ended without data: [DONE]'));
          resolve({ ttft, total });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sequential streaming requests, alternating targets (and which goes first) on every round. */
export async function measureTtft(targets: Target[], rounds: number, warmup = 20): Promise<TtftResult[]> {
  const body = chatBody(true);
  const state = targets.map((target) => ({
    target,
    agent: new http.Agent({ keepAlive: true, maxSockets: 1 }),
    ttft: [] as number[],
    total: [] as number[],
    failed: 0,
    failures: [] as string[],
  }));
  for (let round = 0; round < warmup + rounds; round++) {
    const order = round % 2 === 0 ? state : [...state].reverse();
    for (const s of order) {
      try {
        const { ttft, total } = await oneStream(s.target, s.agent, body);
        if (round >= warmup) {
          s.ttft.push(ttft);
          s.total.push(total);
        }
      } catch (error) {
        s.failed++;
        if (s.failures.length < 5) s.failures.push((error as Error).message);
      }
    }
  }
  for (const s of state) s.agent.destroy();
  return state.map((s) => ({ target: s.target.name, ttft: percentiles(s.ttft), total: percentiles(s.total), failed: s.failed, failures: s.failures }));
}
