/**
 * Hostile-input generators for test/runtime/fuzz.e2e-spec.ts (issue 10, item 5).
 *
 * Everything is derived from one seed through a tiny PRNG (mulberry32), and every case from
 * its own sub-seed (`caseSeed(seed, index)`), so that one failing case can be regenerated
 * alone: `FUZZ_SEED=<seed> FUZZ_ONLY=<index>,… npx jest test/runtime/fuzz.e2e-spec.ts`.
 *
 * Bodies are built as a small JSON tree (`J`) rather than JS objects, so that they can hold
 * what `JSON.stringify` cannot write: `__proto__` as an own key, duplicate keys, `-0`,
 * `1e400`, lone surrogate escapes and raw text such as 10,000 levels of nesting.
 */

// ---------------------------------------------------------------------------------------------
// PRNG

/** mulberry32: 32-bit state, good enough for fuzzing and trivially reproducible. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of case `index`: independent of how much randomness the other cases used. */
export function caseSeed(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

export class Rng {
  private readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = mulberry32(seed);
  }

  float(): number {
    return this.next();
  }

  /** 0 … n-1 */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(table: readonly (readonly [number, T])[]): T {
    const total = table.reduce((sum, [w]) => sum + w, 0);
    let r = this.float() * total;
    for (const [w, value] of table) {
      if ((r -= w) < 0) return value;
    }
    return table[table.length - 1][1];
  }
}

// ---------------------------------------------------------------------------------------------
// A JSON tree that can say anything

/** A fragment of JSON text written as it is (numbers JSON.stringify cannot write, deep nesting …). */
export class Raw {
  constructor(readonly text: string) {}
}

/** A JSON object as an ordered list of entries: `__proto__` stays an own key, keys may repeat. */
export class Obj {
  constructor(readonly entries: [string, J][] = []) {}
}

export type J = null | boolean | number | string | Raw | Obj | J[];

/** A plain JS value (the valid templates below) as a tree. */
export function tree(value: unknown): J {
  if (value === null || value === undefined) return null;
  if (value instanceof Raw || value instanceof Obj) return value;
  if (Array.isArray(value)) return value.map(tree);
  if (typeof value === 'object') return new Obj(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, tree(v)]));
  return value as J;
}

/** JSON text of a tree. Strings go through JSON.stringify (a lone surrogate becomes `\ud800`). */
export function serialize(value: J): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Obj) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
  return JSON.stringify(value);
}

const clone = (value: J): J => (value instanceof Obj ? new Obj(value.entries.map(([k, v]) => [k, clone(v)])) : Array.isArray(value) ? value.map(clone) : value);

/** A place in a tree: an entry of an object or an element of an array. */
export interface Slot {
  path: string;
  get(): J;
  set(value: J): void;
  remove(): void;
}

export function slotsOf(root: J, path = '$', out: Slot[] = [], depth = 0): Slot[] {
  if (depth > 12) return out;
  if (root instanceof Obj) {
    root.entries.forEach((entry, i) => {
      const at = `${path}.${entry[0]}`;
      out.push({
        path: at,
        get: () => root.entries[i]?.[1] ?? null,
        set: (v) => {
          if (root.entries[i]) root.entries[i][1] = v;
        },
        remove: () => void root.entries.splice(i, 1),
      });
      slotsOf(entry[1], at, out, depth + 1);
    });
  } else if (Array.isArray(root)) {
    root.forEach((item, i) => {
      const at = `${path}[${i}]`;
      out.push({ path: at, get: () => root[i] ?? null, set: (v) => void (root[i] = v), remove: () => void root.splice(i, 1) });
      slotsOf(item, at, out, depth + 1);
    });
  }
  return out;
}

