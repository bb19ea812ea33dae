import { ParsedCheck, joinedText } from '../guardrail-check';
import { CheckInput, CheckResult, GuardrailCheck } from '../../../context/guardrail-records';
import { unknownFields } from '../../../common/config-fields';

/** `json`: the text is valid JSON (any JSON value; surrounding whitespace allowed). No parameters. */
export class JsonCheck implements GuardrailCheck {
  readonly type = 'json';

  static parse(params: Record<string, unknown>, path: string): ParsedCheck {
    const problems = unknownFields(params, [], path);
    return problems.length > 0 ? { problems } : { check: new JsonCheck(), problems };
  }

  run(input: CheckInput): CheckResult {
    const parsed = parseJson(joinedText(input));
    return parsed.ok ? { type: this.type, verdict: true, reason: 'valid JSON' } : { type: this.type, verdict: false, reason: parsed.reason };
  }
}

/**
 * Shared with `json_schema`. V8's message may quote the start of the text ("Unexpected
 * token 'm', "my secret…" is not valid JSON"), so only the position it names is kept.
 */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const position = /at position (\d+)/.exec((error as Error).message)?.[1];
    return { ok: false, reason: position === undefined ? 'not valid JSON' : `not valid JSON (at position ${position})` };
  }
}
