import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { isolatedPoints, labelTemplate, tickSpace, TIME_STEPS } from './time-axis';
import { browserZone, displayZone, zoneName } from '../time-zone';

export interface ChartSeries {
  label: string;
  color: string;
  values: (number | null)[];
  fill?: string;
}

/** Whole steps for counts (an empty chart reads 0 and 1, not 0, 0, 1, 1, 1 of rounded fractions). */
const INTEGER_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 1e9, 1e10,
];
/** A drag narrower than this (pixels) is a click, not a zoom. */
const MIN_DRAG_PX = 4;
/** The axes' font: uPlot's own, named so the x labels can be measured in it. */
const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';

const formats = new Map<string, (date: Date) => string>();
/**
 * A moment as uPlot reads it (its local getters): in the browser's zone as it is, in another
 * zone shifted to read that zone's wall clock (`uPlot.tzDate`).
 */
function chartDate(seconds: number): Date {
  const date = new Date(seconds * 1000);
  const zone = displayZone();
  return zone === browserZone() ? date : uPlot.tzDate(date, zone);
}

/** A tick's label (its first line) at a step, as uPlot's time axis writes it, in the zone times are shown in. */
function tickLabel(seconds: number, step: number): string {
  const template = labelTemplate(step);
  let format = formats.get(template);
  if (!format) formats.set(template, (format = uPlot.fmtDate(template)));
  return format(chartDate(seconds));
}

let measuring: CanvasRenderingContext2D | null = null;
const widths = new Map<string, number>();
/** A label's width in CSS pixels, drawn in the axes' font. */
function labelWidth(text: string): number {
  let width = widths.get(text);
  if (width === undefined) {
    measuring ??= document.createElement('canvas').getContext('2d');
    if (!measuring) return text.length * 7;
    measuring.font = AXIS_FONT;
    widths.set(text, (width = measuring.measureText(text).width));
  }
  return width;
}

/**
 * The series stacked: each drawn at the running total of itself and those before it (the
 * first at the bottom). They are drawn from the top of the stack down, each filled to zero,
 * so each band shows its own share; the legend and cursor read each one's own values.
 */
function stack(series: ChartSeries[]): { drawn: ChartSeries[]; own: (number | null)[][] } {
  const sums: number[][] = [];
  series.forEach((s, i) => sums.push(s.values.map((v, j) => (v ?? 0) + (i > 0 ? sums[i - 1][j] : 0))));
  const order = series.map((_, i) => i).reverse();
  return {
    drawn: order.map((i) => ({ ...series[i], values: sums[i], fill: series[i].color })),
    own: order.map((i) => series[i].values),
  };
}

/**
 * A uPlot chart over time that follows its container's width. The chart itself is
 * an image to assistive technology (`summary` says what it shows); the numbers are in the
 * data table next to it. `stacked` draws the series as stacked areas (a breakdown that adds
 * up to the total); `onZoom` lets a drag across the chart choose a period (milliseconds).
 */
export function TimeChart({
  title,
  times,
  series,
  format,
  summary,
  integer = false,
  stacked = false,
  onZoom,
}: {
  title: string;
  times: number[];
  series: ChartSeries[];
  format: (v: number) => string;
  summary: string;
  /** Counts and milliseconds: only whole numbers on the axis. */
  integer?: boolean;
  stacked?: boolean;
  onZoom?: (fromMs: number, toMs: number) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  // The latest handler, without drawing the chart again when only it changed.
  const zoom = useRef(onZoom);
  zoom.current = onZoom;
  const zoomable = onZoom !== undefined;
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = Math.max(240, element.clientWidth);
    const { drawn, own } = stacked ? stack(series) : { drawn: series, own: series.map((s) => s.values) };
    const plot = new uPlot(
      {
        width,
        height: 200,
        tzDate: chartDate,
        scales: { x: { time: true }, y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
        series: [
          { label: 'Time' },
          ...drawn.map((s, i) => ({
            label: s.label,
            stroke: s.color,
            width: stacked ? 1 : 2,
            fill: s.fill,
            spanGaps: false,
            points: {
              show: !stacked && times.length < 60,
              // Where the points are not all drawn, a value between two missing ones still is: a line cannot show it.
              filter: (u: uPlot, seriesIndex: number, show: boolean) => {
                const isolated = show ? [] : isolatedPoints(u.data[seriesIndex]);
                return isolated.length > 0 ? isolated : null;
              },
            },
            value: (_u: uPlot, _v: number | null, _series: number, index: number | null) => {
              const v = index === null ? null : own[i][index];
              return v === null || v === undefined ? '—' : format(v);
            },
          })),
        ],
        axes: [
          {
            stroke: '#4b5563',
            font: AXIS_FONT,
            grid: { stroke: '#e5e7eb' },
            ticks: { stroke: '#e5e7eb' },
            // Ticks as far apart as their labels need: uPlot's fixed 50 px packs "10:00am10:30am" in a half-width chart.
            incrs: TIME_STEPS,
            space: (_u, _axis, min, max, plotWidth) => tickSpace(min, max, plotWidth, tickLabel, labelWidth),
          },
          {
            stroke: '#4b5563',
            font: AXIS_FONT,
            grid: { stroke: '#e5e7eb' },
            ticks: { stroke: '#e5e7eb' },
            values: (_u, values) => {
              const labels = values.map((v) => format(v));
              // The axis is drawn on a canvas: its labels are also kept on the element, readable in the DOM.
              element.dataset.yTicks = labels.join(' | ');
              return labels;
            },
            ...(integer && { incrs: INTEGER_STEPS }),
            // As wide as the longest label ($0.000040 needs more room than 8).
            size: (_u, values) => 18 + 7.5 * Math.max(3, ...(values ?? []).map((v) => String(v).length)),
          },
        ],
        legend: { live: true },
        // A horizontal drag selects a period; the page is asked to show it (the scale is left as is: the new period is fetched).
        cursor: { drag: { x: zoomable, y: false, setScale: false } },
        hooks: zoomable
          ? {
              setSelect: [
                (u: uPlot) => {
                  const { left, width: dragged } = u.select;
                  if (dragged < MIN_DRAG_PX) return;
                  const [from, to] = [u.posToVal(left, 'x'), u.posToVal(left + dragged, 'x')];
                  u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
                  zoom.current?.(from * 1000, to * 1000);
                },
              ],
            }
          : {},
      },
      [times, ...drawn.map((s) => s.values)] as uPlot.AlignedData,
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(240, element.clientWidth), height: 200 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [times, series, stacked, zoomable]);
  return (
    <figure class={`chart${zoomable ? ' zoomable' : ''}`}>
      <figcaption>
        {title} <span class="axis-zone muted small-text">(times in {zoneName(displayZone())})</span>
      </figcaption>
      <div ref={box} role="img" aria-label={summary} class="chart-box" title={zoomable ? 'Drag across the chart to show that period' : undefined} />
    </figure>
  );
}
