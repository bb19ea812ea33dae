import { isolatedPoints, LABEL_GAP, labelTemplate, tickSpace, TIME_STEPS } from './time-axis';

describe('time axis', () => {
  const HOUR = 3600;
  /** Labels as wide as their template's text: 7 px a character. */
  const label = (_seconds: number, step: number) => labelTemplate(step).replace(/[{}]/g, '');
  const width = (text: string) => text.length * 7;
  /** The step uPlot takes for a least space: the smallest one at least that far apart. */
  const stepFor = (span: number, plot: number) => {
    const space = tickSpace(0, span, plot, label, width);
    return TIME_STEPS.find((step) => (plot * step) / span >= space);
  };

  it('keeps minute labels a gap apart, where a fixed 50 px would pack them edge to edge', () => {
    // "h:mmaa" is 42 px here: with the gap, 54 px between ticks. Six hours on 550 px: every 30 minutes is 46 px, so hourly.
    expect(stepFor(6 * HOUR, 550)).toBe(HOUR);
    // On 1100 px the 30-minute ticks are 92 px apart: they fit.
    expect(stepFor(6 * HOUR, 1100)).toBe(HOUR / 2);
  });

  it('takes the smallest step whose labels fit, per pixel of the plot', () => {
    for (const [span, plot] of [
      [HOUR, 300],
      [24 * HOUR, 550],
      [7 * 24 * HOUR, 550],
      [30 * 24 * HOUR, 390],
      [365 * 24 * HOUR, 550],
    ]) {
      const step = stepFor(span, plot)!;
      const apart = (plot * step) / span;
      expect(apart).toBeGreaterThanOrEqual(width(label(0, step)) + LABEL_GAP);
      const smaller = TIME_STEPS[TIME_STEPS.indexOf(step) - 1];
      if (smaller) expect((plot * smaller) / span).toBeLessThan(width(label(0, smaller)) + LABEL_GAP);
    }
  });

  it('measures the widest label over the axis', () => {
    const measured: string[] = [];
    tickSpace(
      0,
      6 * HOUR,
      550,
      (seconds) => String(seconds),
      (text) => (measured.push(text), text === '10800' ? 500 : 10),
    );
    expect(measured).toContain('10800');
    // A label wider than the plot: ticks at least as far apart as it needs, so one at most.
    const space = tickSpace(
      0,
      6 * HOUR,
      550,
      (seconds) => String(seconds),
      (text) => (text === '10800' ? 600 : 10),
    );
    expect(space).toBeGreaterThan(600 + LABEL_GAP - 0.1);
  });

  it('finds the values with no value beside them', () => {
    expect(isolatedPoints([5, null, 3, 4, null, 7])).toEqual([0, 5]);
    expect(isolatedPoints([null, 1, null, undefined, 2])).toEqual([1, 4]);
    expect(isolatedPoints([1, 2, 3])).toEqual([]);
    expect(isolatedPoints([0])).toEqual([0]);
    expect(isolatedPoints([])).toEqual([]);
  });
});
