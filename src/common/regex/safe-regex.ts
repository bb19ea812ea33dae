/**
 * Regular expressions that callers and admins supply (config conditions' `$regex`,
 * guardrail `regex` checks, JSON Schema `pattern`s) run here, in RE2 (`re2js`, a pure
 * JavaScript port): the time to match grows with the text, never exponentially with the
 * pattern. JavaScript's own engine backtracks: `^(a+)+$` against 26 `a`s and a `!` held
 * the event loop, and so every request of the process, for seconds.
 *
 * What RE2 cannot run is refused when the pattern is validated, with the reason:
 * backreferences and lookaround (both need backtracking), and programs so large that
 * even linear time is slow (matching costs up to text length × program size). JavaScript
 * spellings (`\uXXXX`, `\cX`, `[^]`, `(?<name>…)`) are translated to RE2's.
 */
import { RE2JS } from 're2js';

/** RE2's own measure of a pattern's cost; at this size a worst-case match of 100,000 characters takes ~100 ms. */
export const MAX_PROGRAM_SIZE = 1000;
/** A text is matched on its first this many characters (UTF-16 code units). */
export const MAX_MATCHED_CHARS = 100_000;

// `u` changes nothing: RE2 always matches code points. `g` and `y` would keep state between calls; `d` and `v` have no RE2 meaning.
const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };
/** The flags a pattern may carry (callers validate them before compiling). */
export const SAFE_REGEX_FLAGS = /^[imsu]*$/;
const WHY = 'user-supplied patterns run in a linear-time engine (RE2)';

/** A compiled pattern: `test` is safe to call on the request path. */
export class SafeRegex {
  constructor(
    private readonly re: RE2JS,
    readonly source: string,
    readonly flags: string,
  ) {}

  test(text: string): boolean {
    return this.re.test(text.length > MAX_MATCHED_CHARS ? text.slice(0, MAX_MATCHED_CHARS) : text);
  }

  toString(): string {
    return `/${this.source}/${this.flags}`;
  }
}

/** The pattern compiled, or why not, worded to follow the field's name ("config.x.pattern must …"). */
export type CompiledRegex = { regex: SafeRegex; problem?: undefined } | { regex?: undefined; problem: string };

// Configs are validated, then built, then matched on every request: each pattern is compiled once.
const MAX_CACHED = 1000;
const cache = new Map<string, CompiledRegex>();

export function compileSafeRegex(pattern: string, flags = ''): CompiledRegex {
  const key = `${flags}/${pattern}`;
  let compiled = cache.get(key);
  if (!compiled) {
    compiled = compile(pattern, flags);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(key, compiled);
  }
  return compiled;
}

function compile(pattern: string, flags: string): CompiledRegex {
  if (!SAFE_REGEX_FLAGS.test(flags)) throw new Error(`Unsupported regular expression flags '${flags}'`);
  const needsBacktracking = backtrackingFeature(pattern);
  if (needsBacktracking) return { problem: `must not use ${needsBacktracking}: ${WHY}, which cannot run them` };
  let re: RE2JS;
  try {
    const bits = [...flags].reduce((sum, flag) => sum | FLAG_BITS[flag], 0);
    re = RE2JS.compile(RE2JS.translateRegExp(pattern), bits);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, '');
    if (/expression too large|invalid repeat count/.test(reason)) return { problem: `is too complex (${reason}): ${WHY}; repeat counts are at most 1000` };
    return { problem: `must be a valid regular expression (${reason})` };
  }
  if (re.programSize() > MAX_PROGRAM_SIZE) {
    return { problem: `is too complex (program size ${re.programSize()}, at most ${MAX_PROGRAM_SIZE}): ${WHY}; use fewer or smaller repeat counts` };
  }
  return { regex: new SafeRegex(re, pattern, flags) };
}

/**
 * JSON Schema `pattern` and `patternProperties` in RE2, as ajv's `code.regExp` option. A
 * pattern RE2 refuses makes the schema fail to compile, with the reason; a string longer
 * than MAX_MATCHED_CHARS fails the pattern (a cut-off prefix could pass an anchored one).
 */
export const ajvRegExp = Object.assign(
  (pattern: string): { test(text: string): boolean; toString(): string } => {
    const compiled = compileSafeRegex(pattern);
    if (!compiled.regex) throw new Error(`pattern ${JSON.stringify(pattern)} ${compiled.problem}`);
    const regex = compiled.regex;
    // ajv shares one compiled pattern among schemas by its `toString()`: it must name the pattern.
    return { test: (text) => text.length <= MAX_MATCHED_CHARS && regex.test(text), toString: () => regex.toString() };
  },
  // What ajv's standalone code would call; the gateway never generates standalone code.
  { code: 'safeRegExp' },
);

/**
 * Backreferences and lookaround, named for the message. RE2 would refuse most of them
 * itself, but in words that do not say why, and JavaScript's `\k<name>` would be
 * translated to the letters `k<name>`, silently changing the pattern's meaning.
 */
function backtrackingFeature(pattern: string): string | null {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<'))) return 'backreferences (\\1, \\k<name>)';
      i++;
    } else if (inClass) {
      if (char === ']') inClass = false;
    } else if (char === '[') {
      inClass = true;
    } else if (char === '(' && /^\(\?<?[=!]/.test(pattern.slice(i, i + 4))) {
      return 'lookahead or lookbehind ((?=, (?!, (?<=, (?<!)';
    }
  }
  return null;
}
