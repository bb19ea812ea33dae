import { CheckInput } from '../../../context/guardrail-records';
import { JsonSchemaCheck } from './json-schema.check';

const input = (...texts: string[]): CheckInput => ({ stage: 'output', texts, model: null, metadata: {} });
const build = (schema: unknown) => {
  const { check, problems } = JsonSchemaCheck.parse({ schema }, 'c');
  if (!check) throw new Error(problems.join('; '));
  return check as JsonSchemaCheck;
};

const PERSON = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } }, required: ['name'] };

describe('JsonSchemaCheck', () => {
  it('passes JSON that matches the schema', () => {
    expect(build(PERSON).run(input('{"name": "Ada", "age": 36}'))).toEqual({ type: 'json_schema', verdict: true, reason: 'matches the schema' });
    expect(build({}).run(input('[1]')).verdict).toBe(true);
  });

  it('fails JSON that does not, naming the field and the rule but not the value', () => {
    expect(build(PERSON).run(input('{"name": "Ada", "age": "thirty-six"}'))).toEqual({
      type: 'json_schema',
      verdict: false,
      reason: 'does not match the schema: /age must be integer',
    });
    expect(build(PERSON).run(input('{"age": 3}')).reason).toBe("does not match the schema: the JSON must have required property 'name'");
  });

  it('fails text that is not JSON', () => {
    expect(build(PERSON).run(input('Sure! Here is the JSON:'))).toEqual({ type: 'json_schema', verdict: false, reason: 'not valid JSON' });
  });

  it('resolves local references and ignores formats and keywords it does not know', () => {
    const check = build({ $defs: { id: { type: 'string', format: 'uuid', 'x-note': 1 } }, $ref: '#/$defs/id' });
    expect(check.run(input('"any string"')).verdict).toBe(true);
    expect(check.run(input('7')).verdict).toBe(false);
  });

  it('lets two checks use the same $id for different schemas', () => {
    const strings = build({ $id: 'https://example.com/s', type: 'string' });
    const numbers = build({ $id: 'https://example.com/s', type: 'number' });
    expect(strings.run(input('"a"')).verdict).toBe(true);
    expect(numbers.run(input('1')).verdict).toBe(true);
    expect(numbers.run(input('"a"')).verdict).toBe(false);
  });

  it.each([
    [{}, 'c.schema must be a JSON object'],
    [{ schema: true }, 'c.schema must be a JSON object'],
    [{ schema: [] }, 'c.schema must be a JSON object'],
    [{ schema: {}, strict: true }, 'c.strict is not a known field'],
  ])('refuses %j', (params, problem) => {
    expect(JsonSchemaCheck.parse(params, 'c')).toEqual({ problems: [problem] });
  });

  it('refuses a schema that is not valid JSON Schema, or refers to what it cannot resolve', () => {
    expect(JsonSchemaCheck.parse({ schema: { type: 'strnig' } }, 'c').problems[0]).toMatch(
      /^c\.schema is not a valid JSON schema: schema is invalid: data\/type/,
    );
    expect(JsonSchemaCheck.parse({ schema: { $ref: 'https://example.com/remote.json' } }, 'c').problems).toEqual([
      "c.schema is not a valid JSON schema: can't resolve reference https://example.com/remote.json from id #",
    ]);
  });

  it("runs the schema's patterns in RE2: a catastrophic one answers at once, one needing backtracking is refused", () => {
    const check = build({ type: 'object', properties: { user: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^x-': { type: 'number' } } });
    const started = performance.now();
    expect(check.run(input(JSON.stringify({ user: `${'a'.repeat(40)}!` }))).verdict).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
    expect(check.run(input('{"user":"aaa"}')).verdict).toBe(true);
    expect(check.run(input('{"x-y":"no"}')).verdict).toBe(false);
    expect(JsonSchemaCheck.parse({ schema: { type: 'string', pattern: '(?=a)' } }, 'c').problems).toEqual([
      'c.schema is not a valid JSON schema: pattern "(?=a)" must not use lookahead or lookbehind ((?=, (?!, (?<=, (?<!): user-supplied patterns run in a linear-time engine (RE2), which cannot run them',
    ]);
  });
});