function objectsOf(root: J, out: Obj[] = [], depth = 0): Obj[] {
  if (depth > 12) return out;
  if (root instanceof Obj) {
    out.push(root);
    for (const [, v] of root.entries) objectsOf(v, out, depth + 1);
  } else if (Array.isArray(root)) {
    for (const v of root) objectsOf(v, out, depth + 1);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Hostile values

/** Numbers a parser, a validator or PostgreSQL may choke on. */
export const HOSTILE_NUMBERS: readonly Raw[] = [
  '-0',
  '0',
  '-1',
  '1e308',
  '-1e308',
  '1.7976931348623157e308',
  '1e400',
  '-1e400',
  '5e-324',
  '1e-400',
  '18446744073709551616',
  '9007199254740993',
  '-9007199254740993',
  '2147483648',
  '-2147483649',
  '123456789012345678901234567890123456789',
  '0.1',
  '1.5',
  '0.000001',
  '1E2',
  '1e+2',
  '-0.0',
  '4294967296',
  '0.30000000000000004',
  '1e21',
  '100000000000000000000000',
  '99999999999',
  '1e-7',
  '0.0000001',
  '1e-10',
  '12.3456789',
  '-1e-7',
].map((t) => new Raw(t));

/** Strings that look like something else, or that break naive code. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '  padded  ',
  'NaN',
  'Infinity',
  '-Infinity',
  'null',
  'undefined',
  'true',
  'false',
  '0',
  '-0',
  '1e308',
  '0x1F',
  '2147483648',
  '18446744073709551616',
  '[]',
  '{}',
  '[object Object]',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  "'; drop table request_logs; --",
  '" or 1=1 --',
  '\\',
  '"',
  "'",
  '`',
  '${7*7}',
  '#{7*7}',
  '%s%s%s%n',
  '{{customer}}',
  '{{#customer}}x{{/customer}}',
  '{{',
  '}}',
  '{{{x}}}',
  '{{> partial}}',
  '{{=<% %>=}}',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '..',
  '.',
  '/',
  '//',
  '%00',
  '%ff',
  '%',
  'C:\\Windows\\win.ini',
  'file:///etc/passwd',
  'http://169.254.169.254/latest/meta-data/',
  'javascript:alert(1)',
  'data:text/plain,hi',
  'gk-not-a-key',
  'sk-fake',
  'Bearer x',
  '@',
  '@/',
  '@x/',
  '@/x',
  '@@x/y',
  '@fuzz-openai/',
  '@no-such-vk/gpt-4o-mini',
  '@fuzz-openai/gpt-4o-mini',
  'openai/gpt-4o-mini',
  'gpt-4o-mini ',
  ' gpt-4o-mini',
  'GPT-4O-MINI',
  'text-embedding-3-small',
  'claude-sonnet-4-5',
  'o3-mini',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '0190a0b0-0000-7000-8000-000000000000',
  'monthly',
  'admin',
  'user',
  'rpm',
  'simple',
  'fallback',
  'auto',
  'none',
  'required',
  'url',
  'b64_json',
  '1024x1024',
  '0x0',
  '99999999x99999999',
  'float',
  'base64',
  'assistant',
  'system',
  'tool',
  'function',
  'developer',
  'input_text',
  'text',
  'image_url',
];

/** Unicode edge cases; lone surrogates are written as `\udXXX` escapes by serialize(). */
export const UNICODE_STRINGS: readonly string[] = [
  '\u0000',
  'a\u0000b',
  '\u0000\u0000\u0000',
  '\u0001\u0002\u001f\u007f',
  '\t\n\r\f\b',
  '\ud800',
  '\udfff',
  'x\ud800y',
  '\udc00\ud800',
  '\ud83d',
  '\ud83d\ude00',
  '\udbff\udfff',
  '\ufeff',
  '\ufeffhello',
  '\ufffe',
  '\uffff',
  '\ufffd',
  '\u202e\u202dRTL override',
  '\u200b\u200c\u200d',
  '\u2028\u2029',
  'e\u0301\u0301\u0301',
  '\u0130\u0131',
  'ß',
  'ﬃ',
  '𝕏𝔂𝔃',
  'Z̷̧̛̛a̶̡l̵̨g̸̢o̶̧',
  'مرحبا بالعالم',
  '你好，世界',
  '🏳️‍🌈👨‍👩‍👧‍👦🧑🏽‍🚀',
  '\u00ff\u00fe',
  '\u0085\u00a0',
  'ℌ𝔢𝔩𝔩𝔬',
  '\u{10ffff}',
  '\u{e0001}\u{e0061}',
  'a'.repeat(129),
  'é'.repeat(200),
  '😀'.repeat(300),
];

/** Keys that poison naive merges, and a payload each. */
export const POLLUTION_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** `{"polluted": 1}` under `__proto__`, `{"prototype": {"polluted": 1}}` under `constructor` … */
export function pollutionPayload(rng: Rng, key: string = rng.pick(POLLUTION_KEYS)): J {
  const leaf = new Obj([['polluted', rng.pick<J>([1, 'yes', true, new Obj([['x', 1]])])]]);
  if (key === 'constructor') return new Obj([['prototype', leaf]]);
  if (key === 'prototype') return rng.chance(0.5) ? leaf : new Obj([['__proto__', leaf]]);
  return rng.chance(0.2) ? new Obj([['__proto__', leaf]]) : leaf;
}

/** Deep nesting as raw text (cheap to build, 10,000 levels by default). */
export function deepNesting(rng: Rng, depth = rng.pick([10_000, 10_000, 5_000, 2_000, 50_000])): Raw {
  switch (rng.int(4)) {
    case 0:
      return new Raw('['.repeat(depth) + ']'.repeat(depth));
    case 1:
      return new Raw('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
    case 2:
      return new Raw('[{"a":'.repeat(depth / 2) + 'null' + '}]'.repeat(depth / 2));
    default:
      return new Raw('{"__proto__":'.repeat(depth) + '{"polluted":1}' + '}'.repeat(depth));
  }
}

/** Strings of a few megabytes (the body limit of the fuzzed gateway is 10 MiB). */
export function enormousString(rng: Rng): string {
  const size = rng.pick([1, 2, 3, 4]) * 1024 * 1024;
  const unit = rng.pick(['x', 'é', '😀', 'ab\n', '\u0000']);
  // Sized by the JSON text it becomes (a NUL is written as 6 bytes).
  return unit.repeat(Math.ceil(size / (Buffer.byteLength(JSON.stringify(unit)) - 2)));
}

/** Printable ASCII that does not compress (PostgreSQL compresses long values before indexing them). */
export function incompressible(rng: Rng, length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[rng.int(64)];
  return s;
}

function randomString(rng: Rng): string {
  const alphabets = ['abcdefghijklmnopqrstuvwxyz0123456789-_', 'ABCxyz019 !#$%&()*+,./:;<=>?@[]^_`{|}~\'"\\', 'éüßçøåñ你好😀\u0000\u202e\ud800'];
  const alphabet = [...rng.pick(alphabets)];
  const length = rng.pick([1, 2, 5, 16, 64, 257, 1000]);
  let s = '';
  for (let i = 0; i < length; i++) s += rng.pick(alphabet);
  return s;
}

/** One hostile value: wrong type, edge number, odd string, odd container, pollution, nesting. */
export function hostileValue(rng: Rng, depth = 0): J {
  const kind = rng.weighted<string>([
    [6, 'number'],
    [7, 'string'],
    [4, 'unicode'],
    [2, 'random-string'],
    [3, 'null'],
    [2, 'bool'],
    [3, 'empty'],
    [3, 'array'],
    [3, 'object'],
    [2, 'pollution'],
    [0.6, 'deep'],
    [1, 'long-string'],
    [1, 'wide'],
  ]);
  switch (kind) {
    case 'number':
      return rng.pick(HOSTILE_NUMBERS);
    case 'string':
      return rng.pick(HOSTILE_STRINGS);
    case 'unicode':
      return rng.pick(UNICODE_STRINGS);
    case 'random-string':
      return randomString(rng);
    case 'null':
      return null;
    case 'bool':
      return rng.chance(0.5);
    case 'empty':
      return rng.pick<J>([[], new Obj(), '', [[]], [new Obj()]]);
    case 'array':
      return depth > 3 ? [] : Array.from({ length: rng.pick([1, 2, 3, 5]) }, () => hostileValue(rng, depth + 1));
    case 'object':
      return depth > 3
        ? new Obj()
        : new Obj(
            Array.from(
              { length: rng.pick([1, 2, 3]) },
              () => [rng.pick(['a', 'type', 'role', 'content', 'model', 'text', '']), hostileValue(rng, depth + 1)] as [string, J],
            ),
          );
    case 'pollution': {
      const key = rng.pick(POLLUTION_KEYS);
      return new Obj([[key, pollutionPayload(rng, key)]]);
    }
    case 'deep':
      return deepNesting(rng, rng.pick([10_000, 2_000, 200]));
    case 'long-string':
      return rng.pick(['x', 'é', '😀', '\u0000']).repeat(rng.pick([4097, 65_537, 300_000]));
    default:
      // wide: many elements or keys
      return rng.chance(0.5)
        ? Array.from({ length: rng.pick([1000, 10_000]) }, (_, i) => (rng.chance(0.5) ? i : 'x'))
        : new Obj(Array.from({ length: rng.pick([100, 2000]) }, (_, i) => [`k${i}`, i] as [string, J]));
  }
}

/** The swapped-type version of a value (object -> array, string -> number …). */
function typeSwap(rng: Rng, value: J): J {
  if (value instanceof Obj) return rng.chance(0.5) ? value.entries.map(([, v]) => v) : serialize(value);
  if (Array.isArray(value)) return rng.chance(0.5) ? new Obj(value.map((v, i) => [String(i), v])) : value.length ? value[0] : null;
  if (typeof value === 'string') return rng.pick<J>([Number(value.length), [value], new Obj([['value', value]]), value === '' ? 0 : true]);
  if (typeof value === 'number') return rng.pick<J>([String(value), [value], new Obj([['value', value]]), value !== 0]);
  if (typeof value === 'boolean') return rng.pick<J>([String(value), value ? 1 : 0, [value]]);
  return rng.pick<J>(['null', 0, false, [], new Obj()]);
}

/** Applies `count` mutations to a tree (in place, but the root may be replaced): returns the new root and what was done. */
export function mutate(rng: Rng, root: J, count: number): { root: J; notes: string[] } {
  const notes: string[] = [];
  for (let n = 0; n < count; n++) {
    const slots = slotsOf(root);
    const op = rng.weighted<string>([
      [10, 'replace'],
      [4, 'type-swap'],
      [3, 'remove'],
      [3, 'inject-key'],
      [2, 'duplicate-key'],
      [2, 'unicode'],
      [0.7, 'wrap-root'],
      [1, 'extra-field'],
    ]);
    if ((op === 'replace' || op === 'type-swap' || op === 'remove' || op === 'unicode') && slots.length === 0) continue;
    switch (op) {
      case 'replace': {
        const slot = rng.pick(slots);
        const value = hostileValue(rng);
        slot.set(value);
        notes.push(`replace ${slot.path} := ${preview(serialize(value), 60)}`);
        break;
      }
      case 'type-swap': {
        const slot = rng.pick(slots);
        const value = typeSwap(rng, slot.get());
        slot.set(value);
        notes.push(`type-swap ${slot.path} := ${preview(serialize(value), 60)}`);
        break;
      }
      case 'remove': {
        const slot = rng.pick(slots);
        slot.remove();
        notes.push(`remove ${slot.path}`);
        break;
      }
      case 'unicode': {
        const slot = rng.pick(slots);
        const value = rng.pick(UNICODE_STRINGS);
        slot.set(value);
        notes.push(`unicode ${slot.path} := ${preview(JSON.stringify(value), 40)}`);
        break;
      }
      case 'inject-key': {
        const objects = objectsOf(root);
        if (!objects.length) break;
        const target = rng.pick(objects);
        const key = rng.pick(POLLUTION_KEYS);
        const value = pollutionPayload(rng, key);
        target.entries.splice(rng.int(target.entries.length + 1), 0, [key, value]);
        notes.push(`inject ${key}: ${serialize(value)}`);
        break;
      }
      case 'duplicate-key': {
        const objects = objectsOf(root).filter((o) => o.entries.length);
        if (!objects.length) break;
        const target = rng.pick(objects);
        const key = rng.pick(target.entries)[0];
        const value = hostileValue(rng);
        target.entries.push([key, value]);
        notes.push(`duplicate key ${key} := ${preview(serialize(value), 60)}`);
        break;
      }
      case 'extra-field': {
        const objects = objectsOf(root);
        if (!objects.length) break;
        const key = rng.pick(['extra', 'x'.repeat(rng.pick([1, 300, 5000])), '', ' ', '\u0000', '\ud800', 'a.b', '$where', 'stream_options', 'n']);
        const value = hostileValue(rng);
        rng.pick(objects).entries.push([key, value]);
        notes.push(`extra field ${preview(JSON.stringify(key), 30)} := ${preview(serialize(value), 60)}`);
        break;
      }
      default: {
        // wrap-root
        const wrapped = rng.pick<J>([[root], serialize(root), 1, null, true, new Obj([['body', root]])]);
        notes.push(`wrap root as ${wrapped instanceof Obj ? 'object' : Array.isArray(wrapped) ? 'array' : typeof wrapped}`);
        root = wrapped;
      }
    }
  }
  return { root, notes };
}

/**
 * One leaf replaced by an edge case of its own kind (a string by a unicode or odd string, a
 * number by an edge number …): the rest of the body stays valid, so the value reaches further
 * than validation (the database, the provider, the log).
 */
export function edgeMutation(rng: Rng, root: J): { root: J; notes: string[] } {
  const leaves = slotsOf(root).filter((slot) => {
    const v = slot.get();
    return !(v instanceof Obj) && !Array.isArray(v);
  });
  if (!leaves.length) return { root, notes: [] };
  const slot = rng.pick(leaves);
  const current = slot.get();
  let value: J;
  if (rng.chance(0.2)) {
    // null, or a value of the wrong type, where a value of one type is expected
    value = rng.pick<J>([null, null, typeSwap(rng, current), new Obj(), []]);
  } else if (typeof current === 'string') {
    value = rng.weighted<J>([
      [5, rng.pick(UNICODE_STRINGS)],
      [3, rng.pick(HOSTILE_STRINGS)],
      [1, current + rng.pick(UNICODE_STRINGS)],
      [1, rng.pick(['x', 'é', '\u0000']).repeat(rng.pick([257, 4097, 100_000]))],
    ]);
  } else if (typeof current === 'number' || current instanceof Raw) {
    value = rng.pick(HOSTILE_NUMBERS);
  } else if (typeof current === 'boolean') {
    value = rng.pick<J>(['true', 1, 0, null, [true], new Obj()]);
  } else {
    value = hostileValue(rng);
  }
  slot.set(value);
  return { root, notes: [`edge ${slot.path} := ${preview(serialize(value), 60)}`] };
}

/** Every string of a tree replaced by a unicode edge case. */
export function unicodeEverywhere(rng: Rng, root: J): J {
  if (typeof root === 'string') return rng.pick(UNICODE_STRINGS);
  if (root instanceof Obj) return new Obj(root.entries.map(([k, v]) => [rng.chance(0.15) ? rng.pick(UNICODE_STRINGS) : k, unicodeEverywhere(rng, v)]));
  if (Array.isArray(root)) return root.map((v) => unicodeEverywhere(rng, v));
  return root;
}

/** A pollution key at every object level of the tree (and at the top). */
export function pollutionEverywhere(rng: Rng, root: J): J {
  const copy = clone(root);
  for (const o of objectsOf(copy)) {
    const key = rng.pick(POLLUTION_KEYS);
    o.entries.splice(rng.int(o.entries.length + 1), 0, [key, pollutionPayload(rng, key)]);
  }
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Raw, invalid bodies

export interface RawBody {
  body: Buffer | null;
  /** undefined: keep the case's content type; null: send none. */
  contentType?: string | null;
  headers?: Record<string, string>;
  note: string;
}

const INVALID_UTF8: readonly number[][] = [
  [0xff],
  [0xfe, 0xff],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xc3],
  [0xe2, 0x82],
  [0x80],
  [0xbf, 0xbf],
  [0xc0, 0x80],
  [0x00],
];

/** A body that is not what it says: invalid UTF-8, truncated JSON, other content types, nothing at all. */
export function rawBody(rng: Rng, validText: string): RawBody {
  const bytes = Buffer.from(validText, 'utf8');
  const bad = () => Buffer.from(rng.pick(INVALID_UTF8));
  const kind = rng.weighted<string>([
    [4, 'invalid-utf8-in-string'],
    [3, 'invalid-utf8-anywhere'],
    [4, 'truncated'],
    [3, 'content-type'],
    [2, 'empty'],
    [2, 'scalar'],
    [1, 'bom'],
    [1, 'encoding'],
    [1, 'charset'],
    [1, 'garbage'],
    [1, 'nul-bytes'],
    [1, 'trailing'],
  ]);
  switch (kind) {
    case 'invalid-utf8-in-string': {
      // Inside the first string value: the JSON stays valid, only its UTF-8 does not.
      const quote = bytes.indexOf(0x22, bytes.indexOf(0x3a)) + 1;
      const at = quote > 0 ? quote : rng.int(bytes.length);
      const b = bad();
      return { body: Buffer.concat([bytes.subarray(0, at), b, bytes.subarray(at)]), note: `invalid UTF-8 ${b.toString('hex')} in a string at byte ${at}` };
    }
    case 'invalid-utf8-anywhere': {
      const at = rng.int(bytes.length + 1);
      const b = bad();
      return { body: Buffer.concat([bytes.subarray(0, at), b, bytes.subarray(at)]), note: `invalid UTF-8 ${b.toString('hex')} at byte ${at}` };
    }
    case 'truncated': {
      const at = rng.int(Math.max(1, bytes.length - 1));
      return { body: bytes.subarray(0, at), note: `truncated at byte ${at} of ${bytes.length}` };
    }
    case 'content-type': {
      const type = rng.pick([
        null,
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=xyz',
        'application/xml',
        'text/json',
        'application/jsonx',
        'json',
        'application/',
        '*/*',
        'application/json-patch',
        'APPLICATION/JSON',
        'application/json;;;',
        'application/problem+json',
        'application/vnd.api+json; charset=utf-8',
        'application/json; charset="utf-8"',
        'application/json; boundary=x',
        'application/json\t',
        'x/y; charset=utf-8',
      ]);
      return { body: bytes, contentType: type, note: `content-type ${JSON.stringify(type)}` };
    }
    case 'empty':
      return rng.chance(0.5)
        ? { body: Buffer.alloc(0), note: 'empty body (content-length 0)' }
        : { body: Buffer.from(rng.pick([' ', '\n', '\r\n\t ', ''])), note: 'whitespace-only body' };
    case 'scalar': {
      const text = rng.pick(['null', '[]', '0', '-0', '"text"', 'true', '1e400', '[null]', '""', '{}', '[{}]', '{"":""}']);
      return { body: Buffer.from(text), note: `body ${text}` };
    }
    case 'bom':
      return { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]), note: 'UTF-8 BOM before the JSON' };
    case 'encoding': {
      const encoding = rng.pick(['gzip', 'br', 'deflate', 'identity', 'IDENTITY', 'x-garbage', 'gzip, identity', '']);
      return { body: bytes, headers: { 'content-encoding': encoding }, note: `content-encoding ${JSON.stringify(encoding)}` };
    }
    case 'charset': {
      const charset = rng.pick(['utf-16', 'latin1', 'iso-8859-1', 'UTF-8', 'utf8', 'ascii', 'x', '"utf-16"', 'utf-8;q=1']);
      return { body: bytes, contentType: `application/json; charset=${charset}`, note: `charset ${charset}` };
    }
    case 'garbage': {
      const length = rng.pick([1, 16, 1024, 65_536]);
      const noise = Buffer.alloc(length);
      for (let i = 0; i < length; i++) noise[i] = rng.int(256);
      return { body: noise, note: `${length} random bytes` };
    }
    case 'nul-bytes':
      return { body: Buffer.concat([bytes, Buffer.alloc(rng.pick([1, 64]))]), note: 'NUL bytes after the JSON' };
    default: {
      const tail = rng.pick(['}', ']', ',', ' x', '{}', '\u0000', '//comment', '/* c */']);
      return { body: Buffer.concat([bytes, Buffer.from(tail)]), note: `trailing ${JSON.stringify(tail)}` };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Multipart bodies (the upload routes)

export interface MultipartCase {
  body: Buffer;
  contentType: string;
  notes: string[];
}

/**
 * A multipart/form-data body for an upload route (`fields`: its text fields, plus a `file`
 * part), valid or broken the ways a hostile client would break it: cut anywhere (the
 * closing boundary missing, as in issue 32), a boundary that lies, part headers malformed,
 * oversized or repeated, too many parts, random bytes, a body meant for JSON.
 */
export function hostileMultipart(rng: Rng, fields: Record<string, string>): MultipartCase {
  let boundary = `fz${rng.int(1e9).toString(36)}`;
  const notes: string[] = [];
  const file = Buffer.from(rng.pick(['{"a":1}\n', 'RIFF....WAVEfmt ', '', 'x'.repeat(rng.pick([1, 100, 70_000]))]));
  const parts: { headers: string; value: Buffer }[] = [
    ...Object.entries(fields).map(([name, value]) => ({ headers: `Content-Disposition: form-data; name="${name}"`, value: Buffer.from(value) })),
    {
      headers: `Content-Disposition: form-data; name="file"; filename="${rng.pick(['a.jsonl', 'a.wav', '', '../../etc/passwd', '中.txt', 'a"b.txt'])}"\r\nContent-Type: ${rng.pick(['application/jsonl', 'audio/wav', 'text/plain'])}`,
      value: file,
    },
  ];
  const kind = rng.weighted<string>([
    [3, 'valid'],
    [6, 'truncated'],
    [2, 'no-closing'],
    [2, 'boundary'],
    [3, 'part-headers'],
    [1, 'many-parts'],
    [1, 'big-field'],
    [1, 'garbage'],
    [1, 'preamble'],
  ]);
  notes.push(`multipart: ${kind}`);
  switch (kind) {
    case 'part-headers': {
      const part = rng.pick(parts);
      part.headers = rng.pick([
        'Content-Disposition form-data; name="file"',
        'Content-Type: text/plain',
        `Content-Disposition: form-data; name="${'n'.repeat(100_000)}"`,
        'Content-Disposition: attachment; name="file"; filename="a"',
        `${'X-A: b\r\n'.repeat(3000)}Content-Disposition: form-data; name="file"; filename="a"`,
        'Content-Disposition: form-data; name="file"; filename="a"\r\nContent-Transfer-Encoding: base64',
        'Content-Disposition: form-data; name=file\u0000; filename="a"',
        'Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'%E4%B8%AD',
      ]);
      notes.push(`part header ${preview(part.headers, 60)}`);
      break;
    }
    case 'many-parts': {
      const count = rng.pick([201, 1001, 3000]);
      parts.unshift(...Array.from({ length: count }, (_, i) => ({ headers: `Content-Disposition: form-data; name="f${i}"`, value: Buffer.from('v') })));
      notes.push(`${count} extra fields`);
      break;
    }
    case 'big-field':
      parts[0] = { headers: parts[0].headers, value: Buffer.alloc(1024 * 1024 + rng.pick([1, 70_000]), 0x70) };
      notes.push('a text field over 1 MiB');
      break;
  }
  const body = Buffer.concat([
    ...(kind === 'preamble' ? [Buffer.from('preamble text\r\n')] : []),
    ...parts.flatMap((part) => [Buffer.from(`--${boundary}\r\n${part.headers}\r\n\r\n`), part.value, Buffer.from('\r\n')]),
    Buffer.from(kind === 'no-closing' ? '' : `--${boundary}--\r\n`),
  ]);
  let contentType = `multipart/form-data; boundary=${boundary}`;
  switch (kind) {
    case 'truncated': {
      const at = rng.int(body.length);
      notes.push(`cut at byte ${at} of ${body.length}`);
      return { body: body.subarray(0, at), contentType, notes };
    }
    case 'boundary':
      boundary = rng.pick(['', 'other', '"unclosed', 'b'.repeat(300), 'a b', '--', `${boundary}x`]);
      contentType = rng.pick([
        `multipart/form-data; boundary=${boundary}`,
        'multipart/form-data',
        'multipart/form-data; boundary',
        `multipart/mixed; boundary=${boundary}`,
      ]);
      notes.push(`content-type ${preview(contentType, 60)}`);
      return { body, contentType, notes };
    case 'garbage': {
      const noise = Buffer.alloc(rng.pick([1, 64, 4096]));
      for (let i = 0; i < noise.length; i++) noise[i] = rng.int(256);
      return { body: rng.chance(0.5) ? noise : Buffer.concat([body.subarray(0, rng.int(body.length)), noise]), contentType, notes };
    }
    default:
      return { body, contentType, notes };
  }
}

// ---------------------------------------------------------------------------------------------
// Headers

/**
 * A header value as the bytes to send: Node's HTTP client writes header strings as latin1, so
 * UTF-8 (and invalid UTF-8) is sent by turning its bytes into a latin1 string. Control
 * characters other than tab cannot be sent this way (see the raw-socket test instead).
 */
export function headerBytes(value: string | Buffer): string {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return [...bytes]
    .map((b) => (b === 0x09 || (b >= 0x20 && b !== 0x7f) ? String.fromCharCode(b) : '?'))
    .join('')
    .trim();
}

function headerString(rng: Rng): string {
  return rng.weighted<string>([
    [5, rng.pick(HOSTILE_STRINGS)],
    [3, rng.pick(UNICODE_STRINGS)],
    [2, randomString(rng)],
    [1, 'x'.repeat(rng.pick([129, 1000, 6000]))],
    [1, headerBytes(Buffer.from(rng.pick(INVALID_UTF8)))],
    [1, 'a\tb'],
  ]);
}

/** Inline configs: broken JSON, wrong types, pollution, deep, huge, and valid ones with a hostile field. */
export function hostileConfigHeader(rng: Rng, virtualKey: string, mockUrl: string): string {
  const base = () => new Obj([['virtual_key', virtualKey]]);
  const kind = rng.weighted<string>([
    [3, 'garbage'],
    [5, 'field'],
    [2, 'pollution'],
    [1, 'deep'],
    [1, 'huge'],
    [2, 'targets'],
    [1, 'strategy'],
    [1, 'stored'],
  ]);
  switch (kind) {
    case 'garbage':
      return rng.pick([
        '{',
        '{"',
        '{"a":',
        '{}',
        '[]',
        '[{}]',
        'null',
        '"x"',
        '{"virtual_key":}',
        "{'virtual_key':'x'}",
        '{ }',
        ' {"x":1} ',
        '{}}',
        '{"__proto__":null}',
        '{"a":1e400}',
      ]);
    case 'field': {
      const config = base();
      const field = rng.pick([
        'strategy',
        'provider',
        'api_key',
        'virtual_key',
        'provider_organization',
        'provider_project',
        'custom_host',
        'override_params',
        'retry',
        'request_timeout',
        'cache',
        'circuit_breaker',
        'weight',
        'name',
        'targets',
        'input_guardrails',
        'output_guardrails',
        'unknown',
      ]);
      const value = rng.weighted<J>([
        [3, hostileValue(rng, 2)],
        [
          1,
          new Obj([
            ['attempts', rng.pick(HOSTILE_NUMBERS)],
            ['on_status_codes', rng.pick<J>([[500], [new Raw('1e308')], 'x', [], [new Raw('-0')]])],
          ]),
        ],
        [
          1,
          new Obj([
            ['mode', rng.pick<J>(['simple', 'semantic', 5, null])],
            ['max_age', rng.pick(HOSTILE_NUMBERS)],
          ]),
        ],
        [
          1,
          new Obj([
            ['model', hostileValue(rng, 2)],
            ['max_tokens', rng.pick(HOSTILE_NUMBERS)],
            ['__proto__', new Obj([['polluted', 1]])],
          ]),
        ],
        [1, new Obj([['model', incompressible(rng, rng.pick([300, 3000, 8000]))]])],
        [1, rng.pick(HOSTILE_NUMBERS)],
      ]);
      config.entries.push([field, value]);
      return serialize(config);
    }
    case 'pollution': {
      const config = base();
      const key = rng.pick(POLLUTION_KEYS);
      config.entries.push([key, pollutionPayload(rng, key)]);
      if (rng.chance(0.5)) config.entries.push(['override_params', new Obj([[rng.pick(POLLUTION_KEYS), pollutionPayload(rng)]])]);
      return serialize(config);
    }
    case 'deep':
      return rng.chance(0.5) ? '['.repeat(3000) + ']'.repeat(3000) : `{"targets":${'[{"targets":'.repeat(500)}[]${'}]'.repeat(500)}}`;
    case 'huge':
      return serialize(
        new Obj([
          ['virtual_key', virtualKey],
          ['name', 'n'.repeat(rng.pick([3000, 7000]))],
        ]),
      );
    case 'targets': {
      const target = () =>
        rng.pick<J>([
          base(),
          new Obj([
            ['provider', 'openai'],
            ['api_key', 'sk-x'],
            ['custom_host', `${mockUrl}/v1`],
          ]),
          hostileValue(rng, 2),
          new Obj(),
        ]);
      return serialize(
        new Obj([
          ['strategy', new Obj([['mode', rng.pick(['fallback', 'loadbalance', 'single', 'x'])]])],
          ['targets', [target(), target()]],
          ['weight', rng.pick(HOSTILE_NUMBERS)],
        ]),
      );
    }
    case 'strategy': {
      const query = rng.pick<J>([
        new Obj([['metadata.tier', new Obj([['$eq', hostileValue(rng, 2)]])]]),
        new Obj([['params.model', new Obj([['$regex', rng.pick(['[', '(', '\\', '*', 'a{99999999999}', '.*'])]])]]),
        new Obj([['$or', hostileValue(rng, 2)]]),
        new Obj([['__proto__', new Obj([['$eq', 1]])]]),
        hostileValue(rng, 2),
      ]);
      return serialize(
        new Obj([
          [
            'strategy',
            new Obj([
              ['mode', 'conditional'],
              [
                'conditions',
                [
                  new Obj([
                    ['query', query],
                    ['then', 'a'],
                  ]),
                ],
              ],
              ['default', rng.pick<J>(['a', 'missing', 5])],
            ]),
          ],
          [
            'targets',
            [
              new Obj([
                ['name', 'a'],
                ['virtual_key', virtualKey],
              ]),
            ],
          ],
        ]),
      );
    }
    default:
      return rng.pick([
        'fuzz-config',
        'no-such-config',
        '00000000-0000-0000-0000-000000000000',
        'x'.repeat(300),
        headerBytes(rng.pick(UNICODE_STRINGS)) || 'x',
      ]);
  }
}

export function hostileMetadataHeader(rng: Rng): string {
  return rng.pick([
    () => serialize(hostileValue(rng)),
    () => '{',
    () => '[]',
    () => JSON.stringify(Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v']))),
    () => JSON.stringify({ a: 'x'.repeat(129) }),
    () => JSON.stringify({ ['k'.repeat(65)]: 'v' }),
    () => JSON.stringify({ '': 'v' }),
    () => JSON.stringify({ a: 1 }),
    () => JSON.stringify({ a: null }),
    () => JSON.stringify({ a: { b: 'c' } }),
    () => '{"__proto__":{"polluted":"1"}}',
    () => '{"__proto__":"x","a":"b"}',
    () => '{"constructor":{"prototype":{"polluted":"1"}}}',
    () => '{"_user":"\\u0000"}',
    () => '{"_user":"\\ud800"}',
    () => JSON.stringify({ _user: 'u'.repeat(128) }),
    () => JSON.stringify({ tier: rng.pick(UNICODE_STRINGS).slice(0, 100) }),
    () => '{"a":"b","a":"c"}',
    () => '['.repeat(2000) + ']'.repeat(2000),
  ])();
}

export interface HeaderFuzz {
  headers: Record<string, string | string[]>;
  /** Header names removed from the case's own headers. */
  remove: string[];
  notes: string[];
}

/** Gateway headers (CONTRACT section 1) with hostile values; 1 to 3 of them. */
export function hostileHeaders(rng: Rng, ctx: { virtualKey: string; mockUrl: string; anthropic: boolean }): HeaderFuzz {
  const out: HeaderFuzz = { headers: {}, remove: [], notes: [] };
  const count = rng.pick([1, 1, 2, 3]);
  for (let i = 0; i < count; i++) {
    const name = rng.weighted<string>([
      [5, 'x-gateway-config'],
      [4, 'x-gateway-virtual-key'],
      [3, 'x-gateway-provider'],
      [4, 'x-gateway-metadata'],
      [3, 'x-gateway-trace-id'],
      [1, 'x-gateway-retry-count'],
      [1, 'x-gateway-request-id'],
      [1, 'x-gateway-cache-force-refresh'],
      [1, 'x-gateway-custom-host'],
      [1, 'x-gateway-provider-organization'],
      [1, 'x-gateway-provider-project'],
      [2, 'x-gateway-api-key'],
      [1, 'authorization'],
      [1, 'x-gateway-target-index'],
      [1, 'vendor-version'],
      [1, 'vendor-beta'],
      [1, 'anthropic-version'],
      [1, 'anthropic-beta'],
      [1, 'x-api-key'],
      [1, 'accept'],
      [1, 'duplicate'],
    ]);
    let value: string | string[];
    switch (name) {
      case 'x-gateway-config':
        value = hostileConfigHeader(rng, ctx.virtualKey, ctx.mockUrl);
        break;
      case 'x-gateway-metadata':
        value = hostileMetadataHeader(rng);
        break;
      case 'x-gateway-virtual-key':
        value = rng.pick([headerString(rng), 'fuzz-disabled', 'fuzz-expired', 'fuzz-anthropic', 'fuzz-openai', '00000000-0000-0000-0000-000000000000']);
        out.remove.push('x-gateway-virtual-key');
        break;
      case 'x-gateway-provider': {
        value = rng.pick([
          headerString(rng),
          'constructor',
          '__proto__',
          'toString',
          'hasOwnProperty',
          'OPENAI',
          'openai ',
          'openai',
          'anthropic',
          'openai-compatible',
          'azure-openai',
          'google',
        ]);
        out.remove.push('x-gateway-virtual-key');
        if (rng.chance(0.6)) out.headers.authorization = rng.pick(['Bearer sk-fuzz', 'Bearer ', 'Basic eA==', `Bearer ${'k'.repeat(4000)}`, 'bearer\tx']);
        // Always a custom host: a known provider must never be called at its real address from a test.
        out.headers['x-gateway-custom-host'] = rng.pick([
          `${ctx.mockUrl}/v1`,
          `${ctx.mockUrl}/v1`,
          'http://127.0.0.1:9/v1',
          'ftp://x',
          'http://169.254.169.254/',
          headerString(rng),
        ]);
        break;
      }
      case 'x-gateway-trace-id':
        value = rng.pick([headerString(rng), 't'.repeat(129), 't'.repeat(8000), 'a b', 'a\tb', '../x', 'é', '\u00ff', headerBytes(Buffer.from([0xc3, 0x28]))]);
        break;
      case 'x-gateway-custom-host':
        value = rng.pick(['http://127.0.0.1:9', 'http://[::1', 'http://%00', 'javascript:x', headerString(rng)]);
        break;
      case 'x-gateway-api-key':
        value = rng.pick([headerString(rng), 'gk-' + 'x'.repeat(8000), '', 'gk-test-admin-key-0123456789 ', 'GK-TEST-ADMIN-KEY-0123456789']);
        break;
      case 'authorization':
        value = rng.pick(['Bearer', 'Bearer ' + headerString(rng), 'x'.repeat(5000), headerString(rng)]);
        break;
      case 'accept':
        value = rng.pick(['text/event-stream', 'application/xml', '*/*;q=0', headerString(rng)]);
        break;
      case 'duplicate':
        value = [hostileMetadataHeader(rng), '{"a":"b"}'];
        out.headers['x-gateway-metadata'] = value;
        out.notes.push(`x-gateway-metadata sent twice`);
        continue;
      default:
        value = headerString(rng);
    }
    const safe = Array.isArray(value) ? value.map((v) => headerBytes(v)) : headerBytes(value);
    out.headers[name] = safe;
    out.notes.push(`${name}: ${preview(JSON.stringify(safe), 80)}`);
  }
  for (const [name, value] of Object.entries(out.headers)) out.headers[name] = Array.isArray(value) ? value.map((v) => headerBytes(v)) : headerBytes(value);
  // Node refuses a request whose headers pass 16 KiB before the gateway sees it (see the raw-socket test).
  const size = () => Object.entries(out.headers).reduce((sum, [k, v]) => sum + k.length + String(v).length + 4, 0);
  while (size() > 12_000) {
    const [largest] = Object.entries(out.headers).sort((a, b) => String(b[1]).length - String(a[1]).length)[0];
    delete out.headers[largest];
    out.notes.push(`(${largest} dropped: headers over 12 KB)`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Query strings and path segments

/** Percent-encoded (or deliberately malformed) values for query strings and path segments. */
export function hostileEncoded(rng: Rng): string {
  return rng.weighted<string>([
    [4, encodeURIComponent(rng.pick(HOSTILE_STRINGS))],
    [3, encodeURIComponent(rng.pick(UNICODE_STRINGS.filter((s) => !/[\ud800-\udfff]/.test(s) || /[\ud800-\udbff][\udc00-\udfff]/.test(s))))],
    [
      3,
      rng.pick(['%00', 'a%00b', '%ff', '%fe%ff', '%ED%A0%80', '%C0%AF', '%', '%%', '%zz', '%2', '%u0041', '%2e%2e', '%2F', '%5C', '+', '%20', '%0d%0a', '%09']),
    ],
    [1, 'x'.repeat(rng.pick([300, 3000]))],
    [1, String(rng.pick(HOSTILE_NUMBERS).text)],
  ]);
}

const DATES = [
  '2024-01-01T00:00:00Z',
  '2024-02-30T00:00:00Z',
  '2024-02-30',
  '2023-02-29',
  '2024-04-31T12:00:00Z',
  '2024-W01',
  '2024-W53-7',
  '2024-001',
  '2024-366',
  '0000-01-01T00:00:00Z',
  '0001-01-01',
  '1970',
  '1969-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59.999Z',
  '2024-01-01T00:00:00.123456789Z',
  '2024-01-01T24:00:00Z',
  '2024-13-01',
  '+002024-01-01',
  '-000001-01-01T00:00:00Z',
  '2024-01-01T00:00:00+14:00',
  '2024-01-01T00:00:00-12:59',
  '2024-01-01 00:00:00',
  '2024',
  '20240101',
  '20240101T000000Z',
  'now',
  'today',
  'infinity',
  '-infinity',
  'epoch',
  '2024-01-01T00:00:00Z%00',
];

export function hostileDate(rng: Rng): string {
  return rng.chance(0.75) ? encodeURIComponent(rng.pick(DATES)) : hostileEncoded(rng);
}

/** Cursors: base64url of `createdAt|id` with something wrong in it, uuids, garbage. */
export function hostileCursor(rng: Rng): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64url');
  return rng.pick([
    () => b64(`2024-01-01T00:00:00.000Z|${rng.pick(['x', 'not-a-uuid', '', '1', '\u0000', '00000000-0000-0000-0000-000000000000'])}`),
    () => b64(`${rng.pick(DATES)}|00000000-0000-0000-0000-000000000000`),
    () => b64('|'),
    () => b64('x|y|z'),
    () => b64('\u0000|\u0000'),
    () => b64(`2024-01-01T00:00:00Z|${'f'.repeat(5000)}`),
    () => '00000000-0000-0000-0000-000000000000',
    () => 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    () => String(rng.pick(HOSTILE_NUMBERS).text),
    () => hostileEncoded(rng),
  ])();
}

/** A query string of 1 to 6 parameters, names known to the endpoint or not, values hostile; sometimes a repeated name. */
export function hostileQuery(rng: Rng, known: Record<string, (rng: Rng) => string>): string {
  const names = Object.keys(known);
  const parts: string[] = [];
  const count = rng.pick([1, 2, 3, 4, 6]);
  for (let i = 0; i < count; i++) {
    const roll = rng.float();
    if (roll < 0.7) {
      const name = rng.pick(names);
      parts.push(`${name}=${rng.chance(0.75) ? known[name](rng) : hostileEncoded(rng)}`);
      if (rng.chance(0.1)) parts.push(`${name}=${known[name](rng)}`); // repeated: an array
    } else if (roll < 0.85) {
      parts.push(
        `${rng.pick(['__proto__', 'constructor', 'prototype', '__proto__[polluted]', 'constructor[prototype][polluted]', 'a[b]', 'limit[]', '', 'x'.repeat(500), hostileEncoded(rng)])}=${hostileEncoded(rng)}`,
      );
    } else {
      parts.push(rng.pick(['', '&', '=', '==', 'a', 'a=', '=a', '%', '&&&', ';', '?', '#frag']));
    }
  }
  return parts.join('&');
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** A short, printable preview of any text: control characters, backslashes and lone surrogates escaped. */
export function preview(text: string, max = 240): string {
  const head = text.length > max * 2 ? text.slice(0, max * 2) : text;
  // Control characters are what a preview must show escaped.
  // eslint-disable-next-line no-control-regex
  const escaped = head.replace(/[\\\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (c) =>
    c === '\\' ? '\\\\' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return escaped.length > max ? `${escaped.slice(0, max)}… (${text.length} chars)` : escaped;
}
