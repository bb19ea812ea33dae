import { PostJson } from './guardrail-check';
import { CheckInput } from '../../context/guardrail-records';
import { CHECK_TYPES, buildGuardrails, validateGuardrails } from './guardrail-registry';

const input: CheckInput = { stage: 'input', texts: ['hello'], model: 'gpt-4o', metadata: {} };

describe('validateGuardrails', () => {
  it('accepts the example of the contract', () => {
    const input_guardrails = [
      {
        name: 'no-secrets',
        deny: true,
        checks: [
          { type: 'regex', pattern: 'sk-[A-Za-z0-9]+', must: 'not_match' },
          { type: 'contains', words: ['forbidden'], operator: 'none' },
        ],
      },
    ];
    const output_guardrails = [{ deny: false, checks: [{ type: 'json_schema', schema: {} }] }];
    expect(validateGuardrails(input_guardrails, 'config.input_guardrails')).toEqual([]);
    expect(validateGuardrails(output_guardrails, 'config.output_guardrails')).toEqual([]);
  });

  it('accepts one check of every type', () => {
    const checks = [
      { type: 'regex', pattern: 'a' },
      { type: 'contains', words: ['a'] },
      { type: 'word_count', max: 10 },
      { type: 'char_count', min: 1 },
      { type: 'json' },
      { type: 'json_schema', schema: { type: 'object' } },
      { type: 'models', allow: ['gpt-4o'] },
      { type: 'pii', kinds: ['email'], action: 'redact' },
      { type: 'webhook', url: 'https://hooks.example.com' },
    ];
    expect(checks.map((c) => c.type).sort()).toEqual([...CHECK_TYPES].sort());
    expect(validateGuardrails([{ checks }], 'g')).toEqual([]);
  });

  it('accepts an empty list', () => {
    expect(validateGuardrails([], 'g')).toEqual([]);
  });

  it('names the exact field of a check parameter', () => {
    const value = [
      { checks: [{ type: 'json' }] },
      {
        checks: [
          { type: 'regex', pattern: 'a' },
          { type: 'regex', pattern: '(' },
        ],
      },
    ];
    expect(validateGuardrails(value, 'config.input_guardrails')).toEqual([
      'config.input_guardrails[1].checks[1].pattern must be a valid regular expression (missing closing ): `(`)',
    ]);
  });

  it.each([
    [{}, ['g must be an array']],
    [['x'], ['g[0] must be an object']],
    [[{ checks: [{ type: 'json' }], stop: true }], ['g[0].stop is not a known field']],
    [[{ name: '', checks: [{ type: 'json' }] }], ['g[0].name must be a non-empty string']],
    [[{ deny: 'yes', checks: [{ type: 'json' }] }], ['g[0].deny must be a boolean']],
    [[{}], ['g[0].checks must be a non-empty array of at most 20 checks']],
    [[{ checks: [] }], ['g[0].checks must be a non-empty array of at most 20 checks']],
    [[{ checks: new Array(21).fill({ type: 'json' }) }], ['g[0].checks must be a non-empty array of at most 20 checks']],
    [[{ checks: [null] }], ['g[0].checks[0] must be an object']],
    [[{ checks: [{ pattern: 'a' }] }], [`g[0].checks[0].type must be one of ${CHECK_TYPES.join(', ')}`]],
    [[{ checks: [{ type: 'toString' }] }], [`g[0].checks[0].type must be one of ${CHECK_TYPES.join(', ')}`]],
    [
      [
        { name: 'a', checks: [{ type: 'json' }] },
        { name: 'a', checks: [{ type: 'json' }] },
      ],
      ["g has two guardrails named 'a'"],
    ],
    [[{ checks: [{ type: 'json' }] }, { name: 'guardrail-0', checks: [{ type: 'json' }] }], ["g has two guardrails named 'guardrail-0'"]],
  ])('refuses %j', (value, problems) => {
    expect(validateGuardrails(value, 'g')).toEqual(problems);
  });

  it('lists every problem at once', () => {
    const value = [{ deny: 1, checks: [{ type: 'word_count' }, { type: 'pii', action: 'mask' }] }];
    expect(validateGuardrails(value, 'g')).toEqual([
      'g[0].deny must be a boolean',
      'g[0].checks[0] needs min or max',
      'g[0].checks[1].action must be one of deny, redact',
    ]);
  });
});

describe('buildGuardrails', () => {
  it('builds names, deny flags and checks, with the defaults', () => {
    const guardrails = buildGuardrails([
      { checks: [{ type: 'json' }] },
      {
        name: 'strict',
        deny: true,
        checks: [
          { type: 'regex', pattern: 'a' },
          { type: 'models', deny: ['x'] },
        ],
      },
    ]);
    expect(guardrails.map((g) => ({ name: g.name, deny: g.deny, types: g.checks.map((c) => c.type) }))).toEqual([
      { name: 'guardrail-0', deny: false, types: ['json'] },
      { name: 'strict', deny: true, types: ['regex', 'models'] },
    ]);
  });

  it('throws, listing the problems, for a list that is not valid', () => {
    expect(() => buildGuardrails([{ checks: [] }])).toThrow('invalid guardrails: guardrails[0].checks must be a non-empty array of at most 20 checks');
  });

  it('gives webhook checks the postJson it was given', async () => {
    const postJson: PostJson = jest.fn().mockResolvedValue({ status: 200, json: { verdict: true } });
    const [guardrail] = buildGuardrails([{ checks: [{ type: 'webhook', url: 'https://hooks.example.com' }] }], { postJson });
    expect(await guardrail.checks[0].run(input)).toEqual({ type: 'webhook', verdict: true, reason: 'webhook answered verdict true' });
    expect(postJson).toHaveBeenCalledTimes(1);
  });

  it('without a postJson, webhook checks fail closed', async () => {
    const [guardrail] = buildGuardrails([{ checks: [{ type: 'webhook', url: 'https://hooks.example.com' }] }]);
    expect(await guardrail.checks[0].run(input)).toEqual({
      type: 'webhook',
      verdict: false,
      reason: 'webhook call failed: no postJson was given to buildGuardrails',
    });
  });
});
