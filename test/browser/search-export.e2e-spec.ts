/**
 * Log search and exports in a browser (issue 25): full-text search of the bodies, a status
 * class, several models, and CSV/JSON downloads of the filtered log and of an analytics
 * table, through the dashboard as a user clicks them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { chat, createVirtualKey } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

describe('log search and export in a browser', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let browser: Browser;
  let page: Page;

  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const rowCount = () => page.locator('table.log-table tbody tr').count();
  const waitForRows = (n: number) =>
    page.waitForFunction((count) => (globalThis as any).document.querySelectorAll('table.log-table tbody tr').length === count, n);
  /** Clicks an export button and reads the file the browser saved. */
  const exported = async (button: string) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
    return { name: download.suggestedFilename(), text: readFileSync(await download.path(), 'utf8') };
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'search', key: 'sk-search', custom_host: `${mock.url}/v1` });
    for (const content of ['refund policy for damaged parcels', 'shipping times to Norway', 'refund of a gift card']) {
      expect((await chat(gateway, { 'x-gateway-virtual-key': 'search' }, { messages: [{ role: 'user', content }] })).status).toBe(200);
    }
    expect(
      (await chat(gateway, { 'x-gateway-virtual-key': 'search' }, { model: 'mock-error-429', messages: [{ role: 'user', content: 'rate limited refund' }] }))
        .status,
    ).toBe(429);
    await gateway.flushLogs();
    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await signIn(page, url(''), gateway.adminKey);
    await waitForRows(4);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  it('searches the bodies, narrows by a status class, and exports what is shown as CSV and JSON', async () => {
    await page.getByRole('searchbox', { name: 'Search bodies' }).fill('refund -gift');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitForRows(2);
    expect(page.url()).toContain('q=refund+-gift');
    await page.getByRole('textbox', { name: 'Status' }).fill('4xx');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitForRows(1);
    expect(await page.locator('table.log-table tbody tr').first().innerText()).toContain('429');
    await page.screenshot({ path: join(SHOTS, 'search-filtered.png'), fullPage: true });

    const csv = await exported('Export these requests as CSV');
    expect(csv.name).toMatch(/^request-logs-.*\.csv$/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines).toHaveLength(2); // the header and the one row shown
    expect(lines[1]).toContain('mock-error-429');

    await page.getByRole('textbox', { name: 'Status' }).fill('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitForRows(2);
    const json = JSON.parse((await exported('Export these requests as JSON')).text);
    expect(json.map((row: any) => row.status_code).sort()).toEqual([200, 429]);
    expect(await rowCount()).toBe(2);
  });

  it('finds words by their beginning, and says what to try when nothing matches (no wider range when none is set)', async () => {
    await page.goto(url('/logs?q=parc'));
    await waitForRows(1);
    expect(await page.locator('table.log-table tbody tr').first().innerText()).toContain('gpt-4o-mini');
    // The match, in its context, the word marked where it begins a word.
    const snippet = page.getByTestId('snippet').first();
    expect(await snippet.innerText()).toBe('request: refund policy for damaged parcels');
    expect(await snippet.locator('mark').allInnerTexts()).toEqual(['parc']);
    await page.goto(url('/logs?q=nothing-says-this'));
    const empty = page.getByTestId('empty-log');
    await empty.waitFor();
    expect(await empty.innerText()).toContain('Try to search other words');
    expect(await empty.innerText()).not.toContain('time range');
    await page.screenshot({ path: join(SHOTS, 'search-empty.png'), fullPage: true });
  });

  it('refuses a malformed status in the form, naming what it takes', async () => {
    await page.getByRole('textbox', { name: 'Status' }).fill('four hundred');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('The status is codes (200, 429), classes (4xx, 5xx) or error, separated by commas.').waitFor();
  });

  it('exports an analytics table as CSV', async () => {
    await page.goto(url('/analytics'));
    await page.getByRole('heading', { name: 'Cost and requests by' }).waitFor();
    await page.locator('table.summary-table').waitFor();
    const csv = await exported('Export this table as CSV');
    expect(csv.name).toBe('analytics-by-model.csv');
    const [header, ...rows] = csv.text.trim().split('\r\n');
    expect(header.startsWith('key,virtual_key_id,requests,errors')).toBe(true);
    expect(rows.map((row) => row.split(',')[0]).sort()).toEqual(['gpt-4o-mini', 'mock-error-429']);
  });
});
