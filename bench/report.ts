/** The printed summary of a benchmark run and the goals it is judged against. */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { problemsOf, type LoadResult, type TtftResult } from './load';
import type { Child } from './processes';

const log = (message: string) => process.stdout.write(`${message}\n`);

export interface Scenario {
  name: string;
  stream: boolean;
  connections: number;
  /** Latency the mock adds to each answer; absent: none. */
  providerLatencyMs?: number;
  direct: LoadResult;
  gateway: LoadResult;
  /** CPU seconds spent during the gateway run: the gateway's node process, its PostgreSQL. */
  gatewayCpu: { gateway: number; postgres: number };
}

export interface Comparison {
  scenario: string;
  addedP50Ms: number;
  addedP99Ms: number;
  /** gateway rps / direct rps, in %. */
  throughputPct: number;
  /** CPU ms per gateway request: the node process, and its PostgreSQL (logging). */
  gatewayCpuMsPerRequest: number;
  postgresCpuMsPerRequest: number;
  /** Cores the gateway process kept busy. */
  gatewayCores: number;
}

export interface Goal {
  goal: string;
  measured: string;
  met: boolean;
}

export const GOALS = {
  addedP50AtOneConnectionMs: 0.5,
  throughputPctAt32: 20,
  addedTtftMs: 0.5,
  /** Gateway-process CPU per request at 32 connections, logging on (issue 22). */
  cpuUsPerRequest: { json: 200, stream: 250 },
  /** With a provider that takes 50 ms, the gateway keeps this share of its rate. */
  throughputPctWithProviderLatency: 97,
};

export function compare(s: Scenario): Comparison {
  return {
    scenario: s.name,
    addedP50Ms: s.gateway.latency.p50 - s.direct.latency.p50,
    addedP99Ms: s.gateway.latency.p99 - s.direct.latency.p99,
    throughputPct: (s.gateway.rps / s.direct.rps) * 100,
    gatewayCpuMsPerRequest: (s.gatewayCpu.gateway * 1000) / Math.max(1, s.gateway.ok),
    postgresCpuMsPerRequest: (s.gatewayCpu.postgres * 1000) / Math.max(1, s.gateway.ok),
    gatewayCores: s.gatewayCpu.gateway / s.gateway.seconds,
  };
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : 'n/a');
const signed = (v: number) => (Number.isFinite(v) ? (v >= 0 ? '+' : '') + v.toFixed(3) : 'n/a');
const int = (v: number) => (Number.isFinite(v) ? Math.round(v).toString() : 'n/a');

