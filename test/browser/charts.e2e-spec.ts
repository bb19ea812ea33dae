/**
 * The time charts in a browser (issue 36, "Layout"): the half-width charts of Analytics at
 * 1440 px write no x-axis label over (or against) another, and a value with no neighbour (a
 * 7-day latency chart of rare requests) is drawn as a dot, not left out. uPlot draws on a
 * canvas, so the test reads what was drawn there: the labels from the canvas's own fillText
 * calls, measured in the font they were drawn in; the dots from the canvas's pixels.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(90_000);

/** A text drawn on a canvas: where (canvas pixels, its anchor) and how wide. */
interface DrawnText {
  text: string;
  x: number;
  y: number;
  width: number;
  align: string;
}

/** Space each side of a label's text that no other label may enter (CSS pixels): "10:00am10:30am" reads as one word. */
const LABEL_MARGIN = 4;
const HOUR = 3_600_000;

describe('time charts in a browser', () => {
  let gateway: TestGateway;
  let browser: Browser;
  let page: Page;

  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const chart = (caption: string) => page.locator('figure.chart', { has: page.locator('figcaption', { hasText: caption }) });
  const chartsDrawn = () => page.waitForFunction(() => (globalThis as any).document.querySelectorAll('figure.chart canvas').length === 4);

  /** Per chart: its caption, its width, and the x-axis labels it drew last (the centred texts: the y axis' are aligned to its side), in CSS pixels. */
  const xAxes = () =>
    page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('figure.chart')].map((figure: any) => {
        const canvas = figure.querySelector('canvas');
        const ratio = (globalThis as any).devicePixelRatio as number;
        return {
          caption: figure.querySelector('figcaption').textContent as string,
          width: figure.getBoundingClientRect().width as number,
          labels: ((canvas.__drawnText ?? []) as DrawnText[])
            .filter((t) => t.align === 'center')
            .map((t) => ({ ...t, x: t.x / ratio, y: t.y / ratio, width: t.width / ratio })),
        };
      }),
    );

  beforeAll(async () => {
    gateway = await startTestGateway();
    // One request every 31 hours over the last week: on the 7-day view each has an hour of its own, no neighbour.
    // The last twelve hours are dense (a request every 7 minutes), so the shorter views have lines.
    await gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens, model, provider)
       select gen_random_uuid(), 'seeded', now() - (i * interval '31 hours') - interval '30 minutes', 'chat.completions', 200, 400 + 50 * i, 0.001, 20, 10, 'gpt-4o', 'openai'
       from generate_series(1, 5) as i
       union all
       select gen_random_uuid(), 'seeded', now() - (i * interval '7 minutes'), 'chat.completions', 200, 100 + i, 0.001, 20, 10, 'gpt-4o', 'openai'
       from generate_series(1, 100) as i`,
    );
    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    // Every canvas keeps the texts drawn on it since it was last cleared whole, each with its width in the font it was drawn in.
    await page.addInitScript(() => {
      const proto = (globalThis as any).CanvasRenderingContext2D.prototype;
      const { fillText, clearRect } = proto;
      proto.fillText = function (this: any, text: string, x: number, y: number, ...rest: unknown[]) {
        const m = this.getTransform();
        (this.canvas.__drawnText ??= []).push({
          text: String(text),
          x: m.a * x + m.c * y + m.e,
          y: m.b * x + m.d * y + m.f,
          width: this.measureText(text).width * Math.hypot(m.a, m.b),
          align: this.textAlign,
        });
        return fillText.call(this, text, x, y, ...rest);
      };
      proto.clearRect = function (this: any, x: number, y: number, w: number, h: number) {
        if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height) this.canvas.__drawnText = [];
        return clearRect.call(this, x, y, w, h);
      };
    });
    await signIn(page, url(''), gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  // The periods offered, and two dragged ones whose labels uPlot's fixed 50 px between ticks packed edge to edge.
  const to = Math.floor(Date.now() / HOUR) * HOUR;
  const custom = (hours: number) => `range=custom&from=${new Date(to - hours * HOUR).toISOString()}&to=${new Date(to).toISOString()}`;
  it.each([
    ['the last hour', 'range=1h'],
    ['the last 24 hours', 'range=24h'],
    ['the last 7 days', 'range=7d'],
    ['the last 30 days', 'range=30d'],
    ['2¾ hours', custom(2.75)],
    ['6 hours', custom(6)],
  ])('writes no x-axis label over another in the half-width charts at 1440 px: %s', async (name, query) => {
    await page.goto(url(`/analytics?${query}`));
    await chartsDrawn();
    const axes = await xAxes();
    expect(axes).toHaveLength(4);
    for (const axis of axes) {
      // Two charts side by side.
      expect(axis.width).toBeLessThan(720);
      expect(axis.labels.length).toBeGreaterThanOrEqual(3);
      // On each line of the axis (a label's date is a second line, below its time), neighbours keep apart.
      const lines = new Map<number, DrawnText[]>();
      for (const label of axis.labels) lines.set(Math.round(label.y), [...(lines.get(Math.round(label.y)) ?? []), label]);
      for (const line of lines.values()) {
        const sorted = [...line].sort((a, b) => a.x - b.x);
        for (let i = 1; i < sorted.length; i++) {
          const [left, right] = [sorted[i - 1], sorted[i]];
          const gap = right.x - right.width / 2 - (left.x + left.width / 2);
          expect({ chart: axis.caption, labels: `${left.text} | ${right.text}`, apart: gap >= 2 * LABEL_MARGIN }).toEqual({
            chart: axis.caption,
            labels: `${left.text} | ${right.text}`,
            apart: true,
          });
        }
      }
    }
    await page.screenshot({ path: join(SHOTS, `chart-labels-${name.replace(/\W+/g, '-')}.png`), fullPage: true });
  });

  it('draws a value whose neighbours have none as a dot: the 7-day latency chart of rare requests is not empty', async () => {
    await page.goto(url('/analytics?range=7d'));
    await chartsDrawn();
    const latency = chart('Latency per hour');
    await latency.locator('canvas').waitFor();
    // The columns of the canvas holding the p50 or p95 colour (one request's p50 is its p95: the p95 dot covers it), grouped where they touch.
    const groups = await latency.locator('canvas').evaluate((canvas: any) => {
      const { width, height } = canvas;
      const pixels: Uint8ClampedArray = canvas.getContext('2d').getImageData(0, 0, width, height).data;
      const colours = [
        [0x03, 0x69, 0xa1],
        [0x9d, 0x17, 0x4d],
      ];
      const drawn = (i: number) => colours.some(([r, g, b]) => Math.abs(pixels[i] - r) + Math.abs(pixels[i + 1] - g) + Math.abs(pixels[i + 2] - b) < 60);
      let count = 0;
      let inGroup = false;
      for (let x = 0; x < width; x++) {
        let found = false;
        for (let y = 0; y < height && !found; y++) found = drawn((y * width + x) * 4);
        if (found && !inGroup) count++;
        inGroup = found;
      }
      return count;
    });
    await page.screenshot({ path: join(SHOTS, 'chart-isolated-points.png'), fullPage: true });
    // Five requests, 31 hours apart: five dots; then the line of the last twelve hours.
    expect(groups).toBe(6);
  });
});
