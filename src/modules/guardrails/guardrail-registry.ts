import { ContainsCheck } from './checks/contains.check';
import { CountCheck } from './checks/count.check';
import { JsonSchemaCheck } from './checks/json-schema.check';
import { JsonCheck } from './checks/json.check';
import { ModelsCheck } from './checks/models.check';
import { PiiCheck } from './checks/pii.check';
import { RegexCheck } from './checks/regex.check';
import { WebhookCheck } from './checks/webhook.check';
import { CheckDependencies, CheckParser, PostJson } from './guardrail-check';
import { isObject, unknownFields } from '../../common/config-fields';
import type { Guardrail } from '../../context/guardrail-records';

/**
 * The config's `input_guardrails` / `output_guardrails` lists: validation (every problem,
 * each naming its field) and construction. Adding a check type is one file under
 * `checks/` and one line in CHECK_PARSERS.
 */
export const MAX_CHECKS = 20;

const CHECK_PARSERS: Record<string, CheckParser> = {
  regex: RegexCheck.parse,
  contains: ContainsCheck.parse,
  word_count: CountCheck.parseWordCount,
  char_count: CountCheck.parseCharCount,
  json: JsonCheck.parse,
  json_schema: JsonSchemaCheck.parse,
  models: ModelsCheck.parse,
  pii: PiiCheck.parse,
  webhook: WebhookCheck.parse,
};
export const CHECK_TYPES = Object.keys(CHECK_PARSERS);

/**
 * Stands in when no `postJson` was given. Validation never runs a check; a guardrail list
 * built without one fails its webhook checks (closed) with this as the reason.
 */
const noPostJson: PostJson = () => Promise.reject(new Error('no postJson was given to buildGuardrails'));

/** Problems of a guardrail list at `path` (e.g. `config.input_guardrails`); empty when valid. */
export function validateGuardrails(value: unknown, path: string): string[] {
  return parseGuardrails(value, path, { postJson: noPostJson }).problems;
}

/** The guardrails of a list `validateGuardrails` accepted. Throws, listing the problems, for one it would not. */
export function buildGuardrails(value: unknown, deps: Partial<CheckDependencies> = {}): Guardrail[] {
  const { guardrails, problems } = parseGuardrails(value, 'guardrails', { postJson: deps.postJson ?? noPostJson });
  if (problems.length > 0) throw new Error(`invalid guardrails: ${problems.join('; ')}`);
  return guardrails;
}

function parseGuardrails(value: unknown, path: string, deps: CheckDependencies): { guardrails: Guardrail[]; problems: string[] } {
  if (!Array.isArray(value)) return { guardrails: [], problems: [`${path} must be an array`] };
  const problems: string[] = [];
  const guardrails = value.map((item, i) => {
    const parsed = parseGuardrail(item, i, `${path}[${i}]`, deps);
    problems.push(...parsed.problems);
    return parsed.guardrail;
  });
  const names = guardrails.map((g) => g.name);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  // Results are reported by name: two alike could not be told apart in a 446 or the log.
  if (duplicate !== undefined) problems.push(`${path} has two guardrails named '${duplicate}'`);
  return { guardrails, problems };
}

function parseGuardrail(item: unknown, index: number, path: string, deps: CheckDependencies): { guardrail: Guardrail; problems: string[] } {
  const guardrail: Guardrail = { name: `guardrail-${index}`, deny: false, checks: [] };
  if (!isObject(item)) return { guardrail, problems: [`${path} must be an object`] };
  const problems = unknownFields(item, ['name', 'deny', 'checks'], path);
  const { name, deny, checks } = item;
  if (name !== undefined && (typeof name !== 'string' || name === '')) problems.push(`${path}.name must be a non-empty string`);
  else if (name !== undefined) guardrail.name = name;
  if (deny !== undefined && typeof deny !== 'boolean') problems.push(`${path}.deny must be a boolean`);
  else guardrail.deny = deny ?? false;
  if (!Array.isArray(checks) || checks.length === 0 || checks.length > MAX_CHECKS) {
    problems.push(`${path}.checks must be a non-empty array of at most ${MAX_CHECKS} checks`);
    return { guardrail, problems };
  }
  for (const [i, check] of checks.entries()) {
    const at = `${path}.checks[${i}]`;
    if (!isObject(check)) {
      problems.push(`${at} must be an object`);
      continue;
    }
    const { type, ...params } = check;
    if (typeof type !== 'string' || !Object.hasOwn(CHECK_PARSERS, type)) {
      problems.push(`${at}.type must be one of ${CHECK_TYPES.join(', ')}`);
      continue;
    }
    const parsed = CHECK_PARSERS[type](params, at, deps);
    problems.push(...parsed.problems);
    if (parsed.check) guardrail.checks.push(parsed.check);
  }
  return { guardrail, problems };
}