/** Columns aligned: the first to the left, the others to the right. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function evaluateGoals(scenarios: Scenario[], ttft: TtftResult[]): Goal[] {
  const goals: Goal[] = [];
  const find = (stream: boolean, c: number) => scenarios.find((s) => s.stream === stream && s.connections === c && !s.providerLatencyMs);
  const oneConnection = find(false, 1);
  if (oneConnection) {
    const added = compare(oneConnection).addedP50Ms;
    goals.push({
      goal: `p50 added at 1 connection (non-streaming) < ${GOALS.addedP50AtOneConnectionMs} ms`,
      measured: `${signed(added)} ms`,
      met: added < GOALS.addedP50AtOneConnectionMs,
    });
  }
  for (const stream of [false, true]) {
    const s = find(stream, 32);
    if (!s) continue;
    const pct = compare(s).throughputPct;
    goals.push({
      goal: `gateway rate >= ${GOALS.throughputPctAt32}% of the bare mock at 32 connections (${stream ? 'streaming' : 'non-streaming'})`,
      measured: `${pct.toFixed(1)}%`,
      met: pct >= GOALS.throughputPctAt32,
    });
    const cpuUs = compare(s).gatewayCpuMsPerRequest * 1000;
    const limit = stream ? GOALS.cpuUsPerRequest.stream : GOALS.cpuUsPerRequest.json;
    goals.push({
      goal: `gateway CPU per request at 32 connections (${stream ? 'streaming' : 'non-streaming'}) <= ${limit} µs`,
      measured: `${int(cpuUs)} µs`,
      met: cpuUs <= limit,
    });
  }
  const slowProvider = scenarios.find((s) => s.providerLatencyMs);
  if (slowProvider) {
    const pct = compare(slowProvider).throughputPct;
    goals.push({
      goal: `gateway rate >= ${GOALS.throughputPctWithProviderLatency}% of the provider's with ${slowProvider.providerLatencyMs} ms provider latency (c=${slowProvider.connections})`,
      measured: `${pct.toFixed(1)}%`,
      met: pct >= GOALS.throughputPctWithProviderLatency,
    });
  }
  const direct = ttft.find((t) => t.target === 'direct');
  const gateway = ttft.find((t) => t.target === 'gateway');
  if (direct && gateway) {
    const added = gateway.ttft.p50 - direct.ttft.p50;
    goals.push({ goal: `time to first token added (p50) < ${GOALS.addedTtftMs} ms`, measured: `${signed(added)} ms`, met: added < GOALS.addedTtftMs });
  }
  return goals;
}

export function formatReport(scenarios: Scenario[], ttft: TtftResult[], goals: Goal[]): string {
  const out: string[] = [];
  out.push(
    table(
      ['scenario', 'direct rps', 'gw rps', 'gw/direct', 'direct p50', 'gw p50', 'added p50', 'direct p99', 'gw p99', 'added p99'],
      scenarios.map((s) => {
        const c = compare(s);
        return [
          s.name,
          int(s.direct.rps),
          int(s.gateway.rps),
          `${c.throughputPct.toFixed(1)}%`,
          ms(s.direct.latency.p50),
          ms(s.gateway.latency.p50),
          signed(c.addedP50Ms),
          ms(s.direct.latency.p99),
          ms(s.gateway.latency.p99),
          signed(c.addedP99Ms),
        ];
      }),
    ),
  );
  out.push('(latencies in ms, full response; streaming = until the last byte of the stream)');
  out.push('');
  out.push(
    table(
      ['gateway cost', 'requests', 'gw CPU ms/req', 'pg CPU ms/req', 'gw cores busy'],
      scenarios.map((s) => {
        const c = compare(s);
        return [s.name, String(s.gateway.ok), ms(c.gatewayCpuMsPerRequest), ms(c.postgresCpuMsPerRequest), c.gatewayCores.toFixed(2)];
      }),
    ),
  );
  if (ttft.length) {
    out.push('');
    const direct = ttft.find((t) => t.target === 'direct');
    out.push(
      table(
        ['time to first token', 'requests', 'p50', 'p99', 'added p50', 'added p99', 'full p50', 'full p99'],
        ttft.map((t) => [
          t.target,
          String(t.ttft.count),
          ms(t.ttft.p50),
          ms(t.ttft.p99),
          t === direct || !direct ? '' : signed(t.ttft.p50 - direct.ttft.p50),
          t === direct || !direct ? '' : signed(t.ttft.p99 - direct.ttft.p99),
          ms(t.total.p50),
          ms(t.total.p99),
        ]),
      ),
    );
    out.push('(sequential streaming requests; first token = first body chunk with non-empty "content")');
  }
  out.push('');
  out.push('Goals');
  for (const g of goals) out.push(`  [${g.met ? 'MET' : 'MISSED'}] ${g.goal}: ${g.measured}`);
  return out.join('\n');
}

/** Prints the summary, flags failed requests loudly, saves the JSON; true when a run had failures. */
export function finishReport(run: {
  file: string;
  args: object;
  pinned: boolean;
  startedAt: Date;
  scenarios: Scenario[];
  ttft: TtftResult[];
  gateway: Child;
}): boolean {
  const { file, args, pinned, startedAt, scenarios, ttft, gateway } = run;
  const goals = evaluateGoals(scenarios, ttft);
  log('\n' + formatReport(scenarios, ttft, goals));

  const problems: string[] = [];
  for (const s of scenarios) {
    for (const r of [s.direct, s.gateway]) {
      const p = problemsOf(r);
      if (p.length) problems.push(`${s.name} ${r.target}: ${p.join(', ')}`);
    }
  }
  for (const t of ttft) if (t.failed) problems.push(`time to first token ${t.target}: ${t.failed} failed (${t.failures.join(' | ')})`);
  if (gateway.linesSinceReady > 0) {
    log(`\nthe gateway wrote ${gateway.linesSinceReady} log line(s) at warn or above during the run; the last ones:`);
    for (const line of gateway.tail.slice(-10)) log(`  ${line}`);
  }
  if (problems.length) {
    process.stderr.write(`\n!!! NOT EVERY REQUEST SUCCEEDED:\n${problems.map((p) => `!!!   ${p}`).join('\n')}\n`);
  } else {
    log('\nall requests answered 200 with a complete body (non2xx = errors = timeouts = mismatches = 0)');
  }

  writeFileSync(
    file,
    JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        node: process.version,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        args,
        pinned,
        goals: { targets: GOALS, results: goals },
        comparisons: scenarios.map(compare),
        scenarios,
        ttft,
        problems,
        gatewayLogLines: gateway.linesSinceReady,
      },
      null,
      2,
    ),
  );
  log(`results written to ${file}`);
  return problems.length > 0;
}
