import { buildRouteTree, leavesOf } from './route-tree';

describe('buildRouteTree', () => {
  it('numbers targets by path and applies inheritance down the tree', () => {
    const root = buildRouteTree({
      strategy: { mode: 'fallback' },
      api_key: 'sk-parent',
      custom_host: 'http://parent/v1',
      retry: { attempts: 2 },
      request_timeout: 5000,
      override_params: { max_tokens: 10, temperature: 0 },
      targets: [
        { provider: 'openai', override_params: { model: 'a' } },
        {
          strategy: { mode: 'loadbalance' },
          provider: 'groq',
          request_timeout: 100,
          targets: [
            { weight: 3, override_params: { temperature: 1 } },
            { virtual_key: 'vk', weight: 0 },
          ],
        },
      ],
    });
    const leaves = leavesOf(root);
    expect(leaves.map((l) => l.path)).toEqual(['0', '1.0', '1.1']);
    expect(leaves[0].source).toEqual({ kind: 'provider', provider: 'openai', apiKey: 'sk-parent' });
    expect(leaves[0].overrideParams).toEqual({ max_tokens: 10, temperature: 0, model: 'a' });
    expect(leaves[0].retry).toEqual({ attempts: 2, onStatusCodes: [429, 500, 502, 503, 504] });
    expect(leaves[0].requestTimeoutMs).toBe(5000);
    expect(leaves[1].source).toEqual({ kind: 'provider', provider: 'groq', apiKey: 'sk-parent' });
    expect(leaves[1].requestTimeoutMs).toBe(100);
    expect(leaves[1].overrideParams).toEqual({ max_tokens: 10, temperature: 1 });
    expect(leaves[1].weight).toBe(3);
    expect(leaves[1].customHost).toBe('http://parent/v1');
    // A child naming a virtual key does not inherit the parent's provider.
    expect(leaves[2].source).toEqual({ kind: 'virtual_key', slug: 'vk' });
    expect(leaves[2].weight).toBe(0);
    expect(root.children[1].mode).toBe('loadbalance');
  });

  it('strict_params is inherited like the other leaf settings, and a child may turn it off', () => {
    const root = buildRouteTree({
      strict_params: true,
      strategy: { mode: 'fallback' },
      targets: [{ provider: 'openai' }, { provider: 'groq', strict_params: false }, { strategy: { mode: 'single' }, targets: [{ provider: 'groq' }] }],
    });
    expect(leavesOf(root).map((leaf) => leaf.strictParams)).toEqual([true, false, true]);
    expect(leavesOf(buildRouteTree({ provider: 'openai' }))[0].strictParams).toBe(false);
  });

  it('a config without targets is one leaf at the root; cache and breaker get their defaults', () => {
    const root = buildRouteTree({ provider: 'openai', cache: { mode: 'simple' }, circuit_breaker: { failure_threshold: 2 } });
    expect(root.path).toBeNull();
    expect(root.children).toEqual([]);
    expect(root.cache).toEqual({ maxAgeSeconds: 3600 });
    expect(root.circuitBreaker).toEqual({ failureThreshold: 2, windowMs: 60000, cooldownMs: 30000, onStatusCodes: [500, 502, 503, 504] });
  });
});
