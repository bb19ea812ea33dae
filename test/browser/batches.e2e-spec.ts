/**
 * Batches in the dashboard (issue 37): the Batches page lists the batches with their status,
 * progress (lines ended of all), lines, cost so far, creation time and key, updates a running
 * one while it is shown, filters by status; a batch's own page tells its lines by status,
 * tokens, cost, times and files and links to its lines in the request log, where a line's
 * detail names its batch and custom_id; Analytics tells the batch lines among the requests.
 * Batches are created with the official `openai` SDK and run by the gateway against the mock
 * provider; every figure is checked against the batch's lines and log rows in the database.
 */
import { join } from 'node:path';
import type OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { chatLine, createBatch, runBatch } from '../support/batch-runs';
import { createApiKey, createVirtualKey, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(120_000);

// As the dashboard writes a cost (format.ts).
const smallCost = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 2 });
const cost = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 });
const formatCost = (usd: number) => (usd === 0 ? '$0.00' : `$${usd < 0.01 ? smallCost.format(usd) : cost.format(usd)}`);
const integer = new Intl.NumberFormat('en-US');
/** A time as the dashboard writes it in a list and in full, in a zone (format.ts). */
const shortTime = (iso: string, timeZone: string) =>
  new Intl.DateTimeFormat('en-US', { timeZone, month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(new Date(iso));
const fullTime = (iso: string, timeZone: string) =>
  new Intl.DateTimeFormat('en-US', { timeZone, dateStyle: 'medium', timeStyle: 'long' }).format(new Date(iso));

describe('batches in a browser', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let runner: { id: string; key: string };
  let done: OpenAI.Batch;

  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const row = (id: string) => page.locator(`table.batch-table tbody tr[data-batch-id="${id}"]`);
  const cell = (id: string, label: string) => row(id).locator(`td[data-label="${label}"]`);
  const progressOf = async (id: string) => {
    const bar = row(id).getByRole('progressbar');
    return { now: await bar.getAttribute('aria-valuenow'), max: await bar.getAttribute('aria-valuemax'), label: await bar.getAttribute('aria-label') };
  };
  /** A batch's truth: its lines by status, its log rows' tokens and cost, its times. */
  const truthOf = async (id: string) => {
    const lines = await gateway.dataSource.query(`select status, count(*)::int as n from batch_lines where batch_id = $1 group by status`, [id]);
    const [rows] = await gateway.dataSource.query(
      `select count(*)::int as rows, coalesce(sum(cost_usd), 0)::float8 as cost, coalesce(sum(prompt_tokens), 0)::int as prompt,
              coalesce(sum(completion_tokens), 0)::int as completion,
              (count(*) filter (where cost_usd is null and prompt_tokens is not null))::int as unpriced
       from request_logs where batch_id = $1`,
      [id],
    );
    const [batch] = await gateway.dataSource.query(`select created_at, completed_at from batches where id = $1`, [id]);
    return {
      lines: Object.fromEntries(lines.map((line: { status: string; n: number }) => [line.status, line.n])) as Record<string, number>,
      ...(rows as { rows: number; cost: number; prompt: number; completion: number; unpriced: number }),
      created: (batch.created_at as Date).toISOString(),
      completed: batch.completed_at ? (batch.completed_at as Date).toISOString() : null,
    };
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    // One line at a time, so that a batch of slow lines stays in progress for a while.
    gateway = await startTestGateway({ BATCH_POLL_MS: '50', BATCH_NATIVE_POLL_MS: '50', BATCH_CONCURRENCY: '1' });
    await createVirtualKey(gateway, { slug: 'groq', provider: 'groq', key: 'gsk-batch-000000', custom_host: `${mock.url}/openai/v1` });
    runner = await createApiKey(gateway, { name: 'eval runner', role: 'admin' });
    // Two priced lines, one answered 400, one of a model without a price.
    const batch = await runBatch(openai(gateway, { 'x-gateway-virtual-key': 'groq' }, 'unused', runner.key), [
      chatLine('first', 'a priced answer'),
      chatLine('second', 'another priced answer'),
      chatLine('refused', 'x', 'mock-error-400'),
      chatLine('free', 'no price for this model', 'house-model-7b'),
    ]);
    expect(batch.status).toBe('completed');
    done = batch;
    await gateway.flushLogs();
    browser = await startBrowser();
    context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, timezoneId: 'America/Los_Angeles', locale: 'en-US' });
    page = await context.newPage();
    await signIn(page, url(''), gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  it('lists the batches with status, progress, lines, cost, creation and key, and updates a running one', async () => {
    const truth = await truthOf(done.id);
    expect(truth.lines).toEqual({ succeeded: 3, failed: 1 });
    expect(truth.cost).toBeGreaterThan(0);
    expect(truth.unpriced).toBe(1);
    // A batch of four slow lines, one at a time: in progress while the page is read.
    const slow = await createBatch(
      openai(gateway, { 'x-gateway-virtual-key': 'groq' }, 'unused', runner.key),
      Array.from({ length: 4 }, (_, i) => chatLine(`slow-${i}`, `slow ${i}`, 'mock-slow-2500')),
    );

    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Batches' }).click();
    await page.getByRole('heading', { name: 'Batches', level: 1 }).waitFor();
    await row(done.id).waitFor();
    await row(slow.id).waitFor();
    // Newest first.
    expect(await page.locator('table.batch-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-batch-id')))).toEqual([
      slow.id,
      done.id,
    ]);

    expect(await cell(done.id, 'Batch').getByRole('link').innerText()).toBe(done.id);
    expect(await cell(done.id, 'Batch').locator('.tag').innerText()).toBe('OpenAI');
    expect(await cell(done.id, 'Status').getByTestId('batch-status-tag').innerText()).toBe('Completed');
    expect(await progressOf(done.id)).toEqual({ now: '4', max: '4', label: '4 of 4 lines ended' });
    expect(await cell(done.id, 'Status').locator('.bar-text').innerText()).toBe('4 / 4');
    expect(await cell(done.id, 'Lines').innerText()).toBe('3 succeeded · 1 failed');
    expect(await cell(done.id, 'Cost').innerText()).toBe(`${formatCost(truth.cost)} + 1 unpriced`);
    expect(await cell(done.id, 'Runs').innerText()).toBe('by the gateway');
    expect(await cell(done.id, 'Created').innerText()).toBe(shortTime(truth.created, 'America/Los_Angeles'));
    expect(await cell(done.id, 'API key').innerText()).toBe('eval runner');
    expect(await page.locator('table.batch-table thead th', { hasText: 'Created' }).innerText()).toMatch(/\((PST|PDT)\)/);

    // The slow batch runs: fewer lines ended than it has.
    expect(await cell(slow.id, 'Status').getByTestId('batch-status-tag').innerText()).toBe('In progress');
    const running = await progressOf(slow.id);
    expect(running.max).toBe('4');
    expect(Number(running.now)).toBeLessThan(4);
    await page.screenshot({ path: join(SHOTS, 'batches-list.png'), fullPage: true });

    // By status: the running one alone, or the completed one alone.
    await page.getByLabel('Status').selectOption('running');
    await page.waitForURL(/\/dashboard\/batches\?status=running$/);
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('table.batch-table tbody tr').length === 1);
    expect(await row(slow.id).count()).toBe(1);
    await page.getByLabel('Status').selectOption('completed');
    await row(done.id).waitFor();
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('table.batch-table tbody tr').length === 1);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('heading', { name: 'No batches match these filters' }).waitFor();
    await page.getByLabel('Status').selectOption('');

    // Shown while it runs, read again until it has ended: all four lines, without a reload.
    await row(slow.id).getByTestId('batch-status-tag').filter({ hasText: 'Completed' }).waitFor({ timeout: 30_000 });
    expect(await progressOf(slow.id)).toEqual({ now: '4', max: '4', label: '4 of 4 lines ended' });
    expect(await cell(slow.id, 'Lines').innerText()).toBe('4 succeeded · 0 failed');
    await gateway.flushLogs();
    const slowTruth = await truthOf(slow.id);
    expect(slowTruth.rows).toBe(4);
    // Its model has no price: its cost is unknown, told apart, never a made-up $0.
    expect(slowTruth.unpriced).toBe(4);
    expect(await cell(slow.id, 'Cost').innerText()).toBe(`${formatCost(slowTruth.cost)} + 4 unpriced`);
  });

  it("shows a batch's lines by status, tokens, cost, times in the zone chosen, files, and links to its lines in the log", async () => {
    const truth = await truthOf(done.id);
    await page.goto(url('/batches'));
    await row(done.id).getByRole('link', { name: done.id }).click();
    await page.waitForURL(new RegExp(`/dashboard/batches/${done.id}$`));
    await page.getByRole('heading', { name: `Batch ${done.id}` }).waitFor();

    const lines = page.getByTestId('batch-lines');
    const count = (status: string) => lines.locator(`tr[data-line-status="${status}"] td.num`).innerText();
    expect(await count('succeeded')).toBe('3');
    expect(await count('failed')).toBe('1');
    expect(await count('errored')).toBe('0');
    expect(await count('pending')).toBe('0');
    expect(await count('total')).toBe('4');
    expect(await page.getByTestId('batch-state').getByRole('progressbar').getAttribute('aria-valuenow')).toBe('4');
    expect(await page.getByTestId('batch-tokens').innerText()).toBe(`${integer.format(truth.prompt)} in / ${integer.format(truth.completion)} out`);
    expect(truth.prompt).toBeGreaterThan(0);
    expect(await page.getByTestId('batch-cost').innerText()).toBe(`${formatCost(truth.cost)} + 1 unpriced`);
    const fact = (name: string, list = 'batch-facts') =>
      page
        .getByTestId(list)
        .locator('dt', { hasText: new RegExp(`^${name}$`) })
        .locator('xpath=following-sibling::dd[1]')
        .innerText();
    expect(await fact('Shape')).toBe('OpenAI (/v1/batches)');
    expect(await fact('Endpoint')).toBe('/v1/chat/completions');
    expect(await fact('Runs')).toBe('by the gateway, line by line');
    expect(await fact('API key')).toBe(`eval runner ${runner.id}`);
    expect(await fact('Created')).toBe(fullTime(truth.created, 'America/Los_Angeles'));
    expect(await fact('Ended')).toBe(fullTime(truth.completed!, 'America/Los_Angeles'));
    const file = (name: string) => fact(name, 'batch-files');
    expect(await file('Input')).toBe(done.input_file_id);
    expect(await file('Output')).toBe(done.output_file_id);
    expect(await file('Errors')).toBe(done.error_file_id);
    await page.screenshot({ path: join(SHOTS, 'batch-detail.png'), fullPage: true });

    // Times follow the zone chosen in the header.
    await page.locator('#zone-switch').selectOption('utc');
    await page.getByRole('heading', { name: `Batch ${done.id}` }).waitFor();
    await page
      .getByTestId('batch-facts')
      .locator('dt', { hasText: /^Created$/ })
      .waitFor();
    expect(await fact('Created')).toBe(fullTime(truth.created, 'UTC'));
    await page.locator('#zone-switch').selectOption('local');

    // Its lines in the log: the four requests that ran, each a batch line.
    await page.getByRole('link', { name: 'Its lines in the request log' }).click();
    await page.waitForURL(new RegExp(`/dashboard/logs\\?batch_id=${done.id}$`));
    await page.getByRole('list', { name: 'Active filters' }).getByText(done.id).waitFor();
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('a[data-log-id]').length === 4);
    const [logged] = await gateway.dataSource.query(
      `select array_agg(id::text order by id) as ids from request_logs where batch_id = $1 and kind = 'request'`,
      [done.id],
    );
    expect((await page.locator('a[data-log-id]').evaluateAll((links) => links.map((a) => a.getAttribute('data-log-id')))).sort()).toEqual(logged.ids.sort());
    expect(await page.locator('table.log-table tbody tr .tag', { hasText: /^batch$/ }).count()).toBe(4);

    // A line's detail names its batch and custom_id, and links back to the batch.
    const [refused] = await gateway.dataSource.query(`select id from request_logs where batch_id = $1 and custom_id = 'refused'`, [done.id]);
    await page.locator(`a[data-log-id="${refused.id}"]`).click();
    await page.getByTestId('log-batch').waitFor();
    expect(await page.getByTestId('log-custom-id').innerText()).toBe('refused');
    await page.getByTestId('log-batch').getByRole('link', { name: done.id }).click();
    await page.waitForURL(new RegExp(`/dashboard/batches/${done.id}$`));
    await page.getByRole('heading', { name: `Batch ${done.id}` }).waitFor();
  });

  it('filters the log by batch from its filter form', async () => {
    await page.goto(url('/logs'));
    await page.getByRole('button', { name: /^More filters/ }).click();
    await page.getByLabel('Batch', { exact: true }).fill('not-a-batch');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('alert').filter({ hasText: 'The batch is its id' }).waitFor();
    await page.getByLabel('Batch', { exact: true }).fill(done.id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(new RegExp(`/dashboard/logs\\?batch_id=${done.id}$`));
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('a[data-log-id]').length === 4);
  });

  it('tells the batch lines among the requests on Analytics', async () => {
    await gateway.flushLogs();
    const [truth] = await gateway.dataSource.query(
      `select (count(*) filter (where kind = 'request'))::int as n, coalesce(sum(cost_usd), 0)::float8 as cost,
              (count(*) filter (where cost_usd is null and prompt_tokens is not null))::int as unpriced
       from request_logs where batch_id is not null`,
    );
    expect(truth.n).toBe(8);
    await page.goto(url('/analytics'));
    await page.getByTestId('batch-lines').waitFor();
    expect(await page.getByTestId('batch-lines').innerText()).toBe(`of which 8 batch lines, ${formatCost(truth.cost)} + ${truth.unpriced} unpriced`);
    await page.getByTestId('batch-lines').getByRole('link', { name: '8 batch lines' }).click();
    await page.waitForURL(/\/dashboard\/batches$/);
  });
});
