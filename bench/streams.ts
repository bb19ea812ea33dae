/**
 * Many long streams at once (CONTRACT section 11): N concurrent slow streams, all opened
 * together, straight to the mock and through the gateway. A gateway that queues
 * requests (a fixed upstream pool) stretches the wall time past the mock's; memory is
 * the gateway's resident set sampled while the streams are open.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { chatBody, type Target } from './load';

export interface StreamsResult {
  target: string;
  streams: number;
  completed: number;
  failed: number;
  /** From opening the first to the end of the last stream. */
  wallSeconds: number;
  /** Of a single stream, open to end. */
  slowestSeconds: number;
  /** The gateway's RSS before the streams and at its peak while they were open (MiB); absent for the mock alone. */
  rssBeforeMiB?: number;
  rssPeakMiB?: number;
  /** (peak - before) / streams. */
  kibPerStream?: number;
  firstError?: string;
}

/** Resident set of a process in KiB (Linux /proc), 0 once it is gone. */
export function rssKiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * The resident set of a gateway: its process and, with WORKERS, its workers (the node
 * processes below it; the embedded PostgreSQL's processes are left out).
 */
export function gatewayRssKiB(pid: number): number {
  let total = rssKiB(pid);
  for (const child of childrenOf(pid)) {
    if (processName(child) === 'node') total += gatewayRssKiB(child);
  }
  return total;
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

function processName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Opens `streams` streaming requests at once and reads each to its end; `rssOf` (the gateway's pids) is sampled every 100 ms. */
export async function runStreams(target: Target, streams: number, model: string, rssOf?: () => number): Promise<StreamsResult> {
  // A pool of its own without a connection limit: the load generator must not be what queues.
  const dispatcher = new Agent({ connections: null, keepAliveTimeout: 1_000, connect: target.ca ? { ca: target.ca } : undefined });
  const body = chatBody(true, model);
  const rssBefore = rssOf?.() ?? 0;
  let rssPeak = rssBefore;
  const sampler = rssOf ? setInterval(() => (rssPeak = Math.max(rssPeak, rssOf())), 100) : undefined;
  let failed = 0;
  let firstError: string | undefined;
  let slowest = 0;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: streams }, async () => {
      const openedAt = performance.now();
      try {
        const response = await request(target.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...target.headers },
          body,
          dispatcher,
          headersTimeout: 300_000,
          bodyTimeout: 300_000,
        });
        const text = await response.body.text();
        if (response.statusCode !== 200 || !text.includes('data: [DONE]')) throw new Error(`${response.statusCode} ${text.slice(0, 200)}`);
      } catch (error) {
        failed++;
        firstError ??= (error as Error).message;
      }
      slowest = Math.max(slowest, performance.now() - openedAt);
    }),
  );
  const wallSeconds = (performance.now() - startedAt) / 1000;
  clearInterval(sampler);
  await dispatcher.close();
  const result: StreamsResult = { target: target.name, streams, completed: streams - failed, failed, wallSeconds, slowestSeconds: slowest / 1000, firstError };
  if (rssOf) {
    result.rssBeforeMiB = rssBefore / 1024;
    result.rssPeakMiB = rssPeak / 1024;
    result.kibPerStream = (rssPeak - rssBefore) / streams;
  }
  return result;
}

export function describeStreams(r: StreamsResult): string {
  const memory =
    r.rssPeakMiB === undefined
      ? ''
      : `  RSS ${r.rssBeforeMiB!.toFixed(0)} → ${r.rssPeakMiB.toFixed(0)} MiB (${r.kibPerStream!.toFixed(1)} KiB per open stream)`;
  const errors = r.failed ? `   !!! ${r.failed} failed (${r.firstError})` : '';
  return `  ${r.target.padEnd(7)} ${r.streams} streams: all done in ${r.wallSeconds.toFixed(1)} s (slowest ${r.slowestSeconds.toFixed(1)} s)${memory}${errors}`;
}
