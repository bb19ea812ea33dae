import { CheckInput, CheckResult, GuardrailCheck, ParsedCheck, joinedText } from '../guardrail-check';
import { oneOf, unknownFields } from '../../../common/config-fields';

/**
 * `regex`: the text must (`must: "match"`, the default) or must not (`"not_match"`) match
 * `pattern`. Node has no timeout for a regular expression, and a slow one blocks the
 * event loop for every request. So the simple guards: patterns longer than 500 characters
 * are refused, and the match runs on at most the first 100,000 characters of the text.
 * They bound an ordinary pattern's cost; they do not make a catastrophic one (`(a+)+$`)
 * safe, which needs a linear-time engine such as RE2. Configs are written by the gateway's
 * own key holders.
 */
export const MAX_PATTERN_LENGTH = 500;
export const MAX_MATCHED_CHARS = 100_000;
const MUSTS = ['match', 'not_match'] as const;
type Must = (typeof MUSTS)[number];
// `g` and `y` would make `test` remember where it stopped between requests.
const FLAGS = /^[imsu]*$/;

export class RegexCheck implements GuardrailCheck {
  readonly type = 'regex';

  constructor(
    private readonly regex: RegExp,
    private readonly must: Must,
  ) {}

  static parse(params: Record<string, unknown>, path: string): ParsedCheck {
    const problems = unknownFields(params, ['pattern', 'flags', 'must'], path);
    const { pattern, flags = '', must = 'match' } = params;
    problems.push(...oneOf(must, MUSTS, `${path}.must`));
    if (typeof flags !== 'string' || !FLAGS.test(flags)) problems.push(`${path}.flags must be a string of the flags i, m, s, u`);
    if (typeof pattern !== 'string' || pattern === '' || pattern.length > MAX_PATTERN_LENGTH) {
      problems.push(`${path}.pattern must be a non-empty string of at most ${MAX_PATTERN_LENGTH} characters`);
    }
    if (problems.length > 0) return { problems };
    try {
      return { check: new RegexCheck(new RegExp(pattern as string, flags as string), must as Must), problems };
    } catch {
      return { problems: [`${path}.pattern must be a valid regular expression`] };
    }
  }

  run(input: CheckInput): CheckResult {
    const matches = this.regex.test(joinedText(input).slice(0, MAX_MATCHED_CHARS));
    const verdict = matches === (this.must === 'match');
    // The pattern comes from the config; the matched text is never quoted (it may be the secret).
    return { type: this.type, verdict, reason: `text ${matches ? 'matches' : 'does not match'} ${this.regex}` };
  }
}
