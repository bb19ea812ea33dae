/**
 * Requests as clients saw them, in a real browser (issue 36, item 1): clients send requests
 * through the gateway with the official OpenAI SDK, some recovered by a fallback or a retry,
 * some failing whatever was tried. The analytics show the clients' count, error rate and the
 * recovered ones apart; the log lists requests with their failed tries nested beneath them
 * (opened on demand); the 5xx filter lists the requests that failed, not the failed tries of
 * requests that succeeded; a request's detail shows its whole cost first; a failed request
 * shows the provider's own message. Screenshots go to artifacts/screenshots/.
 */
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { createApiKey } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(90_000);

describe('client requests, not log rows, in a browser', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let browser: Browser;
  let page: Page;
  /** What the clients saw. */
  const seen = { requests: 0, failed: 0, recovered: 0 };
  let recoveredId: string;
  let failedId: string;

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const target = (model: string, extra: Record<string, unknown> = {}) => ({
    provider: 'openai',
    api_key: 'sk-test',
    custom_host: `${mock.url}/v1`,
    override_params: { model },
    ...extra,
  });

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    const key = await createApiKey(gateway, { name: 'agents', role: 'admin' });
    const send = async (config: unknown, content: string): Promise<string> => {
      const client = new OpenAI({
        baseURL: `${gateway.url}/v1`,
        apiKey: 'unused',
        maxRetries: 0,
        defaultHeaders: { 'x-gateway-api-key': key.key, 'x-gateway-config': JSON.stringify(config) },
      });
      seen.requests++;
      try {
        const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }).withResponse();
        return response.headers.get('x-gateway-request-id')!;
      } catch (error) {
        seen.failed++;
        return (error as InstanceType<typeof OpenAI.APIError>).headers?.get('x-gateway-request-id') as string;
      }
    };
    const fallback = (...targets: unknown[]) => ({ strategy: { mode: 'fallback' }, targets });
    // 6 answered at once; 4 recovered (3 by a fallback, 1 after two retries); 3 failed after every target failed.
    for (let i = 0; i < 6; i++) await send(target('gpt-4o-mini'), `plain ${i}`);
    for (let i = 0; i < 3; i++) recoveredId = await send(fallback(target('mock-error-503'), target('gpt-4o-mini')), `fallback ${i}`);
    await send(target('mock-flaky-2-503', { retry: { attempts: 3 } }), 'retried');
    seen.recovered = 4;
    for (let i = 0; i < 3; i++) failedId = await send(fallback(target('mock-error-500'), target('mock-error-503')), `failing ${i}`);
    await gateway.flushLogs();
    // What the log holds: more rows than requests (the failed tries).
    const [{ rows }] = await gateway.dataSource.query('select count(*)::int as rows from request_logs');
    expect(rows).toBe(seen.requests + 3 + 2 + 3);

    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await signIn(page, url(''), gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  it('analytics count the requests and errors the clients saw, and the recovered ones apart', async () => {
    expect(seen).toEqual({ requests: 13, failed: 3, recovered: 4 });
    await page.goto(url('/analytics?range=1h'));
    await page.getByTestId('total-requests').waitFor();
    expect(await page.getByTestId('total-requests').innerText()).toBe(String(seen.requests));
    expect(await page.getByTestId('total-errors').innerText()).toBe(`${seen.failed} (${((seen.failed / seen.requests) * 100).toFixed(1)}%)`);
    expect(await page.getByTestId('total-recovered').innerText()).toMatch(
      new RegExp(`^${seen.recovered} \\(${((seen.recovered / seen.requests) * 100).toFixed(1)}%\\)\\s*by a retry or fallback$`),
    );
    await shot('client-requests-analytics');
  });

  it('the log lists requests, their failed tries nested beneath them, opened on demand', async () => {
    await page.goto(url('/logs'));
    const requestRows = page.locator('table.log-table tbody tr[data-kind="request"]');
    await requestRows.first().waitFor();
    expect(await requestRows.count()).toBe(seen.requests);
    expect(await page.locator('table.log-table tbody tr.nested').count()).toBe(0);
    expect(await page.locator('table.log-table .tag.recovered').count()).toBe(seen.recovered);

    // The request retried twice: its two failed retries, oldest first.
    const retried = page.locator('table.log-table tbody tr[data-kind="request"]', { hasText: 'mock-flaky-2-503' });
    await retried.getByRole('button', { name: 'Show the 2 rows nested under this request' }).click();
    const expander = retried.locator('button.expander');
    const nested = page.locator('table.log-table tbody tr.nested');
    await nested.nth(1).waitFor();
    expect(await nested.locator('.nested-kind').allInnerTexts()).toEqual(['failed try', 'failed retry 1']);
    expect(await expander.getAttribute('aria-expanded')).toBe('true');
    await shot('client-requests-nested');
    await retried.getByRole('button', { name: 'Hide the 2 rows nested under this request' }).click();
    expect(await nested.count()).toBe(0);
  });

  it('the 5xx filter lists the requests that failed, not the failed tries of requests that succeeded', async () => {
    await page.goto(url('/logs?status=5xx'));
    const requestRows = page.locator('table.log-table tbody tr[data-kind="request"]');
    await requestRows.first().waitFor();
    expect(await requestRows.count()).toBe(seen.failed);
  });

  it("a recovered request's detail shows its whole cost first; a failed one the provider's own words", async () => {
    await page.goto(url(`/logs/${recoveredId}`));
    const totals = page.getByTestId('request-totals');
    await totals.waitFor();
    const [rows]: { total: string; cost: string }[] = await gateway.dataSource.query(
      `select sum(total_tokens)::text as total, sum(cost_usd)::text as cost from request_logs where id = $1 or parent_id = $1`,
      [recoveredId],
    );
    expect(await totals.innerText()).toContain(`In all: ${Number(rows.total).toLocaleString('en-US')} tokens`);
    expect(await totals.innerText()).toContain('over 2 rows: this request and 1 nested under it (1 failed try)');
    expect(await page.locator('.detail .tag.recovered').innerText()).toBe('recovered after 1 failed try');

    await page.goto(url(`/logs/${failedId}`));
    const providerError = page.getByTestId('provider-error');
    await providerError.waitFor();
    const [{ body }] = await gateway.dataSource.query('select response_body as body from request_logs where id = $1', [failedId]);
    expect(await providerError.innerText()).toBe(`openai answered: ${body.error.message}`);
    await shot('client-requests-provider-error');
  });

  it('keeps the filter bar whole at 1440 px with a request open', async () => {
    await page.goto(url(`/logs/${recoveredId}`));
    await page.getByTestId('request-totals').waitFor();
    const bar = page.locator('.logs-list form').first();
    const box = await bar.boundingBox();
    const list = await page.locator('.logs-list').boundingBox();
    // Every field of the bar inside the list's column, none squeezed under its label's width.
    const fields = await bar
      .locator('input, select, button')
      .evaluateAll((elements: any[]) => elements.filter((e) => e.offsetParent !== null).map((e) => e.getBoundingClientRect()));
    expect(box!.x + box!.width).toBeLessThanOrEqual(list!.x + list!.width + 1);
    // The actions in one row, each label on one line (they were stacked, two lines each, beside an empty block).
    const actions = await bar.locator('.filter-actions button').evaluateAll((elements: any[]) => elements.map((e) => e.getBoundingClientRect()));
    expect(actions).toHaveLength(3);
    for (const action of actions) {
      expect(action.top).toBeCloseTo(actions[0].top, 0);
      expect(action.height).toBeLessThanOrEqual(44);
    }
    expect(box!.height).toBeLessThanOrEqual(160);
    for (const field of fields) {
      expect(field.right).toBeLessThanOrEqual(list!.x + list!.width + 1);
      expect(field.width).toBeGreaterThanOrEqual(60);
    }
    await shot('client-requests-filter-bar-1440');
  });
});
