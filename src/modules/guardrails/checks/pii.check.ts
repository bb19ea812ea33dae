import { ParsedCheck } from '../guardrail-check';
import { CheckInput, CheckResult, GuardrailCheck } from '../../../context/guardrail-records';
import { oneOf, unknownFields } from '../../../common/config-fields';
import { PII_KINDS, PiiFinding, PiiKind, findPii, redactPii } from './pii-detectors';

/**
 * `pii`: personal data of the listed `kinds` (all of them when `kinds` is absent).
 * `action: "deny"` (the default) fails when any is found; `action: "redact"` passes and
 * returns the texts with each finding replaced by `[REDACTED_EMAIL]`, `[REDACTED_PHONE]`, …
 * Each piece is searched on its own, so redaction gives back one text per piece and the
 * caller can put each where it came from. Reasons give counts, never the data.
 */
const ACTIONS = ['deny', 'redact'] as const;
type Action = (typeof ACTIONS)[number];

export class PiiCheck implements GuardrailCheck {
  readonly type = 'pii';

  constructor(
    private readonly kinds: ReadonlySet<PiiKind>,
    private readonly action: Action,
  ) {}

  static parse(params: Record<string, unknown>, path: string): ParsedCheck {
    const problems = unknownFields(params, ['kinds', 'action'], path);
    const { kinds = [...PII_KINDS], action = 'deny' } = params;
    if (!Array.isArray(kinds) || kinds.length === 0) problems.push(`${path}.kinds must be a non-empty array`);
    else {
      kinds.forEach((kind, i) => {
        if (!PII_KINDS.includes(kind)) problems.push(`${path}.kinds[${i}] must be one of ${PII_KINDS.join(', ')}`);
      });
    }
    problems.push(...oneOf(action, ACTIONS, `${path}.action`));
    if (problems.length > 0) return { problems };
    return { check: new PiiCheck(new Set(kinds as PiiKind[]), action as Action), problems };
  }

  run(input: CheckInput): CheckResult {
    const findings = input.texts.map((text) => findPii(text, this.kinds));
    const found = describe(findings.flat());
    if (this.action === 'deny') return { type: this.type, verdict: found === '', reason: found === '' ? 'no PII found' : `found ${found}` };
    if (found === '') return { type: this.type, verdict: true, reason: 'no PII found' };
    return { type: this.type, verdict: true, reason: `redacted ${found}`, redactedTexts: input.texts.map((text, i) => redactPii(text, findings[i])) };
  }
}

/** "2 email, 1 card", in the order of PII_KINDS; '' when nothing was found. */
function describe(findings: PiiFinding[]): string {
  return PII_KINDS.map((kind) => [kind, findings.filter((f) => f.kind === kind).length] as const)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
}
