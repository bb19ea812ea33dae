import { ParsedCheck, joinedText } from '../guardrail-check';
import { CheckInput, CheckResult, GuardrailCheck } from '../../../context/guardrail-records';
import { oneOf, stringList, unknownFields } from '../../../common/config-fields';

/**
 * `contains`: which of `words` occur in the text. `operator` `any` (the default) passes
 * when at least one occurs, `all` when every one does, `none` when none does.
 *
 * Matching is case-insensitive and by whole words: "forbidden" is found in "Forbidden!"
 * but not in "unforbiddenly", so a short word does not fail every text that happens to
 * contain it. A word boundary is any character that is not a letter, digit or `_` (in any
 * script, so it works beyond ASCII and for words like "c++"). A "word" with spaces is a
 * phrase: its spaces match any run of whitespace.
 */
const OPERATORS = ['any', 'all', 'none'] as const;
type Operator = (typeof OPERATORS)[number];

export class ContainsCheck implements GuardrailCheck {
  readonly type = 'contains';
  private readonly patterns: { word: string; regex: RegExp }[];

  constructor(
    words: string[],
    private readonly operator: Operator,
  ) {
    this.patterns = words.map((word) => ({ word, regex: wholeWord(word) }));
  }

  static parse(params: Record<string, unknown>, path: string): ParsedCheck {
    const problems = unknownFields(params, ['words', 'operator'], path);
    problems.push(...stringList(params.words, `${path}.words`), ...oneOf(params.operator, OPERATORS, `${path}.operator`));
    if (Array.isArray(params.words) && params.words.some((w) => typeof w === 'string' && w.trim() === '')) {
      problems.push(`${path}.words must not hold blank words`);
    }
    if (problems.length > 0) return { problems };
    return { check: new ContainsCheck(params.words as string[], (params.operator ?? 'any') as Operator), problems };
  }

  run(input: CheckInput): CheckResult {
    const text = joinedText(input);
    const found = this.patterns.filter((p) => p.regex.test(text)).map((p) => p.word);
    const missing = this.patterns.filter((p) => !found.includes(p.word)).map((p) => p.word);
    const verdict = this.operator === 'any' ? found.length > 0 : this.operator === 'all' ? missing.length === 0 : found.length === 0;
    const reason =
      this.operator === 'all'
        ? verdict
          ? 'all words found'
          : `missing: ${missing.join(', ')}`
        : found.length > 0
          ? `found: ${found.join(', ')}`
          : 'none of the words found';
    return { type: this.type, verdict, reason };
  }
}

const WORD_CHAR = '[\\p{L}\\p{N}_]';

function wholeWord(word: string): RegExp {
  const escaped = word
    .trim()
    .split(/\s+/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('\\s+');
  return new RegExp(`(?<!${WORD_CHAR})${escaped}(?!${WORD_CHAR})`, 'iu');
}
