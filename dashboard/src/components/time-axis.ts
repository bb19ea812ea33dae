/**
 * The time chart's x axis and points, as pure functions of the data (uPlot asks for them;
 * `time-chart.tsx` wires them in): the steps between ticks, the step whose labels fit the
 * chart's width, and the values a line cannot show.
 */

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MONTH = 30 * DAY;
const YEAR = 365 * DAY;

/** The steps between ticks (seconds): uPlot's own, from a minute (the smallest bucket) up. */
export const TIME_STEPS = [
  MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  4 * HOUR,
  6 * HOUR,
  8 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  3 * DAY,
  4 * DAY,
  5 * DAY,
  6 * DAY,
  7 * DAY,
  8 * DAY,
  9 * DAY,
  10 * DAY,
  15 * DAY,
  MONTH,
  2 * MONTH,
  3 * MONTH,
  4 * MONTH,
  6 * MONTH,
  YEAR,
  2 * YEAR,
  5 * YEAR,
  10 * YEAR,
];

/** The first line of a tick's label at a step, as uPlot's time axis writes it (`uPlot.fmtDate` templates); a date that changes goes on a second line. */
export function labelTemplate(step: number): string {
  if (step >= YEAR) return '{YYYY}';
  if (step >= 28 * DAY) return '{MMM}';
  if (step >= DAY) return '{M}/{D}';
  if (step >= HOUR) return '{h}{aa}';
  return '{h}:{mm}{aa}';
}

/** Space kept between two neighbouring labels (CSS pixels): about a word space at the axis' 12 px font, and more. */
export const LABEL_GAP = 12;
/** Times sampled over the axis to find its widest label. */
const SAMPLES = 24;

/**
 * The least space (CSS pixels) between ticks for uPlot's `axes[].space`: that of the smallest
 * step whose labels, as wide as the widest of them over the axis, keep `LABEL_GAP` apart.
 * uPlot then picks that step (it takes the smallest step at least this far apart).
 * `width(text, step)` is the drawn width of a label (the page measures it in the axis' font);
 * `label(seconds, step)` writes it.
 */
export function tickSpace(
  min: number,
  max: number,
  plotWidth: number,
  label: (seconds: number, step: number) => string,
  width: (text: string) => number,
): number {
  const span = max - min;
  if (!(span > 0) || !(plotWidth > 0)) return plotWidth;
  for (const step of TIME_STEPS) {
    const apart = (plotWidth * step) / span;
    if (apart < LABEL_GAP) continue;
    let widest = 0;
    for (let i = 0; i <= SAMPLES; i++) widest = Math.max(widest, width(label(min + (span * i) / SAMPLES, step)));
    // A hair less than `apart`, so uPlot's comparison picks this step and not the one above it.
    if (apart >= widest + LABEL_GAP) return apart - 0.01;
  }
  return plotWidth;
}

/**
 * The indices of values with no value beside them (a bucket with requests between two
 * without): a line needs two points, so these are drawn as dots.
 */
export function isolatedPoints(values: ArrayLike<number | null | undefined>): number[] {
  const missing = (i: number) => i < 0 || i >= values.length || values[i] === null || values[i] === undefined;
  const found: number[] = [];
  for (let i = 0; i < values.length; i++) if (!missing(i) && missing(i - 1) && missing(i + 1)) found.push(i);
  return found;
}
