/**
 * Breakdowns over time in a browser (issue 25): Analytics breaks cost and requests down by
 * model, provider or a metadata key as stacked series with a legend, takes the log's
 * filters, and a drag across a chart shows that period (kept in the URL).
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(90_000);

describe('analytics breakdowns in a browser', () => {
  let gateway: TestGateway;
  let browser: Browser;
  let page: Page;

  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  /** The legend labels of the chart with this caption, in order. */
  const legend = (caption: string) =>
    page
      .locator('figure.chart', { has: page.locator('figcaption', { hasText: caption }) })
      .locator('.u-legend .u-series .u-label')
      .allInnerTexts();
  const query = () => new URL(page.url()).searchParams;

  beforeAll(async () => {
    gateway = await startTestGateway();
    // Over the last twenty hours: three models of two providers, two teams, some unpriced.
    await gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens, model, provider, end_user, metadata)
       select gen_random_uuid(), 'seeded', now() - (i * interval '11 minutes'), 'chat.completions', case when i % 9 = 0 then 500 else 200 end, 100 + i,
              case when i % 3 = 2 then 0.004 when i % 3 = 1 then 0.0015 else 0.0002 end, 20, 10,
              (array['gpt-4o', 'claude-sonnet', 'gemini-flash'])[1 + i % 3],
              (array['openai', 'anthropic', 'google'])[1 + i % 3],
              'user-' || i % 4,
              jsonb_build_object('team', (array['search', 'ads'])[1 + i % 2])
       from generate_series(1, 100) as i`,
    );
    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await signIn(page, url(''), gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('breaks cost and requests down by model as stacked series with a legend, most expensive first', async () => {
    await page.goto(url('/analytics'));
    await page.getByRole('heading', { name: 'Over time' }).waitFor();
    await page.getByLabel('Break down by').selectOption('model');
    await page.locator('figcaption', { hasText: 'Cost per hour by model' }).waitFor();
    expect(query().get('breakdown')).toBe('model');
    // The legend lists the time, then the stack from its top down: the cheapest model first.
    expect(await legend('Cost per hour by model')).toEqual(['Time', 'gpt-4o', 'claude-sonnet', 'gemini-flash']);
    expect(await legend('Requests per hour by model')).toEqual(['Time', 'gpt-4o', 'claude-sonnet', 'gemini-flash']);
    const summary = await page
      .locator('figure.chart', { has: page.locator('figcaption', { hasText: 'Cost per hour by model' }) })
      .locator('[role=img]')
      .getAttribute('aria-label');
    expect(summary).toContain('stacked: gemini-flash, claude-sonnet, gpt-4o');
    await page.screenshot({ path: join(SHOTS, 'breakdown-by-model.png'), fullPage: true });
  });

  it('takes the filters of the log, in the URL, for the charts and the table alike', async () => {
    await page.getByText('Filters', { exact: true }).click();
    await page.getByLabel('Provider').fill('anthropic,google');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForFunction(() => new URL((globalThis as any).location.href).searchParams.get('provider') === 'anthropic,google');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('figure.chart .u-legend .u-series').length > 0);
    await expectLegend('Cost per hour by model', ['Time', 'claude-sonnet', 'gemini-flash']);
    expect(query().get('breakdown')).toBe('model');
    const models = await page.locator('table.summary-table tbody th').allInnerTexts();
    expect(models.sort()).toEqual(['claude-sonnet', 'gemini-flash']);
    await page.screenshot({ path: join(SHOTS, 'breakdown-filtered.png'), fullPage: true });
  });

  it('breaks down by a metadata key', async () => {
    await page.getByLabel('Break down by').selectOption('metadata');
    const key = page.locator('#a-breakdown-meta');
    await key.fill('team');
    await key.press('Enter');
    await page.locator('figcaption', { hasText: 'Cost per hour by metadata.team' }).waitFor();
    expect((await legend('Cost per hour by metadata.team')).slice(1).sort()).toEqual(['ads', 'search']);
  });

  it('zooms to the period dragged across a chart, kept in the URL', async () => {
    const before = { from: Date.parse(query().get('from') ?? new Date(Date.now() - 86_400_000).toISOString()), to: Date.now() };
    const chart = page.locator('figure.chart', { has: page.locator('figcaption', { hasText: 'Requests per hour by metadata.team' }) }).locator('.u-over');
    const box = (await chart.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2, { steps: 8 });
    await page.mouse.up();
    await page.waitForFunction(() => new URL((globalThis as any).location.href).searchParams.get('range') === 'custom');
    const [from, to] = [Date.parse(query().get('from')!), Date.parse(query().get('to')!)];
    // About a fifth of the day shown, in its second half; the filters and breakdown stay.
    expect(to - from).toBeGreaterThan(0.15 * 86_400_000);
    expect(to - from).toBeLessThan(0.25 * 86_400_000);
    expect(from).toBeGreaterThan(before.from + 0.4 * 86_400_000);
    expect(query().get('provider')).toBe('anthropic,google');
    expect(query().get('breakdown')).toBe('metadata');
    await page.locator('figcaption', { hasText: 'by metadata.team' }).first().waitFor();
    expect(await page.locator('#a-range').inputValue()).toBe('custom');
    await page.screenshot({ path: join(SHOTS, 'breakdown-zoomed.png'), fullPage: true });
    // Reloaded from the URL: the same period.
    await page.reload();
    await page.locator('figcaption', { hasText: 'by metadata.team' }).first().waitFor();
    expect(Date.parse(query().get('from')!)).toBe(from);
  });

  async function expectLegend(caption: string, expected: string[]): Promise<void> {
    await page.waitForFunction(
      ([text, count]) =>
        [...(globalThis as any).document.querySelectorAll('figure.chart')].some(
          (figure: any) => figure.querySelector('figcaption')?.textContent.includes(text) && figure.querySelectorAll('.u-legend .u-series').length === count,
        ),
      [caption, expected.length] as const,
    );
    expect(await legend(caption)).toEqual(expected);
  }
});
