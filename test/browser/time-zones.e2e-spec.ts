/**
 * Time zones in a real browser set to Los Angeles (issue 36, item 2): times are shown in the
 * browser's zone or in UTC, chosen in the header and remembered; the analytics buckets are
 * that zone's days (the timeseries API's `tz`), and every time and chart axis names its zone.
 * Screenshots go to artifacts/screenshots/.
 */
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

describe('time zones in a browser in Los Angeles', () => {
  let gateway: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  // Two Los Angeles days: 28 February and 1 March 2025 (PST, UTC-8).
  const period = `/analytics?range=custom&from=2025-02-28T08:00:00.000Z&to=2025-03-02T08:00:00.000Z&interval=day`;

  const insertLog = (createdAt: string) =>
    gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens, model, provider)
       values (gen_random_uuid(), 'tz', $1, 'chat.completions', 200, 50, 0.001, 10, 5, 'gpt-4o-mini', 'openai')`,
      [createdAt],
    );

  /** The analytics' bucket table: [bucket as shown, requests], the buckets with requests. */
  const buckets = async () => {
    await page.locator('details.data-details summary').click();
    const rows = page.locator('details.data-details tbody tr');
    await rows.first().waitFor();
    return (await rows.evaluateAll((trs: any[]) => trs.map((tr) => [tr.cells[0].textContent, Number(tr.cells[1].textContent)]))) as [string, number][];
  };

  beforeAll(async () => {
    gateway = await startTestGateway();
    await insertLog('2025-03-01T07:30:00Z'); // 23:30 on 28 February in Los Angeles
    await insertLog('2025-03-01T08:30:00Z'); // 00:30 on 1 March there
    await insertLog('2025-03-01T20:00:00Z'); // 12:00 on 1 March there
    browser = await startBrowser();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, timezoneId: 'America/Los_Angeles', locale: 'en-US' });
    page = await context.newPage();
    await signIn(page, url(''), gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('shows local time by default: Los Angeles days as buckets, named PST', async () => {
    await page.goto(url(period));
    expect(await page.locator('#zone-switch').inputValue()).toBe('local');
    expect(await buckets()).toEqual([
      ['Feb 28, 2025, 12:00:00 AM PST', 1],
      ['Mar 1, 2025, 12:00:00 AM PST', 2],
    ]);
    // Each chart says which zone its axis is in.
    const captions = await page.locator('.chart .axis-zone').allInnerTexts();
    expect(captions.length).toBeGreaterThan(0);
    expect(new Set(captions)).toEqual(new Set(['(times in PST)']));
    await shot('time-zone-local');
  });

  it('switches to UTC: UTC days as buckets, every time in UTC, and remembers it', async () => {
    await page.goto(url(period));
    await page.locator('#zone-switch').selectOption('utc');
    await page.locator('.chart .axis-zone', { hasText: '(times in UTC)' }).first().waitFor();
    expect(await buckets()).toEqual([['Mar 1, 2025, 12:00:00 AM UTC', 3]]);
    await shot('time-zone-utc');

    // Remembered: after a reload, and on the log, whose times name the zone.
    await page.goto(url('/logs'));
    expect(await page.locator('#zone-switch').inputValue()).toBe('utc');
    expect(await page.locator('table.log-table thead th').first().innerText()).toMatch(/^TIME \(UTC\)$/i);
    // The rows' times in UTC (20:00 UTC is noon in Los Angeles).
    expect((await page.locator('a[data-log-id]').allInnerTexts()).sort()).toEqual(['Mar 1, 07:30:00 AM', 'Mar 1, 08:00:00 PM', 'Mar 1, 08:30:00 AM']);
    await page.locator('a[data-log-id]', { hasText: 'Mar 1, 08:00:00 PM' }).click();
    await page.getByRole('heading', { name: 'Trace' }).waitFor();
    expect(await page.locator('.facts time').innerText()).toBe('Mar 1, 2025, 8:00:00 PM UTC');

    await page.locator('#zone-switch').selectOption('local');
    await page.locator('table.log-table thead th', { hasText: 'PST' }).waitFor();
    expect((await page.locator('a[data-log-id]').allInnerTexts()).sort()).toEqual(['Feb 28, 11:30:00 PM', 'Mar 1, 12:00:00 PM', 'Mar 1, 12:30:00 AM']);
  });
});
