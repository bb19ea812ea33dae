/**
 * People and keys in a browser (issue 36 item 5): requests sent as several end users, with
 * two API keys, through the gateway to a mock provider; the End users page lists everyone
 * who made requests (first and last seen, requests, spend with unpriced requests apart,
 * budget) and those with a budget only, finds them by prefix; a user's own view and an API
 * key's view show their requests, spend, top models (and the key's end users), each figure
 * equal to what was sent and what the log priced.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { call, createApiKey, createVirtualKey } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';
import { signIn, SHOTS, startBrowser } from './browser-support';

jest.setTimeout(120_000);

// As the dashboard writes a cost (format.ts).
const smallCost = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 2 });
const cost = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 });
const formatCost = (usd: number) => (usd === 0 ? '$0.00' : `$${usd < 0.01 ? smallCost.format(usd) : cost.format(usd)}`);

/** What each end user sent: model, and whether through the app's key. */
const SENT: { user: string; model: string; appKey: boolean }[] = [
  { user: 'alice', model: 'gpt-4o-mini', appKey: true },
  { user: 'alice', model: 'gpt-4o-mini', appKey: true },
  { user: 'alice', model: 'gpt-4o', appKey: true },
  { user: 'bob', model: 'gpt-4o', appKey: false },
  { user: 'bob', model: 'gpt-4o', appKey: false },
  { user: 'bob', model: 'mock-error-500', appKey: false },
  // A model without a price: spend unknown, counted apart.
  { user: 'carol', model: 'house-model-7b', appKey: true },
  { user: 'carol', model: 'house-model-7b', appKey: true },
];

