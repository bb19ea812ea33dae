import { CircuitBreaker, CircuitBreakerRegistry } from './circuit-breaker';

const policy = { failureThreshold: 3, windowMs: 1000, cooldownMs: 500, onStatusCodes: [500, 503] };

describe('CircuitBreaker', () => {
  it('opens after the threshold of failures within the window, for the cooldown', () => {
    const breaker = new CircuitBreaker(policy);
    breaker.onFailure(503, false, 0);
    breaker.onFailure(503, false, 100);
    expect(breaker.tryAcquire(150)).toBe(true);
    breaker.onFailure(500, false, 200);
    expect(breaker.tryAcquire(201)).toBe(false);
    expect(breaker.retryAfterMs(300)).toBe(400);
  });

  it('forgets failures older than the window', () => {
    const breaker = new CircuitBreaker(policy);
    breaker.onFailure(503, false, 0);
    breaker.onFailure(503, false, 100);
    breaker.onFailure(503, false, 1500);
    expect(breaker.tryAcquire(1501)).toBe(true);
  });

  it('counts network errors, not statuses outside the policy', () => {
    const breaker = new CircuitBreaker(policy);
    for (let i = 0; i < 5; i++) breaker.onFailure(400, false, i);
    expect(breaker.tryAcquire(10)).toBe(true);
    for (let i = 0; i < 3; i++) breaker.onFailure(502, true, 20 + i);
    expect(breaker.tryAcquire(30)).toBe(false);
  });

  it('after the cooldown lets one probe through; success closes, failure reopens', () => {
    const breaker = new CircuitBreaker(policy);
    for (let i = 0; i < 3; i++) breaker.onFailure(503, false, i);
    expect(breaker.tryAcquire(600)).toBe(true); // the probe
    expect(breaker.tryAcquire(601)).toBe(false); // others wait for its verdict
    breaker.onFailure(503, false, 650);
    expect(breaker.tryAcquire(700)).toBe(false);
    expect(breaker.tryAcquire(1200)).toBe(true); // next probe
    breaker.onSuccess();
    expect(breaker.tryAcquire(1201)).toBe(true);
    expect(breaker.tryAcquire(1202)).toBe(true);
  });

  it('a probe without a verdict (client left) releases the half-open slot', () => {
    const breaker = new CircuitBreaker(policy);
    for (let i = 0; i < 3; i++) breaker.onFailure(503, false, i);
    expect(breaker.tryAcquire(600)).toBe(true);
    breaker.release();
    expect(breaker.tryAcquire(601)).toBe(true);
  });
});

describe('CircuitBreakerRegistry', () => {
  it('one breaker per identity, the newest policy applying', () => {
    const registry = new CircuitBreakerRegistry();
    const a = registry.get('openai|vk1', policy);
    expect(registry.get('openai|vk1', { ...policy, failureThreshold: 1 })).toBe(a);
    expect(registry.get('openai|vk2', policy)).not.toBe(a);
    a.onFailure(503, false, 0);
    expect(a.tryAcquire(1)).toBe(false);
  });
});
