import { ParsedCheck } from '../guardrail-check';
import { CheckInput, CheckResult, GuardrailCheck } from '../../../context/guardrail-records';
import { stringList, unknownFields } from '../../../common/config-fields';

/**
 * `models`: a verdict on the model the request names, not on text. `allow` lists the only
 * models that pass; `deny` lists models that fail. Names are compared exactly (case
 * included), as the caller passes them. A request that names no model fails an `allow`
 * list (it cannot be shown to be allowed) and passes a `deny` list.
 */
export class ModelsCheck implements GuardrailCheck {
  readonly type = 'models';

  constructor(
    private readonly allow: Set<string> | undefined,
    private readonly deny: Set<string>,
  ) {}

  static parse(params: Record<string, unknown>, path: string): ParsedCheck {
    const problems = unknownFields(params, ['allow', 'deny'], path);
    const { allow, deny } = params;
    if (allow === undefined && deny === undefined) problems.push(`${path} needs allow or deny`);
    if (allow !== undefined) problems.push(...stringList(allow, `${path}.allow`));
    if (deny !== undefined) problems.push(...stringList(deny, `${path}.deny`));
    if (problems.length > 0) return { problems };
    return { check: new ModelsCheck(allow === undefined ? undefined : new Set(allow as string[]), new Set((deny as string[] | undefined) ?? [])), problems };
  }

  run(input: CheckInput): CheckResult {
    const model = input.model;
    const fail = (reason: string): CheckResult => ({ type: this.type, verdict: false, reason });
    if (model !== null && this.deny.has(model)) return fail(`model '${model}' is denied`);
    if (this.allow && (model === null || !this.allow.has(model)))
      return fail(model === null ? 'the request names no model' : `model '${model}' is not allowed`);
    return { type: this.type, verdict: true, reason: model === null ? 'the request names no model' : `model '${model}' is allowed` };
  }
}
