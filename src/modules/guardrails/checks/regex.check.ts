import { ParsedCheck, joinedText } from '../guardrail-check';
import { CheckInput, CheckResult, GuardrailCheck } from '../../../context/guardrail-records';
import { oneOf, unknownFields } from '../../../common/config-fields';
import { compileSafeRegex, SAFE_REGEX_FLAGS, SafeRegex } from '../../../common/regex/safe-regex';

/**
 * `regex`: the text must (`must: "match"`, the default) or must not (`"not_match"`) match
 * `pattern`. The pattern runs in RE2 (`safe-regex.ts`): linear time, so a catastrophic
 * pattern (`(a+)+$`) cannot stall the event loop; one that needs backtracking
 * (backreferences, lookaround) is refused when the config is validated. The match runs
 * on at most the first `MAX_MATCHED_CHARS` (100,000) characters of the text.
 */
export const MAX_PATTERN_LENGTH = 500;
const MUSTS = ['match', 'not_match'] as const;
type Must = (typeof MUSTS)[number];

export class RegexCheck implements GuardrailCheck {
  readonly type = 'regex';

  constructor(
    private readonly regex: SafeRegex,
    private readonly must: Must,
  ) {}

  static parse(params: Record<string, unknown>, path: string): ParsedCheck {
    const problems = unknownFields(params, ['pattern', 'flags', 'must'], path);
    const { pattern, flags = '', must = 'match' } = params;
    problems.push(...oneOf(must, MUSTS, `${path}.must`));
    // `g` and `y` would make a match remember where it stopped between requests.
    if (typeof flags !== 'string' || !SAFE_REGEX_FLAGS.test(flags)) problems.push(`${path}.flags must be a string of the flags i, m, s, u`);
    if (typeof pattern !== 'string' || pattern === '' || pattern.length > MAX_PATTERN_LENGTH) {
      problems.push(`${path}.pattern must be a non-empty string of at most ${MAX_PATTERN_LENGTH} characters`);
    }
    if (problems.length > 0) return { problems };
    const compiled = compileSafeRegex(pattern as string, flags as string);
    if (!compiled.regex) return { problems: [`${path}.pattern ${compiled.problem}`] };
    return { check: new RegexCheck(compiled.regex, must as Must), problems };
  }

  run(input: CheckInput): CheckResult {
    const matches = this.regex.test(joinedText(input));
    const verdict = matches === (this.must === 'match');
    // The pattern comes from the config; the matched text is never quoted (it may be the secret).
    return { type: this.type, verdict, reason: `text ${matches ? 'matches' : 'does not match'} ${this.regex}` };
  }
}
