import { ParsedCheck, joinedText } from '../guardrail-check';
import { CheckInput, CheckResult, GuardrailCheck } from '../../../context/guardrail-records';
import { isInt, unknownFields } from '../../../common/config-fields';

/**
 * `word_count` and `char_count`: the text's length must lie within `min` and `max` (both
 * inclusive, at least one given). The two checks differ only in what they count, so they
 * share this file. Words are runs of non-whitespace; characters are Unicode code points
 * (an emoji is one), counted over the pieces joined with "\n", so the joins count too.
 */
const MAX_LIMIT = 100_000_000;
// A code point beyond U+FFFF is two UTF-16 units: count it once without copying the text.
const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

interface Unit {
  type: 'word_count' | 'char_count';
  name: string;
  count(text: string): number;
}

const WORDS: Unit = { type: 'word_count', name: 'words', count: (text) => text.match(/\S+/g)?.length ?? 0 };
const CHARS: Unit = { type: 'char_count', name: 'characters', count: (text) => text.length - (text.match(SURROGATE_PAIR)?.length ?? 0) };

export class CountCheck implements GuardrailCheck {
  readonly type: Unit['type'];

  private constructor(
    private readonly unit: Unit,
    private readonly min: number | undefined,
    private readonly max: number | undefined,
  ) {
    this.type = unit.type;
  }

  static parseWordCount(params: Record<string, unknown>, path: string): ParsedCheck {
    return CountCheck.parse(WORDS, params, path);
  }

  static parseCharCount(params: Record<string, unknown>, path: string): ParsedCheck {
    return CountCheck.parse(CHARS, params, path);
  }

  private static parse(unit: Unit, params: Record<string, unknown>, path: string): ParsedCheck {
    const problems = unknownFields(params, ['min', 'max'], path);
    const { min, max } = params;
    for (const [field, value] of [
      ['min', min],
      ['max', max],
    ] as const) {
      if (value !== undefined && !isInt(value, 0, MAX_LIMIT)) problems.push(`${path}.${field} must be an integer from 0 to ${MAX_LIMIT}`);
    }
    if (min === undefined && max === undefined) problems.push(`${path} needs min or max`);
    if (isInt(min, 0, MAX_LIMIT) && isInt(max, 0, MAX_LIMIT) && min > max) problems.push(`${path}.min must not be greater than max`);
    if (problems.length > 0) return { problems };
    return { check: new CountCheck(unit, min as number | undefined, max as number | undefined), problems };
  }

  run(input: CheckInput): CheckResult {
    const n = this.unit.count(joinedText(input));
    const tooFew = this.min !== undefined && n < this.min;
    const tooMany = this.max !== undefined && n > this.max;
    const reason = tooFew
      ? `${n} ${this.unit.name}, fewer than ${this.min}`
      : tooMany
        ? `${n} ${this.unit.name}, more than ${this.max}`
        : `${n} ${this.unit.name}`;
    return { type: this.type, verdict: !tooFew && !tooMany, reason };
  }
}
