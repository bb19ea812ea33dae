import { restartPauseMs } from './cluster';

describe('restartPauseMs', () => {
  it('replaces a worker that ran steadily at once', () => {
    expect(restartPauseMs(0)).toBe(0);
  });

  it('doubles the pause for each worker in a row that died young, up to a minute', () => {
    expect([1, 2, 3, 4, 6, 7, 8, 50].map(restartPauseMs)).toEqual([1_000, 2_000, 4_000, 8_000, 32_000, 60_000, 60_000, 60_000]);
  });
});
