/**
 * The numbers of the dashboard, in a real browser (issue 25, "Wrong today"): bars in
 * proportion, unknown prices never shown as $0, small costs written out, a guardrail denial
 * that cost nothing, a custom range and bucket size that just work, drill-downs that keep
 * the period, readable empty charts, an over-budget warning, one retryable error when the
 * gateway is down, and a second confirmation before revoking the key you are signed in with.
 * Log rows are written straight into the table, with the costs chosen. Screenshots go to
 * artifacts/screenshots/.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn as signInOnForm, SHOTS, startBrowser } from './browser-support';
import { createApiKey, createVirtualKey, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

describe('dashboard numbers in a browser', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let browser: Browser;
  let page: Page;
  let denialId: string;

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

  /** A log row written straight into the table. */
  const insertLog = async (fields: {
    user: string;
    model: string;
    cost: number | null;
    minutesAgo?: number;
    status?: number;
    tokens?: boolean;
    error?: unknown;
  }) => {
    const [{ id }] = await gateway.dataSource.query(
      `insert into request_logs (id, trace_id, created_at, operation, status_code, latency_ms, cost_usd, prompt_tokens, completion_tokens, model, provider, end_user, error)
       values (gen_random_uuid(), gen_random_uuid()::text, $1, 'chat.completions', $2, 120, $3, $4, $5, $6, 'openai', $7, $8) returning id`,
      [
        minutesAgo(fields.minutesAgo ?? 5),
        fields.status ?? 200,
        fields.cost,
        fields.tokens === false ? null : 10,
        fields.tokens === false ? null : 5,
        fields.model,
        fields.user,
        fields.error ?? null,
      ],
    );
    return id as string;
  };

  const signIn = (key: string) => signInOnForm(page, url(''), key);
  const chartsDrawn = () => page.waitForFunction(() => (globalThis as any).document.querySelectorAll('.chart canvas').length === 4);

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    // The last hour: u-big costs $0.0019 over 3 requests, u-small $0.0012 over 2; u-embed one embedding-sized cost.
    for (const cost of [0.001, 0.0005, 0.0004]) await insertLog({ user: 'u-big', model: 'gpt-4o', cost });
    for (const cost of [0.0007, 0.0005]) await insertLog({ user: 'u-small', model: 'gpt-4o-mini', cost });
    await insertLog({ user: 'u-embed', model: 'text-embedding-3-small', cost: 1.6e-7 });
    // A model without a price: 3 requests with tokens and no cost.
    for (let i = 0; i < 3; i++) await insertLog({ user: 'u-unpriced', model: 'house-model', cost: null });
    // A guardrail denial: never sent, no tokens, no cost.
    denialId = await insertLog({
      user: 'u-denied',
      model: 'gpt-4o-mini',
      cost: null,
      status: 446,
      tokens: false,
      error: { type: 'guardrail_denied', message: 'Denied by guardrail' },
    });
    // Three hours ago: outside the last hour.
    await insertLog({ user: 'u-big', model: 'gpt-4o', cost: 0.5, minutesAgo: 180 });
    // A virtual key whose budget one request exceeds.
    await createVirtualKey(gateway, { slug: 'tight', key: 'sk-tight', custom_host: `${mock.url}/v1`, budget_limit_usd: 0.00001, budget_period: 'monthly' });
    await openai(gateway, { 'x-gateway-virtual-key': 'tight' }).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] });
    await gateway.flushLogs();

    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  /** Each row's bar width as a share of its track, and the value it shows. */
  const bars = (column: string) =>
    page.locator(`table.summary-table tbody td[data-label="${column}"]`).evaluateAll((cells: any[]) =>
      cells.map((cell) => ({
        share: cell.querySelector('.bar').getBoundingClientRect().width / cell.querySelector('.bar-track').getBoundingClientRect().width,
        text: cell.querySelector('.bar-text').textContent as string,
      })),
    );

  it('1. draws the bars in proportion to the value, the largest full width', async () => {
    await page.goto(url('/analytics?range=1h&group_by=user'));
    await page.locator('table.summary-table tbody th', { hasText: 'u-small' }).waitFor();
    const rows = await page.locator('table.summary-table tbody th').allInnerTexts();
    const cost = await bars('Cost');
    const big = cost[rows.indexOf('u-big')];
    const small = cost[rows.indexOf('u-small')];
    expect(big).toEqual({ share: expect.closeTo(1, 2), text: '$0.0019' });
    expect(small.text).toBe('$0.0012');
    expect(small.share).toBeCloseTo(0.0012 / 0.0019, 2);
    const requests = await bars('Requests');
    expect(requests[rows.indexOf('u-big')].share).toBeCloseTo(1, 2);
    expect(requests[rows.indexOf('u-small')].share).toBeCloseTo(2 / 3, 2);
    expect(requests[rows.indexOf('u-embed')].share).toBeCloseTo(1 / 3, 2);
    await shot('numbers-bars-by-user');
  });

  it('2. says how many requests have no price, and never shows their cost as $0', async () => {
    await page.goto(url('/analytics?range=1h&group_by=model'));
    await chartsDrawn();
    expect(await page.getByTestId('unpriced-total').innerText()).toBe('3 requests without a price');
    const house = page.locator('table.summary-table tbody tr', { hasText: 'house-model' });
    expect(await house.locator('td[data-label="Cost"]').innerText()).toBe('no price (3 without a price)');
    expect(await house.locator('.bar-cost').evaluate((bar: any) => bar.getBoundingClientRect().width)).toBe(0);
    expect(await page.locator('table.summary-table').innerText()).not.toMatch(/\$0\.00\b/);
    await shot('numbers-unpriced');
  });

  it('2b. shows a key\'s unpriced requests beside its spend ("$X + N unpriced"), on the API keys page and in Analytics', async () => {
    const key = await createApiKey(gateway, { name: 'unpriced spender' });
    const row = async (cost: number | null) => {
      const id = await insertLog({ user: 'u-key-spend', model: cost === null ? 'house-model' : 'gpt-4o', cost });
      await gateway.dataSource.query('update request_logs set api_key_id = $1 where id = $2', [key.id, id]);
    };
    for (const cost of [0.002, null, null]) await row(cost);
    await page.goto(url('/api-keys'));
    const listed = page.locator('tr', { hasText: 'unpriced spender' });
    expect((await listed.getByTestId('unpriced').innerText()).trim()).toBe('+ 2 unpriced');
    expect(await listed.innerText()).toContain('no budget · $0.002 + 2 unpriced spent');
    await page.goto(url('/analytics?range=1h'));
    const used = page.locator('tr', { hasText: 'unpriced spender' });
    expect((await used.getByTestId('unpriced').innerText()).trim()).toBe('+ 2 unpriced');
    await shot('numbers-unpriced-key');
  });

  it('2c. leads from the requests without a price to a form that sets one (an override), and removes it again', async () => {
    await page.goto(url('/analytics?range=1h&group_by=model'));
    await chartsDrawn();
    await page.getByRole('link', { name: 'Set prices' }).click();
    await page.getByRole('heading', { name: 'Prices', exact: true }).waitFor();
    const unpriced = page.getByTestId('unpriced-models');
    await unpriced.waitFor();
    expect(await unpriced.innerText()).toContain('house-model: 5 requests without a price in 30 days');
    await unpriced.getByRole('button', { name: 'Set a price for house-model' }).click();
    const form = page.getByRole('form', { name: 'Set a price' });
    expect(await form.getByLabel('Model').inputValue()).toBe('house-model');
    await form.getByLabel('Provider').fill('openai');
    await form.getByLabel('Input (USD per million tokens)', { exact: true }).fill('1.5');
    await form.getByLabel('Output (USD per million tokens)', { exact: true }).fill('6');
    await form.getByRole('button', { name: 'Save the price' }).click();
    await page.getByText('Price of openai house-model set').waitFor();
    const row = page.getByTestId('price-list').locator('tr', { hasText: 'override' });
    expect(await row.innerText()).toContain('$1.5');
    const stored = await admin(gateway, 'GET', '/v1/prices?provider=openai&model=house-model');
    expect(stored.body.data).toEqual([expect.objectContaining({ provider: 'openai', model: 'house-model', source: 'override', input: 1.5, output: 6 })]);
    await shot('numbers-prices');
    await row.getByRole('button', { name: 'Remove the override' }).click();
    await page.getByText('No price known for this provider and model.').waitFor();
    expect((await admin(gateway, 'GET', '/v1/prices?provider=openai&model=house-model')).body.data).toEqual([]);
  });

  it('3. writes small costs out, never in scientific notation', async () => {
    await page.goto(url('/analytics?range=1h&group_by=model'));
    const embedding = page.locator('table.summary-table tbody tr', { hasText: 'text-embedding-3-small' });
    expect(await embedding.locator('td[data-label="Cost"]').innerText()).toBe('$0.00000016');
    await page.locator('details.data-details summary').click();
    expect(await page.locator('.analytics').innerText()).not.toMatch(/\de-\d/);
    await page.goto(url('/logs?user=u-embed'));
    expect(await page.locator('table.log-table tbody td[data-label="Cost"]').first().innerText()).toBe('$0.00000016');
  });

  it('4. says a guardrail denial was not sent and cost nothing', async () => {
    await page.goto(url(`/logs?user=u-denied`));
    expect(await page.locator('table.log-table tbody td[data-label="Cost"]').first().innerText()).toBe('no cost');
    await page.locator(`a[data-log-id="${denialId}"]`).click();
    const cost = page.getByTestId('detail-cost');
    await cost.waitFor();
    expect(await cost.innerText()).toBe('Not sent to the provider (a guardrail denied it): no cost');
    await shot('numbers-guardrail-denial');
  });

  it('5. opens a custom range on the period shown, without errors, and picks a bucket size that fits', async () => {
    await page.goto(url('/analytics?range=7d'));
    await chartsDrawn();
    await page.locator('#a-range').selectOption('custom');
    await page.waitForURL(/range=custom.*from=/);
    await chartsDrawn();
    expect(await page.getByRole('alert').count()).toBe(0);
    const from = await page.locator('#a-from').inputValue();
    expect(Date.now() - new Date(from).getTime()).toBeGreaterThan(7 * 86_400_000 - 120_000);
    expect(await page.locator('#a-to').inputValue()).not.toBe('');
    await shot('numbers-custom-range');

    await page.goto(url('/analytics?range=30d&interval=minute'));
    await chartsDrawn();
    expect(await page.getByTestId('interval-note').innerText()).toMatch(/Per minute would be 43,20\d buckets.*showing per hour/);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.getByText('Requests, errors and recoveries per hour').waitFor();
    await shot('numbers-interval-fitted');
  });

  it('6. keeps the period when drilling down, so the log lists the requests counted', async () => {
    await page.goto(url('/analytics?range=1h&group_by=user'));
    const link = page.locator('table.summary-table tbody th a', { hasText: 'u-big' });
    await link.waitFor();
    const row = page.locator('table.summary-table tbody tr', { hasText: 'u-big' });
    expect(await row.locator('td[data-label="Requests"]').innerText()).toBe('3');
    const target = new URL(`http://x${(await link.getAttribute('href'))!}`);
    expect(target.searchParams.get('user')).toBe('u-big');
    expect(Date.parse(target.searchParams.get('to')!) - Date.parse(target.searchParams.get('from')!)).toBe(3_600_000);
    await link.click();
    await page.waitForURL(/\/logs\?/);
    // Three in the last hour; the row of three hours ago is outside the period.
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('table.log-table tbody tr').length === 3);
    await shot('numbers-drill-down');
  });

  it('8. labels an empty chart 0 and 1, warns of a key over budget, and shows one retryable error with the gateway down', async () => {
    await page.goto(url('/analytics?range=custom&from=2020-01-01T00:00:00.000Z&to=2020-01-02T00:00:00.000Z'));
    await chartsDrawn();
    const ticks = await page.locator('.chart-box').evaluateAll((boxes: any[]) => boxes.map((box) => box.dataset.yTicks as string));
    // Requests, tokens: whole numbers only, each once.
    for (const chart of [ticks[0], ticks[2]]) expect(chart.split(' | ')).toEqual(['0', '1']);
    await shot('numbers-empty-charts');

    await page.goto(url('/analytics'));
    const tight = page.locator('table.budget-table tbody tr', { hasText: 'tight' });
    await tight.waitFor();
    expect(await tight.getByTestId('over-budget').innerText()).toMatch(/^Over budget by \$0\.0000\d+: its requests are refused \(402\) until the period ends$/);

    await page.goto(url('/virtual-keys'));
    const tightKey = page.locator('table.resource-table tbody tr', { hasText: 'tight' });
    expect(await tightKey.getByTestId('over-budget').innerText()).toBe('over budget: requests refused');
    await shot('numbers-over-budget-keys');
    expect(await page.getByTestId('over-budget').count()).toBe(1);

    const gatewayApi = (u: URL) => u.pathname.startsWith('/v1/');
    await page.route(gatewayApi, (route) => route.abort('connectionrefused'));
    await page.goto(url('/analytics'));
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.count()).toBe(1);
    expect(await alert.locator('p', { hasText: /could not be reached/ }).count()).toBe(1);
    await shot('numbers-gateway-down');
    await page.unroute(gatewayApi);
    await alert.getByRole('button', { name: 'Retry' }).click();
    await chartsDrawn();
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it.each(['member', 'viewer'])('a %s uses Logs and Analytics without an error, and a page it may not use says so', async (role) => {
    const key = await createApiKey(gateway, { name: `a ${role}`, role });
    const own = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await signInOnForm(own, url(''), key.key);
      await own.goto(url('/analytics?range=1h'));
      await own.getByRole('heading', { name: 'Analytics' }).waitFor();
      await own.waitForFunction(() => !(globalThis as any).document.body.innerText.includes('Loading…'));
      expect(await own.locator('[role="alert"]').count()).toBe(0);
      // The budgets of the keys are an admin's to read: left out, not an error.
      expect(await own.getByRole('heading', { name: 'Budget used per key' }).count()).toBe(0);
      await own.goto(url('/logs'));
      await own.locator('table.log-table, .empty').first().waitFor();
      expect(await own.locator('[role="alert"]').count()).toBe(0);
      // Not in the menu, and at its address it says why, with no "New API key".
      expect(await own.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).count()).toBe(0);
      await own.goto(url('/api-keys'));
      expect(await own.getByTestId('page-refused').innerText()).toContain(`This page needs role owner or admin; the role of this sign-in is ${role}.`);
      expect(await own.getByRole('button', { name: /New API key/ }).count()).toBe(0);
      await own.screenshot({ path: join(SHOTS, `numbers-role-${role}.png`), fullPage: true });
    } finally {
      await own.close();
    }
  });

  it('asks a second, explicit confirmation before revoking the key you are signed in with, then signs you out', async () => {
    const other = await createApiKey(gateway, { name: 'someone else', role: 'admin' });
    const mine = await createApiKey(gateway, { name: 'my own admin key', role: 'admin' });
    // A new browser (its own cookies): not signed in yet.
    await page.close();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(mine.key);
    await page.goto(url('/api-keys'));
    // Another key: one confirmation.
    await page.getByRole('button', { name: 'Revoke someone else' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByText('Revoked API key “someone else”.').waitFor();
    const revoked = async (id: string) =>
      (await gateway.dataSource.query('select revoked_at is not null as revoked from api_keys where id = $1', [id]))[0].revoked;
    expect(await revoked(other.id)).toBe(true);

    await page.getByRole('button', { name: 'Revoke my own admin key' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    const second = page.getByRole('group', { name: 'Confirm again: revoke my own admin key and sign out' });
    await second.getByText('is the key you are signed in with: revoking it signs you out').waitFor();
    await shot('numbers-revoke-own-key');
    // Cancel keeps the key.
    await second.getByRole('button', { name: 'Cancel' }).click();
    expect(await revoked(mine.id)).toBe(false);
    await page.getByRole('button', { name: 'Revoke my own admin key' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByRole('button', { name: 'Revoke and sign out' }).click();
    await page.getByLabel('Gateway API key').waitFor();
    expect(await revoked(mine.id)).toBe(true);
  });
});
