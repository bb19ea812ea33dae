/**
 * The dashboard in a real browser (Debian's chromium through playwright-core): sign in,
 * the live request log, filters in the URL, one request's bodies and attempts, the
 * analytics and key pages, at desktop and phone widths. Requests go through the gateway
 * with the official OpenAI client to the mock upstream. Screenshots of every page are
 * written to artifacts/screenshots/.
 */
import * as http from 'node:http';
import * as zlib from 'node:zlib';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { SHOTS, startBrowser } from './browser-support';
import { call, createApiKey, createVirtualKey, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
import { startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

describe('dashboard in a browser', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let mcp: McpTestServer;
  let browser: Browser;
  let page: Page;
  let userKey: { key: string };
  let virtualKeyId: string;

  const send = async (user: string, team: string, model = 'gpt-4o-mini', extra: { stream?: boolean; headers?: Record<string, string> } = {}) => {
    const route: Record<string, string> = extra.headers?.['x-gateway-config'] ? {} : { 'x-gateway-virtual-key': 'openai-dash' };
    const client = openai(gateway, { ...route, 'x-gateway-metadata': JSON.stringify({ team }), ...extra.headers });
    if (extra.stream) {
      const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `Stream for ${user}` }], user, stream: true });
      for await (const _ of stream) void _;
      return;
    }
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: `Hello from ${user}` }], user }).catch((error: unknown) => {
      if (!model.startsWith('mock-error')) throw error;
    });
  };

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  /** Browser-side expressions (strings: the root tsconfig has no DOM types). */
  // Functions (not strings: the dashboard's CSP has no unsafe-eval) reading the page's globals.
  const logRowCount = (n: number) =>
    page.waitForFunction((count) => (globalThis as any).document.querySelectorAll('table.log-table tbody tr').length === count, n);
  const chartsDrawn = () => page.waitForFunction(() => (globalThis as any).document.querySelectorAll('.chart canvas').length === 4);
  const horizontalOverflow = () =>
    page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth) as Promise<number>;
  /** The user cells of the log table, as shown. */
  const userCells = () => page.locator('table.log-table tbody td[data-label="User"]').allInnerTexts();

  beforeAll(async () => {
    mock = await startMockUpstream();
    mcp = await startMcpTestServer();
    gateway = await startTestGateway({ MCP_ALLOWED_NETWORKS: '127.0.0.1' });
    virtualKeyId = (
      await createVirtualKey(gateway, {
        slug: 'openai-dash',
        key: 'sk-dashboard',
        custom_host: `${mock.url}/v1`,
        budget_limit_usd: 5,
        budget_period: 'monthly',
      })
    ).id;
    userKey = await createApiKey(gateway, { name: 'reader', role: 'user' });
    await send('alice', 'search');
    await send('alice', 'search', 'gpt-4o');
    await send('bob', 'ads', 'gpt-4o-mini', { stream: true });
    await send('bob', 'ads', 'mock-error-500');
    await send('dora', 'ads', 'unpriced-model-x');
    // A fallback: the first target fails, the second answers; two rows with one trace id.
    const target = (model: string) => ({ provider: 'openai', api_key: 'sk-test', custom_host: `${mock.url}/v1`, override_params: { model } });
    await send('erin', 'search', 'gpt-4o-mini', {
      headers: { 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [target('mock-error-503'), target('gpt-4o-mini')] }) },
    });
    await gateway.flushLogs();

    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
    await mcp?.close();
  });

  it('serves the app with cache headers, falls back to index.html for client routes, 404s missing files', async () => {
    const index = await fetch(url('/logs/some-id?user=x'));
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const asset = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const js = await fetch(`${gateway.url}${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(url('/assets/missing-123.js'))).status).toBe(404);
    expect((await fetch(url('/assets/..%2f..%2fpackage.json'))).status).toBe(404);

    // Compressed at build time: Brotli for a browser that takes it, gzip else, the file as it is for neither.
    const raw = (encoding: string) =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http
          .get(`${gateway.url}${asset}`, { headers: { 'accept-encoding': encoding } }, (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
          })
          .on('error', reject);
      });
    const plain = await raw('identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const brotli = await raw('gzip, deflate, br');
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.headers['content-type']).toMatch(/javascript/);
    expect(brotli.headers.vary).toMatch(/accept-encoding/i);
    expect(brotli.body.length).toBeLessThan(plain.body.length / 2);
    expect(zlib.brotliDecompressSync(brotli.body).equals(plain.body)).toBe(true);
    const gzip = await raw('gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gzip.body).equals(plain.body)).toBe(true);
  });

  it('refuses a wrong key in words, lets a member key read only what its role may, and signs in with an admin key', async () => {
    await page.goto(url(''));
    const input = page.getByLabel('Gateway API key');
    await input.fill('gk-not-a-real-key');
    await input.press('Enter');
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/not known to the gateway/);

    // A refused key on the form is not "your key stopped working".
    expect(await page.getByText(/stopped working/).count()).toBe(0);
    await shot('sign-in-error');

    // A member reads its own requests: the log and analytics, not the pages of admins.
    await input.fill(userKey.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    const menu = await page.getByRole('navigation').getByRole('link').allInnerTexts();
    expect(menu).toEqual(expect.arrayContaining(['Logs', 'Analytics']));
    expect(menu).not.toContain('API keys');
    expect(menu).not.toContain('Audit log');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await input.waitFor();

    await input.fill(gateway.adminKey);
    await input.press('Enter');
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    expect(page.url()).toBe(url('/logs'));
    // Signed in by the gateway's HttpOnly session cookie: the key is not kept in the page.
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0);
    expect((await page.context().cookies()).filter((c) => c.name === 'gateway_session').map((c) => ({ httpOnly: c.httpOnly, sameSite: c.sameSite }))).toEqual([
      { httpOnly: true, sameSite: 'Lax' },
    ]);
  });

  it('shows the request log newest first, with no price instead of $0 for an unpriced model', async () => {
    await page.locator('table.log-table tbody tr').first().waitFor();
    // 6 requests, one of them a fallback with a failed attempt: 7 rows, the attempt nested under its request (closed).
    expect(await page.locator('table.log-table tbody tr').count()).toBe(6);
    expect(await userCells()).toEqual(['erin', 'dora', 'bob', 'bob', 'alice', 'alice']);
    const erin = page.locator('table.log-table tbody tr', { hasText: 'erin' });
    expect(await erin.locator('.tag.recovered').innerText()).toBe('recovered');
    await erin.getByRole('button', { name: 'Show the 1 row nested under this request' }).click();
    await page.locator('table.log-table tbody tr.nested', { hasText: 'mock-error-503' }).waitFor();
    expect(await userCells()).toEqual(['erin', 'erin', 'dora', 'bob', 'bob', 'alice', 'alice']);
    await erin.first().getByRole('button', { name: 'Hide the 1 row nested under this request' }).click();
    const dora = page.locator('table.log-table tbody tr', { hasText: 'dora' });
    expect(await dora.locator('td[data-label="Cost"]').innerText()).toBe('no price');
    const bobError = page.locator('table.log-table tbody tr', { hasText: 'mock-error-500' });
    expect(await bobError.locator('td[data-label="Status"]').innerText()).toBe('500');
    await shot('logs');
  });

  it('adds new requests to the top while open, without a reload', async () => {
    await send('frank', 'ads');
    await gateway.flushLogs();
    await page.locator('table.log-table tbody tr').first().filter({ hasText: 'frank' }).waitFor({ timeout: 10_000 });
    expect(await page.locator('table.log-table tbody tr').count()).toBe(7);
  });

  it('filters by user and by metadata, with the filters in a URL that can be shared', async () => {
    // User and metadata are behind "More filters" (the compact bar holds search, time range, status and model).
    await page.getByRole('button', { name: 'More filters' }).click();
    await page.getByLabel('User', { exact: true }).fill('alice');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/user=alice/);
    await logRowCount(2);
    expect(await userCells()).toEqual(['alice', 'alice']);

    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await page.getByRole('button', { name: 'More filters' }).click();
    await page.getByLabel('Key', { exact: true }).fill('team');
    await page.getByLabel('Value', { exact: true }).fill('ads');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/metadata\.team=ads/);
    await logRowCount(4);
    expect((await userCells()).sort()).toEqual(['bob', 'bob', 'dora', 'frank']);

    // The same URL in another tab: after signing in there, the same view.
    const shared = page.url();
    const other = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await other.goto(shared);
    await other.getByLabel('Gateway API key').fill(gateway.adminKey);
    await other.getByLabel('Gateway API key').press('Enter');
    await other.locator('table.log-table tbody tr').first().waitFor();
    expect(await other.locator('table.log-table tbody tr').count()).toBe(4);
    expect(await other.getByRole('list', { name: 'Active filters' }).innerText()).toMatch(/metadata team: ads/);
    await other.close();
    await shot('logs-filtered');
  });

  it('opens a request with Enter: bodies, headers, cost and the rows of its trace; Escape closes it', async () => {
    await page.goto(url('/logs?user=erin&status=200'));
    await logRowCount(1);
    const first = page.locator('a[data-log-id]').first();
    await first.focus();
    await page.keyboard.press('Enter');
    const detail = page.getByRole('region', { name: /chat\.completions/ });
    // The conversation first (request-views.e2e-spec.ts), the bodies one tab away.
    await detail.getByRole('tab', { name: 'Raw JSON' }).click();
    await detail.getByRole('heading', { name: 'Response body' }).waitFor();
    expect(page.url()).toMatch(/\/dashboard\/logs\/[0-9a-f-]{36}\?user=erin&status=200$/);

    const requestBody = await detail.locator('pre[aria-label="Request body"]').innerText();
    expect(JSON.parse(requestBody)).toMatchObject({ messages: [{ role: 'user', content: 'Hello from erin' }], user: 'erin' });
    expect(JSON.parse(await detail.locator('pre[aria-label="Response body"]').innerText())).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { content: 'Hello from mock' } }],
    });
    const headers = await detail.locator('pre[aria-label="Request headers"]').innerText();
    expect(headers).toContain('[REDACTED]');
    expect(headers).not.toContain(gateway.adminKey);
    expect(await detail.getByTestId('detail-cost').innerText()).toMatch(/^\$\d/);

    // The request, and within it its failed first target.
    const attempts = detail.getByTestId('trace-row');
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).locator('> .span-row').innerText()).toMatch(/this one/);
    expect(await attempts.nth(1).innerText()).toMatch(/503/);
    await shot('log-detail');

    await page.keyboard.press('Escape');
    await detail.waitFor({ state: 'detached' });
    expect(page.url()).toBe(url('/logs?user=erin&status=200'));
    // Focus is back on the row that was open.
    await page.waitForFunction(() => Boolean((globalThis as any).document.activeElement?.getAttribute('data-log-id')));
  });

  it('shows a stream’s assembled answer and "no price known" for an unpriced model', async () => {
    await page.goto(url('/logs?user=dora'));
    await page.locator('a[data-log-id]').first().click();
    const detail = page.getByRole('region', { name: /unpriced-model-x/ });
    expect(await detail.getByTestId('detail-cost').innerText()).toMatch(/No price known/);

    await page.goto(url('/logs?user=bob&status=200'));
    await logRowCount(1);
    await page.locator('a[data-log-id]').first().click();
    const stream = page.getByRole('region', { name: /chat\.completions/ });
    await stream.getByRole('tab', { name: 'Raw JSON' }).click();
    await stream.getByText('A stream: this is the final object assembled from its events.').waitFor();
    expect(JSON.parse(await stream.locator('pre[aria-label="Response body"]').innerText())).toMatchObject({
      choices: [{ message: { content: 'Hello from mock' } }],
    });
  });

  it('charts the period and groups cost and requests, with the budget used per key', async () => {
    await page.goto(url('/analytics?group_by=model'));
    await page.getByRole('heading', { name: 'Analytics' }).waitFor();
    await chartsDrawn();
    // 7 requests (the fallback's failed try is not one), 1 failed, 1 recovered by the fallback.
    expect(await page.locator('.totals').innerText()).toMatch(/Requests\s+7\s+Errors\s+1 \(14\.3%\)\s+Recovered\s+1 \(14\.3%\)/);
    const summary = page.locator('table.summary-table');
    await summary.waitFor();
    expect(await summary.locator('tbody tr').count()).toBe(5); // gpt-4o-mini, gpt-4o, mock-error-500, mock-error-503, unpriced-model-x
    expect(await summary.locator('tbody tr').first().innerText()).toMatch(/gpt-4o/);

    await page.getByLabel('Group by').selectOption('metadata');
    await page.getByLabel('Metadata key').fill('team');
    await page.getByLabel('Metadata key').press('Enter');
    await page.waitForURL(/meta=team/);
    await page.waitForFunction(
      () =>
        [...(globalThis as any).document.querySelectorAll('table.summary-table tbody th')]
          .map((th: any) => th.textContent)
          .sort()
          .join() === 'ads,search',
    );

    const budget = page.locator('table.budget-table tbody tr', { hasText: 'openai-dash' });
    expect(await budget.innerText()).toMatch(/of \$5\.00/);
    await shot('analytics');

    // Over 30 days the percentiles come from the rollups' histograms, and the page says so.
    expect(await summary.locator('thead').innerText()).not.toMatch(/≈/);
    await page.locator('#a-range').selectOption('30d');
    await page.waitForURL(/range=30d/);
    await page.getByText('Latency per day (p50, p95, estimated)').waitFor();
    await page.locator('table.summary-table thead abbr', { hasText: '≈ p95' }).waitFor();
    expect(await page.locator('.totals').innerText()).toMatch(/Requests\s+7\s+Errors\s+1 /);
    await shot('analytics-30-days');

    // Virtual keys are named by slug and linked by id (a deleted key's slug can be given to a new key).
    await page.goto(url('/analytics?group_by=virtual_key&range=30d'));
    const link = page.locator('table.summary-table tbody th a', { hasText: 'openai-dash' });
    await link.waitFor();
    expect(await link.getAttribute('href')).toContain(`virtual_key=${virtualKeyId}`);
  });

  it('creates an API key and shows its secret once, edits it, and explains an API error', async () => {
    await page.goto(url('/api-keys'));
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('button', { name: 'New API key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('ci-bot');
    await page.getByLabel('Budget (USD)').fill('12.5');
    await page.getByLabel('Budget period').selectOption('monthly');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const secret = page.getByLabel('The new API key');
    await secret.waitFor();
    expect(await secret.inputValue()).toMatch(/^gk-/);
    await shot('api-keys-created');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await secret.waitFor({ state: 'detached' });

    const row = page.locator('table.resource-table tbody tr', { hasText: 'ci-bot' });
    expect(await row.innerText()).toMatch(/\$0\.00 of \$12\.50 monthly/);
    await row.getByRole('button', { name: 'Edit ci-bot' }).click();
    await page.getByLabel('Rate limits (JSON)').fill('[{"type": "requests", "unit": "rpm", "value": 0}]');
    await page.getByRole('button', { name: 'Save changes' }).click();
    // The API's own 400, shown in words next to the field it names.
    await page
      .locator('.resource-form [role="alert"]')
      .filter({ hasText: /rate_limits/ })
      .waitFor();
    await page.getByLabel('Rate limits (JSON)').fill('{oops');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText(/Rate limits \(JSON\) is not valid JSON/).waitFor();
    await page.getByLabel('Rate limits (JSON)').fill('');
    await page.getByLabel('Name', { exact: true }).fill('ci-bot-2');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved API key “ci-bot-2”.').waitFor();

    await page.locator('table.resource-table tbody tr', { hasText: 'ci-bot-2' }).getByRole('button', { name: 'Revoke ci-bot-2' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByText('Revoked API key “ci-bot-2”.').waitFor();
    await page.locator('table.resource-table tbody tr', { hasText: 'ci-bot-2' }).waitFor({ state: 'detached' });
    expect(await page.locator('table.resource-table tbody tr').allInnerTexts()).toEqual([
      expect.stringContaining('reader'),
      expect.stringContaining('bootstrap admin'),
    ]);
    await shot('api-keys');
  });

  it('lists virtual keys, configs and prompts, and creates a config', async () => {
    await page.goto(url('/virtual-keys'));
    await page.locator('table.resource-table tbody tr', { hasText: 'openai-dash' }).waitFor();
    await shot('virtual-keys');

    await page.goto(url('/configs'));
    await page.getByRole('heading', { name: 'No configs yet' }).waitFor();
    await page.getByRole('button', { name: 'New config' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Prod fallback');
    await page.getByLabel('Slug', { exact: true }).fill('prod-fallback');
    await page.getByLabel('Config (JSON)', { exact: true }).fill('{"strategy": {"mode": "fallback"}, "targets": [{"virtual_key": "openai-dash"}]}');
    await page.getByRole('button', { name: 'Create config' }).click();
    await page.locator('table.resource-table tbody tr', { hasText: 'prod-fallback' }).waitFor();
    await shot('configs');

    await page.goto(url('/prompts'));
    await page.getByRole('heading', { name: 'No prompts yet' }).waitFor();
    await shot('prompts');
  });

  it('is usable on a 390 px wide screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(url('/logs'));
    await page.locator('table.log-table tbody tr').first().waitFor();
    const overflow = await horizontalOverflow();
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('logs-narrow');
    await page.locator('a[data-log-id]').first().click();
    await page.getByRole('heading', { name: 'Trace' }).waitFor();
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    await shot('log-detail-narrow');
    await page.goto(url('/analytics'));
    await chartsDrawn();
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    await shot('analytics-narrow');
  });

  it('says when the gateway cannot be reached', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(url('/logs'));
    await page.locator('table.log-table tbody tr').first().waitFor();
    const logsApi = (u: URL) => u.pathname === '/v1/logs';
    await page.route(logsApi, (route) => route.abort('connectionrefused'));
    await page.getByRole('button', { name: 'More filters' }).click();
    await page.getByLabel('User', { exact: true }).fill('nobody');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText(/The gateway could not be reached/).waitFor();
    // The live dot says so too, and the button tries at once.
    expect(await page.getByTestId('live-dot').getAttribute('class')).toContain('failing');
    await page.getByText(/Not updating: trying again every 4 s/).waitFor();
    await page.getByRole('button', { name: 'Try again now' }).click();
    await page.getByText(/The gateway could not be reached/).waitFor();
    // Once the gateway answers again, the list comes back by itself: no button to press.
    await page.unroute(logsApi);
    await page.getByText('No requests match these filters').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('live-dot').getAttribute('class')).not.toContain('failing');
    await page.getByText(/Live: checking every 4 s/).waitFor();
    await shot('logs-empty-filtered');
  });

  it("shows a request's guardrail results, each check with its verdict and reason", async () => {
    const words = {
      name: 'no-refunds',
      deny: false,
      checks: [
        { type: 'contains', words: ['refund'], operator: 'none' },
        { type: 'char_count', max: 1000 },
      ],
    };
    const config = { virtual_key: 'openai-dash', input_guardrails: [words] };
    await openai(gateway, { 'x-gateway-config': JSON.stringify(config) }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'a refund please' }],
      user: 'gina',
    });
    await gateway.flushLogs();
    await page.goto(url('/logs?user=gina'));
    await logRowCount(1);
    await page.locator('a[data-log-id]').first().click();
    const table = page
      .getByRole('region', { name: /chat\.completions/ })
      .locator('section', { has: page.getByRole('heading', { name: 'Guardrails' }) })
      .locator('tbody tr');
    await table.first().waitFor();
    expect(await table.allInnerTexts()).toEqual([
      expect.stringMatching(/input\s+no-refunds\s+contains\s+failed\s+.*refund/),
      expect.stringMatching(/input\s+no-refunds\s+char_count\s+passed/),
    ]);
    await shot('log-detail-guardrails');
  });

  it('shows the MCP tool calls the gateway ran for a request, each linked to its own row', async () => {
    await call(gateway, '/v1/mcp-servers', {
      method: 'POST',
      body: { name: 'Docs', slug: 'docs', url: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` } },
    });
    const { response } = await openai(gateway, { 'x-gateway-virtual-key': 'openai-dash', 'x-gateway-mcp': 'docs' })
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'tools: docs__add {"a":1,"b":2} ; docs__fail | docs__search_docs {"query":"refunds"}' }],
        user: 'hank',
      })
      .withResponse();
    await gateway.flushLogs();
    await page.goto(url(`/logs/${response.headers.get('x-gateway-request-id')}`));
    const detail = page.getByRole('region', { name: /chat\.completions/ });
    const calls = detail.locator('section', { has: page.getByRole('heading', { name: 'Tool calls run by the gateway' }) }).locator('tbody tr');
    await calls.first().waitFor();
    expect(await calls.allInnerTexts()).toEqual([
      expect.stringMatching(/^1\s+docs\s+add\s+ok\s+\d+ ms$/),
      expect.stringMatching(/^1\s+docs\s+fail\s+error\s+\d+ ms$/),
      expect.stringMatching(/^2\s+docs\s+search_docs\s+ok\s+\d+ ms$/),
    ]);
    // The trace: the request, its two earlier model rounds and the three tool calls.
    const kinds = await detail.getByTestId('trace-row').locator('.span-kind').allInnerTexts();
    expect(kinds.sort()).toEqual(['model round', 'model round', 'request', 'tool call', 'tool call', 'tool call, failed']);
    await shot('log-detail-tool-calls');
    await calls.nth(2).getByRole('link', { name: 'search_docs' }).click();
    await page
      .getByRole('region', { name: /mcp\.tools\.call/ })
      .getByText('mcp:docs')
      .first()
      .waitFor();
    await shot('log-detail-tool-call');
  });
});
