import type { CheckInput, CheckResult, Guardrail, GuardrailCheck, GuardrailResult } from '../../context/guardrail-records';

/**
 * Runs guardrails on one request's or answer's texts. Every check of every guardrail runs
 * (a 446 lists all that failed, not only the first), all at once, so the waits of webhook
 * checks overlap instead of adding up. A check that throws is a failed check, so a bug
 * fails closed.
 */
export interface GuardrailsOutcome {
  results: GuardrailResult[];
  /** A guardrail with `deny: true` failed: the request stops with 446. */
  denied: boolean;
  /** Some check failed: at least the `x-gateway-guardrails: failed` header. */
  failed: boolean;
  /** The texts after every redacting check, one per input piece; absent when nothing was redacted. */
  redactedTexts?: string[];
}

export async function runGuardrails(guardrails: Guardrail[], input: CheckInput): Promise<GuardrailsOutcome> {
  const outcomes = await Promise.all(guardrails.map((guardrail) => Promise.all(guardrail.checks.map((check) => runCheck(check, input)))));
  const results = guardrails.map((guardrail, i): GuardrailResult => {
    const checks = outcomes[i].map(({ type, verdict, reason }) => ({ type, verdict, reason }));
    return { name: guardrail.name, deny: guardrail.deny, verdict: checks.every((c) => c.verdict), checks };
  });
  const redactions = guardrails.flatMap((guardrail, i) =>
    guardrail.checks.flatMap((check, j) => {
      const texts = outcomes[i][j].redactedTexts;
      return texts ? [{ check, texts }] : [];
    }),
  );
  return {
    results,
    denied: results.some((r) => r.deny && !r.verdict),
    failed: results.some((r) => !r.verdict),
    ...(redactions.length > 0 && { redactedTexts: await mergeRedactions(redactions, input) }),
  };
}

async function runCheck(check: GuardrailCheck, input: CheckInput): Promise<CheckResult> {
  try {
    return await check.run(input);
  } catch (error) {
    return { type: check.type, verdict: false, reason: `check failed: ${(error as Error)?.message ?? String(error)}` };
  }
}

/**
 * Each redacting check saw the original texts, so two of them (say one for emails, one for
 * cards) each return a text with only their own findings replaced. To get both, every
 * redacting check after the first is run again on what the ones before it left: redaction
 * is deterministic and a placeholder is never itself a finding, so this is their union.
 * A second pass costs one more search, and only configs with two redacting checks pay it.
 */
async function mergeRedactions(redactions: { check: GuardrailCheck; texts: string[] }[], input: CheckInput): Promise<string[]> {
  let texts = redactions[0].texts;
  for (const { check } of redactions.slice(1)) {
    const again = await runCheck(check, { ...input, texts });
    texts = again.redactedTexts ?? texts;
  }
  return texts;
}
