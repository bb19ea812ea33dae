import { formatRelative } from './format';

describe('formatRelative', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  const ago = (ms: number) => new Date(now - ms).toISOString();

  it.each([
    [0, 'just now'],
    [59_000, 'just now'],
    [-5_000, 'just now'],
    [60_000, '1 minute ago'],
    [5 * 60_000 + 59_000, '5 minutes ago'],
    [3_600_000, '1 hour ago'],
    [26 * 3_600_000, 'yesterday'],
    [3 * 86_400_000, '3 days ago'],
    [45 * 86_400_000, 'last month'],
    [800 * 86_400_000, '2 years ago'],
  ])('%i ms ago reads "%s"', (ms, text) => {
    expect(formatRelative(ago(ms), now)).toBe(text);
  });
});