describe('end users and API keys in a browser', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let browser: Browser;
  let page: Page;
  let appKey: { id: string; key: string };

  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const row = (user: string) =>
    page.locator('table.end-user-table tbody tr', { has: page.locator('td[data-label="User"]', { hasText: new RegExp(`^${user}$`) }) });
  const cell = (user: string, label: string) => row(user).locator(`td[data-label="${label}"]`).innerText();
  /** A date and time as the page writes them (the browser's locale). */
  const dateTime = (iso: string) =>
    page.evaluate((at) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'long' }).format(new Date(at)), iso);
  /** The log's truth for some rows: requests, errors, priced cost, unpriced requests, first and last request. */
  const logged = async (where: string, params: unknown[]) => {
    const [found] = await gateway.dataSource.query(
      `select count(*)::int as requests, (count(*) filter (where status_code >= 400))::int as errors, coalesce(sum(cost_usd), 0)::float8 as cost,
              (count(*) filter (where cost_usd is null and prompt_tokens is not null))::int as unpriced, min(created_at) as first, max(created_at) as last
       from request_logs where ${where}`,
      params,
    );
    return found as { requests: number; errors: number; cost: number; unpriced: number; first: Date; last: Date };
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ ROLLUP_COMPACT_INTERVAL_MS: '200' });
    await createVirtualKey(gateway, { slug: 'people-openai', key: 'sk-people', custom_host: `${mock.url}/v1` });
    appKey = await createApiKey(gateway, { name: 'support app', role: 'member' });
    for (const { user, model, appKey: viaApp } of SENT) {
      const response = await call(gateway, '/v1/chat/completions', {
        headers: { 'x-gateway-virtual-key': 'people-openai' },
        body: { model, messages: [{ role: 'user', content: `Hello from ${user}` }], user },
        apiKey: viaApp ? appKey.key : undefined,
      });
      expect(response.status).toBe(model === 'mock-error-500' ? 500 : 200);
    }
    await gateway.flushLogs();
    // A budget for someone who has not made a request yet.
    expect((await call(gateway, '/v1/end-users', { body: { user: 'dora', budget_limit_usd: 2, budget_period: 'monthly' } })).status).toBe(201);
    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await signIn(page, url(''), gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  it('lists everyone who made requests with first and last seen, requests and spend, and those with a budget only', async () => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'End users' }).click();
    await page.getByRole('heading', { name: 'End users', level: 1 }).waitFor();
    await row('alice').waitFor();
    expect(await page.locator('table.end-user-table tbody td[data-label="User"]').allInnerTexts()).toEqual(
      expect.arrayContaining(['alice', 'bob', 'carol', 'dora']),
    );
    expect(await page.locator('table.end-user-table tbody tr').count()).toBe(4);
    for (const user of ['alice', 'bob', 'carol']) {
      const sent = SENT.filter((s) => s.user === user);
      const truth = await logged('end_user = $1', [user]);
      expect(truth.requests).toBe(sent.length);
      const failed = sent.filter((s) => s.model === 'mock-error-500').length;
      expect(await cell(user, 'Requests')).toBe(failed ? `${sent.length} (${failed} failed)` : String(sent.length));
      expect(await cell(user, 'Spend')).toBe(`${formatCost(truth.cost)}${truth.unpriced ? ` + ${truth.unpriced} unpriced` : ''}`);
      expect(await cell(user, 'First seen')).toBe(await dateTime(truth.first.toISOString()));
      expect(await cell(user, 'Last seen')).toBe(await dateTime(truth.last.toISOString()));
    }
    // Carol's spend is unknown, not $0: two requests without a price.
    expect(await cell('carol', 'Spend')).toBe('$0.00 + 2 unpriced');
    expect((await logged(`end_user = 'alice'`, [])).cost).toBeGreaterThan(0);
    // Dora has a budget and no requests yet.
    expect(await cell('dora', 'Requests')).toBe('0');
    expect(await cell('dora', 'First seen')).toBe('—');
    expect(await cell('dora', 'Budget')).toContain('of $2.00 monthly');
    expect(await page.getByTestId('end-user-count').innerText()).toBe('4 of 4 end users · Last 30 days');
    await page.screenshot({ path: join(SHOTS, 'end-users-activity.png'), fullPage: true });

    // A budget for bob through the resource form, from his row.
    await row('bob').getByRole('button', { name: 'Set a budget for bob' }).click();
    expect(await page.getByLabel('User', { exact: true }).inputValue()).toBe('bob');
    await page.getByLabel('Budget (USD)').fill('3');
    await page.getByRole('button', { name: 'Create end user' }).click();
    await page.getByRole('status').filter({ hasText: 'Created end user “bob”' }).waitFor();
    await row('bob').getByRole('button', { name: 'Edit bob' }).waitFor();
    expect(await cell('bob', 'Budget')).toContain('of $3.00');

    // Prefix search, kept in the URL.
    await page.getByLabel('User begins with').fill('B');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/dashboard\/end-users\?q=B$/);
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('table.end-user-table tbody tr').length === 1);
    expect(await page.locator('table.end-user-table tbody td[data-label="User"]').allInnerTexts()).toEqual(['bob']);

    // From bob to his requests in the log.
    await row('bob').getByRole('link', { name: 'See requests of bob' }).click();
    await page.waitForURL(/\/dashboard\/logs\?user=bob$/);
  });

  it("shows one user's requests and spend over time, top models and links", async () => {
    await page.goto(url('/end-users'));
    await row('alice').getByRole('link', { name: 'alice', exact: true }).click();
    await page.waitForURL(/\/dashboard\/end-users\/alice$/);
    await page.getByRole('heading', { name: 'End user “alice”' }).waitFor();
    await page.getByTestId('top-models').waitFor();
    const truth = await logged(`end_user = 'alice'`, []);
    expect(await page.getByTestId('activity-requests').innerText()).toBe('3');
    expect(await page.getByTestId('activity-errors').innerText()).toBe('0');
    expect(await page.getByTestId('activity-spend').innerText()).toBe(formatCost(truth.cost));
    expect(await page.getByTestId('end-user-facts').innerText()).toContain(await dateTime(truth.first.toISOString()));
    const models = await page
      .getByTestId('top-models')
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => (td as any).innerText)));
    expect(models.sort()).toEqual([
      ['gpt-4o', '1'],
      ['gpt-4o-mini', '2'],
    ]);
    // Each chart names the zone of its axis (the browser's here).
    expect(await page.locator('figure.chart figcaption').allInnerTexts()).toEqual([
      expect.stringMatching(/^Requests and errors per day \(times in \S+\)$/),
      expect.stringMatching(/^Spend per day \(times in \S+\)$/),
    ]);
    await page.screenshot({ path: join(SHOTS, 'end-user-view.png'), fullPage: true });
    await page.getByRole('link', { name: 'Open in Analytics' }).click();
    await page.waitForURL(/\/dashboard\/analytics\?range=30d&user=alice$/);
    await page.getByRole('heading', { name: 'Over time' }).waitFor();
  });

  it("shows an API key's requests, spend, top models and end users", async () => {
    await page.goto(url('/api-keys'));
    await page.getByRole('link', { name: 'Activity of support app' }).click();
    await page.waitForURL(new RegExp(`/dashboard/api-keys/${appKey.id}/activity$`));
    await page.getByRole('heading', { name: 'Activity of API key “support app”' }).waitFor();
    await page.getByTestId('top-users').waitFor();
    const truth = await logged('api_key_id = $1', [appKey.id]);
    const sent = SENT.filter((s) => s.appKey);
    expect(truth.requests).toBe(sent.length);
    expect(await page.getByTestId('activity-requests').innerText()).toBe(String(sent.length));
    expect(await page.getByTestId('activity-spend').innerText()).toBe(`${formatCost(truth.cost)} + 2 unpriced`);
    const users = await page
      .getByTestId('top-users')
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => (td as any).innerText)));
    expect(users).toEqual([
      ['alice', '3'],
      ['carol', '2'],
    ]);
    const models = await page.getByTestId('top-models').locator('tbody tr td[data-label="Model"]').allInnerTexts();
    expect(models.sort()).toEqual(['gpt-4o', 'gpt-4o-mini', 'house-model-7b']);
    await page.screenshot({ path: join(SHOTS, 'api-key-activity.png'), fullPage: true });
    await page.getByRole('link', { name: 'See requests' }).click();
    await page.waitForURL(new RegExp(`/dashboard/logs\\?api_key_id=${appKey.id}$`));
  });
});
