/**
 * What every guardrail check implements (CONTRACT section 5, "Guardrails"). A check looks
 * at the text pieces of a request (each message's text content) or of an answer and gives
 * a verdict; it never throws for a verdict (the runner turns a thrown error into a failed
 * check all the same, so a bug fails closed).
 */
export interface CheckInput {
  stage: 'input' | 'output';
  /** The text pieces; checks that look at "the text" look at them joined with "\n". */
  texts: string[];
  /** The model the request names, null when it names none. */
  model: string | null;
  metadata: Record<string, string>;
}

export interface CheckResult {
  type: string;
  verdict: boolean;
  /** Said to the caller and stored with the log: never quote the text that was found. */
  reason: string;
  /** Only from a redacting check that changed something: one text per piece of `texts`. */
  redactedTexts?: string[];
}

export interface GuardrailCheck {
  readonly type: string;
  run(input: CheckInput): CheckResult | Promise<CheckResult>;
}

/** A guardrail of a config: checks that all must pass, and whether a failure denies the request. */
export interface Guardrail {
  name: string;
  deny: boolean;
  checks: GuardrailCheck[];
}

/** What one check said. */
export interface CheckOutcome {
  type: string;
  verdict: boolean;
  reason: string;
}

export interface GuardrailResult {
  name: string;
  deny: boolean;
  /** True when every check passed. */
  verdict: boolean;
  checks: CheckOutcome[];
}
