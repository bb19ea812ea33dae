/**
 * Self-time summary of a V8 .cpuprofile (as written by `node --cpu-prof`), optionally
 * restricted to a time window (µs on the monotonic clock, i.e. process.hrtime / 1000).
 *
 *   node dist/bench/profile.js bench/results/<file>.cpuprofile [top]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  selfMs: number;
  /** % of the busy (non-idle) time in the window. */
  pct: number;
}

export interface ProfileSummary {
  file: string;
  windowMs: number;
  busyMs: number;
  idleMs: number;
  /** True when the requested window did not overlap the profile and all samples were used. */
  wholeProfile: boolean;
  functions: ProfileEntry[];
  modules: ProfileEntry[];
}

function shortUrl(url: string): string {
  if (!url) return '';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm !== -1) return url.slice(nm + 14);
  const dist = url.indexOf('/dist/');
  if (dist !== -1) return url.slice(dist + 6);
  return url.replace(/^file:\/\//, '');
}

/** Where a function lives: an npm package, a gateway file, node's internals, or a V8 pseudo-frame. */
function moduleOf(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native / builtin)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const parts = url.slice(nm + 14).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) {
    const path = url.slice(5).split('/');
    return `node:${path[0] === 'internal' ? path.slice(0, 2).join('/') : path.join('/')}`;
  }
  const src = url.indexOf('/dist/');
  if (src !== -1) return `gateway: ${url.slice(src + 6)}`;
  return url;
}

function top(map: Map<string, number>, busyMs: number, count: number): ProfileEntry[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, selfMs: us / 1000, pct: (us / 1000 / busyMs) * 100 }));
}

export function summarizeProfile(file: string, window?: { fromUs: number; toUs: number }, count = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const overlaps = window && window.fromUs < profile.endTime && window.toUs > profile.startTime;
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let t = profile.startTime;
  let busy = 0;
  let idle = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (overlaps && (t < window.fromUs || t > window.toUs)) continue;
    const frame = frames.get(profile.samples[i]);
    if (!frame) continue;
    if (frame.functionName === '(idle)') {
      idle += delta;
      continue;
    }
    busy += delta;
    const where = shortUrl(frame.url);
    const name = `${frame.functionName || '(anonymous)'}${where ? ` ${where}:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
    const mod = moduleOf(frame);
    byModule.set(mod, (byModule.get(mod) ?? 0) + delta);
  }
  const busyMs = busy / 1000;
  return {
    file,
    windowMs: (busy + idle) / 1000,
    busyMs,
    idleMs: idle / 1000,
    wholeProfile: !overlaps,
    functions: top(byFunction, busyMs, count),
    modules: top(byModule, busyMs, 15),
  };
}

export function formatProfile(summary: ProfileSummary, title: string): string {
  const pct = (e: ProfileEntry) => `${e.pct.toFixed(1).padStart(5)}%  ${e.selfMs.toFixed(0).padStart(6)} ms  ${e.name}`;
  return [
    `${title}: ${summary.busyMs.toFixed(0)} ms busy, ${summary.idleMs.toFixed(0)} ms idle` +
      (summary.wholeProfile ? ' (whole profile: the window did not match its clock)' : ''),
    '  top self time by function:',
    ...summary.functions.map((e) => `    ${pct(e)}`),
    '  self time by package / file:',
    ...summary.modules.map((e) => `    ${pct(e)}`),
  ].join('\n');
}

if (require.main === module) {
  const [file, count] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node dist/bench/profile.js <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  process.stdout.write(formatProfile(summarizeProfile(file, undefined, Number(count) || 25), file) + '\n');
}
