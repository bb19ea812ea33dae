import { validateGatewayConfig } from './gateway-config.schema';

const providers = ['openai', 'groq'];

describe('validateGatewayConfig', () => {
  it('accepts the full example of CONTRACT section 5', () => {
    const config = {
      strategy: { mode: 'conditional', on_status_codes: [429, 500], conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'smart' }], default: 'cheap' },
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
        "config.cache.mode must be 'simple' or 'semantic'",
      ]),
    );
    expect(problems).toHaveLength(5);
  });

  it('checks strategies against their targets', () => {
    expect(validateGatewayConfig({ strategy: { mode: 'fallback' } }, providers)).toEqual(["config.strategy.mode 'fallback' needs targets"]);
    expect(validateGatewayConfig({ strategy: { mode: 'roundrobin' } }, providers)).toEqual([
      'config.strategy.mode must be one of single, fallback, loadbalance, conditional',
    ]);
    const conditional = { strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'ghost' }], default: 'a' }, targets: [{ name: 'a', provider: 'openai' }] };
    expect(validateGatewayConfig(conditional, providers)).toEqual(['config.strategy.conditions[0].then must name a target']);
  });

  it('rejects what is not an object, and too deep nesting', () => {
    expect(validateGatewayConfig([], providers)).toEqual(['config must be a JSON object']);
    let deep: Record<string, unknown> = { provider: 'openai' };
    for (let i = 0; i < 7; i++) deep = { targets: [deep] };
    expect(validateGatewayConfig(deep, providers).some((p) => p.includes('nests deeper than 5 levels'))).toBe(true);
  });
});
