import { buildRouteTree } from './route-tree';
import { chooseConditional, fallsBack, parseRetryAfter, pickWeighted, retryDelayMs } from './route-planner';
import { mulberry32 } from '../../../test/support/fuzz-inputs';

describe('pickWeighted', () => {
  it.each([[[1, 1]], [[3, 1]], [[5, 0, 1, 2.5]], [[0.1, 0.2, 0.7]], [[1, 0, 0, 0, 9]]])(
    'over 40,000 draws each item is picked in proportion to its weight %j',
    (weights) => {
      const items = weights.map((weight, id) => ({ id, weight }));
      const counts = new Array(weights.length).fill(0);
      const random = mulberry32(weights.length * 7919);
      const draws = 40_000;
      for (let i = 0; i < draws; i++) counts[pickWeighted(items, random)!.id]++;
      const total = weights.reduce((a, b) => a + b, 0);
      weights.forEach((weight, i) => {
        if (weight === 0) expect(counts[i]).toBe(0);
        else expect(Math.abs(counts[i] / draws - weight / total)).toBeLessThan(0.01);
      });
    },
  );

  it('never picks weight 0, even at the edges of the random range', () => {
    const items = [{ weight: 0 }, { weight: 2 }, { weight: 0 }];
    for (const r of [0, 0.5, 0.999999999999]) expect(pickWeighted(items, () => r)).toBe(items[1]);
  });

  it('gives null when nothing has weight', () => {
    expect(pickWeighted([{ weight: 0 }], Math.random)).toBeNull();
    expect(pickWeighted([], Math.random)).toBeNull();
  });
});

describe('chooseConditional', () => {
  const node = buildRouteTree({
    strategy: {
      mode: 'conditional',
      conditions: [
        { query: { 'metadata.tier': 'pro' }, then: 'smart' },
        { query: { $or: [{ 'params.max_tokens': { $gt: 1000 } }, { 'params.model': { $regex: '^o\\d' } }] }, then: 'smart' },
        { query: { 'metadata.region': { $in: ['eu', 'ch'] } }, then: 'eu' },
      ],
      default: 'cheap',
    },
    targets: [
      { name: 'smart', provider: 'openai' },
      { name: 'cheap', provider: 'groq' },
      { name: 'eu', provider: 'mistral-ai' },
    ],
  });
  const pick = (metadata: Record<string, string>, params: unknown) => chooseConditional(node, { metadata, params })?.name;

  it('takes the first condition that matches', () => {
    expect(pick({ tier: 'pro', region: 'eu' }, {})).toBe('smart');
    expect(pick({ region: 'eu' }, { max_tokens: 2000 })).toBe('smart');
    expect(pick({ region: 'ch' }, { model: 'gpt-4o' })).toBe('eu');
    expect(pick({}, { model: 'o3-mini' })).toBe('smart');
  });

  it('falls to the default, or null without one', () => {
    expect(pick({ tier: 'free' }, { max_tokens: 10 })).toBe('cheap');
    const noDefault = { ...node, defaultTarget: null };
    expect(chooseConditional(noDefault, { metadata: {}, params: {} })).toBeNull();
  });
});

describe('fallsBack', () => {
  const any = buildRouteTree({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai' }] });
  const listed = buildRouteTree({ strategy: { mode: 'fallback', on_status_codes: [429, 503] }, targets: [{ provider: 'openai' }] });
  const failure = (status: number, unreachable = false) => ({ status, unreachable, retryAfterMs: null });

  it('by default on any non-2xx', () => {
    for (const status of [400, 401, 404, 429, 500, 503]) expect(fallsBack(any, failure(status))).toBe(true);
  });

  it('with on_status_codes only on those, but always on network errors and timeouts', () => {
    expect(fallsBack(listed, failure(503))).toBe(true);
    expect(fallsBack(listed, failure(500))).toBe(false);
    expect(fallsBack(listed, failure(400))).toBe(false);
    expect(fallsBack(listed, failure(502, true))).toBe(true);
    expect(fallsBack(listed, failure(504, true))).toBe(true);
  });
});

describe('retryDelayMs', () => {
  const policy = { attempts: 3, onStatusCodes: [429, 503] };
  const timing = { baseDelayMs: 100, maxDelayMs: 1000 };
  const failure = (status: number, retryAfterMs: number | null = null) => ({ status, unreachable: false, retryAfterMs });

  it('grows exponentially with jitter inside [half, full] of the ceiling, capped', () => {
    const random = mulberry32(42);
    for (let trial = 0; trial < 500; trial++) {
      [100, 200, 400].forEach((ceiling, retry) => {
        const delay = retryDelayMs(policy, retry, failure(503), timing, random)!;
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      });
    }
    const capped = retryDelayMs({ attempts: 10, onStatusCodes: [503] }, 8, failure(503), timing, () => 1);
    expect(capped).toBe(1000);
  });

  it('stops after the attempts and on statuses not listed', () => {
    expect(retryDelayMs(policy, 3, failure(503), timing, Math.random)).toBeNull();
    expect(retryDelayMs(policy, 0, failure(500), timing, Math.random)).toBeNull();
    expect(retryDelayMs(null, 0, failure(503), timing, Math.random)).toBeNull();
  });

  it('honours Retry-After up to the cap, and gives up beyond it', () => {
    expect(retryDelayMs(policy, 0, failure(429, 700), timing, Math.random)).toBe(700);
    expect(retryDelayMs(policy, 0, failure(429, 5000), timing, Math.random)).toBeNull();
  });
});

describe('parseRetryAfter', () => {
  it('reads retry-after-ms first, then seconds, then an HTTP date', () => {
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' })).toBe(250);
    expect(parseRetryAfter({ 'retry-after': '2' })).toBe(2000);
    expect(parseRetryAfter({ 'retry-after': '0.5' })).toBe(500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, now)).toBe(3000);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter({})).toBeNull();
    expect(parseRetryAfter({ 'retry-after': 'soon' })).toBeNull();
    expect(parseRetryAfter({ 'retry-after': '-3' })).toBeNull();
  });
});
