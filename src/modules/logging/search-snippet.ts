/**
 * The words a search box's text asks for (`refund -gift "damaged parcel" or x`): the words of
 * its terms and phrases, without the excluded ones and the operators, in lower case.
 */
export function searchWords(q: string): string[] {
  const words = q
    .replace(/(^|\s)-("[^"]*"|\S+)/g, ' ')
    .split(/[\s"]+/)
    .map((word) => word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '').toLowerCase())
    .filter((word) => word && word !== 'or');
  return [...new Set(words)];
}

/** Characters kept before the first match and in all. */
const BEFORE = 60;
const LENGTH = 200;
/** Strings looked at, at most: a body of thousands of messages costs no more than this. */
const MAX_STRINGS = 2_000;

export interface SearchSnippet {
  /** Where the text is: the request's body or the answer. */
  in: 'request' | 'response';
  text: string;
  /** Start and end (exclusive) of each word found in `text`, in order. */
  highlights: [number, number][];
}

const escape = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The first place a row's bodies hold one of the words at the beginning of a word (as the
 * search matches them: "refund" in "refunds"), cut to a short text around it with every word
 * found in it marked; null when none does (the row matched on a word PostgreSQL reads
 * otherwise, or its bodies are not kept).
 */
export function searchSnippet(requestBody: unknown, responseBody: unknown, words: string[]): SearchSnippet | null {
  if (!words.length) return null;
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.map(escape).join('|')})`, 'giu');
  let seen = 0;
  for (const [place, body] of [
    ['request', requestBody],
    ['response', responseBody],
  ] as const) {
    for (const text of strings(body)) {
      if (++seen > MAX_STRINGS) return null;
      pattern.lastIndex = 0;
      const first = pattern.exec(text);
      if (!first) continue;
      const start = Math.max(0, first.index - BEFORE);
      const cut = text.slice(start, start + LENGTH);
      const highlights: [number, number][] = [];
      pattern.lastIndex = 0;
      for (let match = pattern.exec(cut); match; match = pattern.exec(cut)) highlights.push([match.index, match.index + match[0].length]);
      const prefix = start > 0 ? '…' : '';
      const suffix = start + LENGTH < text.length ? '…' : '';
      return { in: place, text: prefix + cut + suffix, highlights: highlights.map(([s, e]) => [s + prefix.length, e + prefix.length]) };
    }
  }
  return null;
}

/** The string values of a JSON value, depth first, in order. */
function* strings(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const item of value) yield* strings(item);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) yield* strings(item);
}
