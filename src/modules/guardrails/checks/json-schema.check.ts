/**
 * `json_schema`: the text, parsed as JSON, validates against `schema` (JSON Schema
 * draft-07, the dialect most schemas in the wild declare; `$defs` works too).
 *
 * Why ajv (v8): it is the reference JSON Schema validator for JavaScript, maintained,
 * supports Node 20, and compiles a schema once into a function, so each answer is checked
 * without walking the schema again. Writing a validator by hand would mean re-implementing
 * `$ref`, `allOf`/`anyOf`/`oneOf`, formats and their edge cases.
 *
 * Like the `regex` check, a schema's `pattern` keywords run in RE2 (`ajvRegExp`): linear
 * time, and a pattern that needs backtracking makes the schema a 400 at validation.
 */
import Ajv, { ValidateFunction } from 'ajv';
import { ParsedCheck, joinedText } from '../guardrail-check';
import { CheckInput, CheckResult, GuardrailCheck } from '../../../context/guardrail-records';
import { isObject, unknownFields } from '../../../common/config-fields';
import { ajvRegExp } from '../../../common/regex/safe-regex';
import { parseJson } from './json.check';

// One instance for every check: building an Ajv costs ~15 ms, compiling a schema on it
// well under one. `strict: false` so that keywords and formats ajv does not know (e.g.
// `format: "email"` without ajv-formats, `description`-like annotations) are ignored as
// the JSON Schema spec says, not refused; `logger: false` keeps those notes off the console.
const ajv = new Ajv({ strict: false, logger: false, code: { regExp: ajvRegExp } });

export class JsonSchemaCheck implements GuardrailCheck {
  readonly type = 'json_schema';

  constructor(private readonly validate: ValidateFunction) {}

  static parse(params: Record<string, unknown>, path: string): ParsedCheck {
    const problems = unknownFields(params, ['schema'], path);
    if (!isObject(params.schema)) problems.push(`${path}.schema must be a JSON object`);
    if (problems.length > 0) return { problems };
    try {
      return { check: new JsonSchemaCheck(compile(params.schema as Record<string, unknown>)), problems };
    } catch (error) {
      return { problems: [`${path}.schema is not a valid JSON schema: ${(error as Error).message}`] };
    }
  }

  run(input: CheckInput): CheckResult {
    const parsed = parseJson(joinedText(input));
    if (!parsed.ok) return { type: this.type, verdict: false, reason: parsed.reason };
    if (this.validate(parsed.value)) return { type: this.type, verdict: true, reason: 'matches the schema' };
    // ajv stops at the first error; its message names the rule, never the value.
    const error = this.validate.errors?.[0];
    const where = error?.instancePath || 'the JSON';
    return { type: this.type, verdict: false, reason: `does not match the schema: ${where} ${error?.message ?? 'is invalid'}` };
  }
}

/**
 * The compiled function keeps working once the schema is removed from the instance; removing
 * it keeps configs that come and go from piling up in ajv's cache, and lets two configs use
 * the same `$id` for different schemas.
 */
function compile(schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}
