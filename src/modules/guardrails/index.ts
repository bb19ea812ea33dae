/** The guardrails library: validate a config's guardrail lists, build them once, run them per request. */
export type { CheckInput, CheckResult, GuardrailCheck, PostJson } from './guardrail-check';
export type { Guardrail } from './guardrail-registry';
export { CHECK_TYPES, buildGuardrails, validateGuardrails } from './guardrail-registry';
export type { CheckOutcome, GuardrailResult, GuardrailsOutcome } from './guardrail-runner';
export { runGuardrails } from './guardrail-runner';
