import { GatewayError } from '../../common/errors/gateway-error';
import type { Guardrail, GuardrailResult } from '../../context/guardrail-records';
import { runGuardrails } from './guardrail-runner';
import type { TextSlot } from './operation-texts';

/** The status CONTRACT section 5 gives a request a guardrail denied. */
export const GUARDRAIL_DENIED_STATUS = 446;

/**
 * Runs one stage's guardrails (`input` on the request before it is sent, `output` on the
 * answer) over the operation's text slots: redactions are written back into the slots,
 * the results go on the attempt's record for the log, a failed check marks the response
 * (`x-gateway-guardrails: failed`), and a failed guardrail with `deny: true` throws the 446.
 */
export async function enforceGuardrails(
  stage: 'input' | 'output',
  guardrails: Guardrail[],
  slots: TextSlot[],
  request: { model: string | null; metadata: Record<string, string> },
  record: GuardrailRecord,
): Promise<GuardrailResult[]> {
  const outcome = await runGuardrails(guardrails, { stage, texts: slots.map((slot) => slot.text), model: request.model, metadata: request.metadata });
  outcome.redactedTexts?.forEach((text, i) => {
    if (text !== slots[i].text) slots[i].set(text);
  });
  record.guardrails = { ...record.guardrails, [stage]: outcome.results };
  if (outcome.failed) record.guardrailsFailed = true;
  if (outcome.denied) throw guardrailDenied(stage, outcome.results);
  return outcome.results;
}

/** Where a stage's results are kept for the log and the response header (an attempt's record). */
export interface GuardrailRecord {
  guardrails: { input?: GuardrailResult[]; output?: GuardrailResult[] } | null;
  guardrailsFailed: boolean;
}

/** The 446: which guardrails failed, each with every check's verdict and reason. */
export function guardrailDenied(stage: 'input' | 'output', results: GuardrailResult[]): GatewayError {
  const failed = results.filter((result) => !result.verdict);
  const names = failed.filter((result) => result.deny).map((result) => result.name);
  const what = stage === 'input' ? 'The request' : 'The answer';
  return new GatewayError(
    GUARDRAIL_DENIED_STATUS,
    'guardrail_denied',
    `${what} was denied by guardrail ${names.join(', ')}`,
    'guardrail_denied',
    null,
    {},
    {
      guardrails: failed.map(({ name, checks }) => ({ name, checks })),
    },
  );
}
