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

/**
 * How the webhook check reaches its hook. The gateway passes one that goes through its
 * SSRF host policy, so no check opens a connection of its own. A timeout or a network
 * failure rejects; any HTTP status resolves.
 */
export type PostJson = (url: string, headers: Record<string, string>, body: unknown, timeoutMs: number) => Promise<{ status: number; json: unknown }>;

/** What checks need from outside the library. */
export interface CheckDependencies {
  postJson: PostJson;
}

/** A check's parameters read from the config: the check, or the problems naming each bad field. */
export interface ParsedCheck {
  check?: GuardrailCheck;
  problems: string[];
}

/** `params` are the check's fields besides `type`; `path` is where the check sits in the config. */
export type CheckParser = (params: Record<string, unknown>, path: string, deps: CheckDependencies) => ParsedCheck;

/** The text the whole-text checks look at. */
export const joinedText = (input: CheckInput): string => input.texts.join('\n');
