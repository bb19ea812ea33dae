import { DEFAULT_OUTPUT_TOKENS, outputTokenAllowance, RecentCosts } from './reservation-estimate';

describe('outputTokenAllowance', () => {
  it.each([
    [{ max_tokens: 100 }, 100],
    [{ max_completion_tokens: 50, max_tokens: 100 }, 50],
    [{ max_output_tokens: 30 }, 30],
    [{}, DEFAULT_OUTPUT_TOKENS],
    [{ max_tokens: 'lots' }, DEFAULT_OUTPUT_TOKENS],
    [{ max_tokens: -5 }, DEFAULT_OUTPUT_TOKENS],
    [{ max_tokens: 1, n: 5 }, 5],
    [{ n: 3 }, 3 * DEFAULT_OUTPUT_TOKENS],
    [{ max_tokens: 10, n: 2, best_of: 4 }, 40],
    [{ max_tokens: 10, n: 0 }, 10],
    [{ max_tokens: 10, n: 2.5 }, 10],
    [{ max_tokens: 10, n: '5' }, 10],
  ])('%j allows %d output tokens', (body, tokens) => {
    expect(outputTokenAllowance(body)).toBe(tokens);
  });
});

describe('RecentCosts', () => {
  const T0 = 1_000_000;

  it('knows nothing of a pair never observed', () => {
    expect(new RecentCosts().expected('k', T0)).toBe(0);
  });

  it('keeps the peak: a costlier request raises it at once, a cheaper one does not lower it', () => {
    const costs = new RecentCosts();
    costs.observe('k', 0.001, T0);
    costs.observe('k', 0.004, T0);
    costs.observe('k', 0.0001, T0);
    expect(costs.expected('k', T0)).toBe(0.004);
    expect(costs.expected('other', T0)).toBe(0);
  });

  it('halves the peak every ten minutes without a costlier request', () => {
    const costs = new RecentCosts();
    costs.observe('k', 0.004, T0);
    expect(costs.expected('k', T0 + 10 * 60_000)).toBeCloseTo(0.002, 12);
    expect(costs.expected('k', T0 + 60 * 60_000)).toBeCloseTo(0.004 / 64, 12);
    // A new observation starts from the decayed peak.
    costs.observe('k', 0.001, T0 + 10 * 60_000);
    expect(costs.expected('k', T0 + 10 * 60_000)).toBeCloseTo(0.002, 12);
  });

  it('forgets the least recently observed pair past its size', () => {
    const costs = new RecentCosts(2);
    costs.observe('a', 1, T0);
    costs.observe('b', 1, T0);
    costs.observe('a', 1, T0);
    costs.observe('c', 1, T0);
    expect([costs.expected('a', T0), costs.expected('b', T0), costs.expected('c', T0)]).toEqual([1, 0, 1]);
  });
});
