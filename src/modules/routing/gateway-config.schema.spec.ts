import { validateGatewayConfig } from './gateway-config.schema';

const providers = ['openai', 'groq'];

describe('validateGatewayConfig', () => {
  it('accepts the full example of CONTRACT section 5', () => {
    const config = {
      strategy: {
        mode: 'conditional',
        on_status_codes: [429, 500],
        conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'smart' }],
        default: 'cheap',
      },
      retry: { attempts: 3, on_status_codes: [429, 503] },
      request_timeout: 30000,
      cache: { mode: 'simple', max_age: 3600 },
      targets: [
        { name: 'smart', provider: 'openai', api_key: 'sk-x', override_params: { model: 'gpt-4o' } },
        { name: 'cheap', virtual_key: 'groq-prod', weight: 0.5 },
      ],
    };
    expect(validateGatewayConfig(config, providers)).toEqual([]);
  });

  it('refuses header-bound fields a header cannot carry, and hosts with user:password@, at any level', () => {
    const rule = 'must not contain line breaks, other control characters or characters outside Latin-1 (it is sent as an HTTP header)';
    const config = {
      provider_organization: 'org\r\nX-Injected: 1',
      targets: [{ provider: 'openai', api_key: 'sk-\u4e2d', provider_project: 'p\u0000', custom_host: 'https://u:p@h.example/v1' }],
    };
    expect(validateGatewayConfig(config, providers)).toEqual([
      `config.provider_organization ${rule}`,
      'config.targets[0].custom_host must not carry user:password@ (the gateway does not send it)',
      `config.targets[0].provider_project ${rule}`,
      `config.targets[0].api_key ${rule}`,
    ]);
    // Latin-1, a service account's JSON (never a header) and the hint an admin read showed are fine.
    const fine = {
      provider: 'openai',
      provider_organization: 'soci\u00e9t\u00e9',
      targets: [
        { provider: 'openai', api_key: '{\n "type": "service_account"\n}' },
        { provider: 'openai', api_key: 'sk-\u2026abcd' },
      ],
    };
    expect(validateGatewayConfig(fine, providers)).toEqual([]);
  });

  it('names the path of every bad field', () => {
    const problems = validateGatewayConfig(
      { retry: { attempts: 11 }, targets: [{ provider: 'nope' }, { request_timeout: -1, colour: 'red' }], cache: { mode: 'fuzzy' } },
      providers,
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'config.retry.attempts must be an integer from 0 to 10',
        "config.targets[0].provider 'nope' is not a known provider (openai, groq)",
        'config.targets[1].request_timeout must be an integer number of milliseconds from 1 to 3600000',
        'config.targets[1].colour is not a config field',
        "config.cache.mode must be 'simple' (semantic caching is not supported)",
      ]),
    );
    expect(problems).toHaveLength(5);
  });

  it('strict_params is a boolean at any level', () => {
    expect(validateGatewayConfig({ provider: 'openai', strict_params: true }, providers)).toEqual([]);
    expect(validateGatewayConfig({ strict_params: false, targets: [{ provider: 'openai', strict_params: 'yes' }] }, providers)).toEqual([
      'config.targets[0].strict_params must be a boolean',
    ]);
  });

  it('checks strategies against their targets', () => {
    expect(validateGatewayConfig({ strategy: { mode: 'fallback' } }, providers)).toEqual(["config.strategy.mode 'fallback' needs targets"]);
    expect(validateGatewayConfig({ strategy: { mode: 'roundrobin' } }, providers)).toEqual([
      'config.strategy.mode must be one of single, fallback, loadbalance, conditional',
    ]);
    const conditional = {
      strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'ghost' }], default: 'a' },
      targets: [{ name: 'a', provider: 'openai' }],
    };
    expect(validateGatewayConfig(conditional, providers)).toEqual(['config.strategy.conditions[0].then must name a target']);
  });

  it('checks condition queries: fields, operators and operands', () => {
    const config = (query: Record<string, unknown>) => ({
      strategy: { mode: 'conditional', conditions: [{ query, then: 'a' }] },
      targets: [{ name: 'a', provider: 'openai' }],
    });
    expect(validateGatewayConfig(config({ 'metadata.tier': { $in: ['a'] }, $or: [{ 'params.n': { $gt: 1 } }] }), providers)).toEqual([]);
    expect(validateGatewayConfig(config({ 'metadata.tier': { $foo: 1 } }), providers)).toEqual([
      'config.strategy.conditions[0].query.metadata.tier.$foo is not an operator ($eq $ne $in $nin $gt $gte $lt $lte $regex)',
    ]);
    expect(validateGatewayConfig(config({ tier: 'pro' }), providers)).toEqual([
      'config.strategy.conditions[0].query.tier: query fields must start with metadata. or params.',
    ]);
    expect(validateGatewayConfig(config({ 'params.model': { $in: 'gpt' }, 'params.x': { $regex: '(' } }), providers)).toEqual([
      'config.strategy.conditions[0].query.params.model.$in must be an array',
      'config.strategy.conditions[0].query.params.x.$regex must be a valid regular expression (missing closing ): `(`)',
    ]);
    // Patterns run in RE2 (linear time): what needs backtracking is refused with the reason.
    expect(validateGatewayConfig(config({ 'metadata.user': { $regex: '^(a+)\\1$' }, 'params.x': { $regex: 7 } }), providers)).toEqual([
      'config.strategy.conditions[0].query.metadata.user.$regex must not use backreferences (\\1, \\k<name>): user-supplied patterns run in a linear-time engine (RE2), which cannot run them',
      'config.strategy.conditions[0].query.params.x.$regex must be a regular expression string of at most 1000 characters',
    ]);
    expect(validateGatewayConfig(config({ $or: [] }), providers)).toEqual(['config.strategy.conditions[0].query.$or must be a non-empty array of queries']);
  });

  it('checks weights, target names and the circuit breaker', () => {
    expect(
      validateGatewayConfig(
        {
          strategy: { mode: 'loadbalance' },
          targets: [
            { provider: 'openai', weight: 0 },
            { provider: 'groq', weight: 0 },
          ],
        },
        providers,
      ),
    ).toEqual(["config.strategy.mode 'loadbalance' needs a target with weight > 0"]);
    expect(
      validateGatewayConfig(
        {
          strategy: { mode: 'fallback' },
          targets: [
            { name: 'x', provider: 'openai' },
            { name: 'x', provider: 'groq' },
          ],
        },
        providers,
      ),
    ).toEqual(["config.targets has two targets named 'x'"]);
    expect(validateGatewayConfig({ provider: 'openai', circuit_breaker: { failure_threshold: 0, cooldown_ms: 'soon', open: true } }, providers)).toEqual([
      'config.circuit_breaker.open is not a known field',
      'config.circuit_breaker.failure_threshold must be an integer from 1 to 1000',
      'config.circuit_breaker.cooldown_ms must be an integer number of milliseconds from 1 to 86400000',
    ]);
  });

  it('rejects what is not an object, and too deep nesting', () => {
    expect(validateGatewayConfig([], providers)).toEqual(['config must be a JSON object']);
    let deep: Record<string, unknown> = { provider: 'openai' };
    for (let i = 0; i < 7; i++) deep = { targets: [deep] };
    expect(validateGatewayConfig(deep, providers).some((p) => p.includes('nests deeper than 5 levels'))).toBe(true);
  });
});
