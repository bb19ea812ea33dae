import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  color: string;
  values: (number | null)[];
  fill?: string;
}

/**
 * A uPlot line chart over time that follows its container's width. The chart itself is
 * an image to assistive technology (`summary` says what it shows); the numbers are in the
 * data table next to it.
 */
/** Whole steps for counts (an empty chart reads 0 and 1, not 0, 0, 1, 1, 1 of rounded fractions). */
const INTEGER_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 1e9, 1e10];

export function TimeChart({
  title,
  times,
  series,
  format,
  summary,
  integer = false,
}: {
  title: string;
  times: number[];
  series: ChartSeries[];
  format: (v: number) => string;
  summary: string;
  /** Counts and milliseconds: only whole numbers on the axis. */
  integer?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = Math.max(240, element.clientWidth);
    const plot = new uPlot(
      {
        width,
        height: 200,
        scales: { x: { time: true }, y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
        series: [
          { label: 'Time' },
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            fill: s.fill,
            spanGaps: false,
            points: { show: times.length < 60 },
            value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? '—' : format(v)),
          })),
        ],
        axes: [
          { stroke: '#4b5563', grid: { stroke: '#e5e7eb' }, ticks: { stroke: '#e5e7eb' } },
          {
            stroke: '#4b5563',
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
        cursor: { drag: { x: false, y: false } },
      },
      [times, ...series.map((s) => s.values)] as uPlot.AlignedData,
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(240, element.clientWidth), height: 200 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [times, series]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={summary} class="chart-box" />
    </figure>
  );
}
