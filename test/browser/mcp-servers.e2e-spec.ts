/**
 * The dashboard's MCP servers page in a real browser (Debian's chromium through
 * playwright-core): a server registered from the form (its credential header stored, shown
 * masked), listed with its allow-list, and its own page asking the server for its tools (the
 * allow-list told apart). Screenshots go to artifacts/screenshots/.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { McpTestServer, startMcpTestServer } from '../support/mcp-test-server';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

describe('dashboard: MCP servers', () => {
  let gateway: TestGateway;
  let mcp: McpTestServer;
  let browser: Browser;
  let page: Page;

  const url = (path: string) => `${gateway.url}/dashboard${path}`;

  beforeAll(async () => {
    mcp = await startMcpTestServer();
    gateway = await startTestGateway({ MCP_ALLOWED_NETWORKS: '127.0.0.1' });
    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, url(''), gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mcp?.close();
  });

  it('registers a server from the form, lists it with its allow-list, and shows the tools it lists, allowed or not', async () => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'MCP servers' }).click();
    await page.getByRole('heading', { name: 'No MCP servers yet' }).waitFor();
    await page.getByRole('button', { name: /New MCP server/ }).click();
    await page.getByLabel('Name', { exact: true }).fill('Internal docs');
    await page.getByLabel('Slug', { exact: true }).fill('docs');
    await page.getByLabel('URL', { exact: true }).fill(mcp.url);
    await page.getByLabel('Headers (JSON)').fill(JSON.stringify({ Authorization: `Bearer ${mcp.token}` }));
    await page.getByLabel('Allowed tools').fill('search_docs, add');
    await page.getByRole('button', { name: /^Create/ }).click();

    const row = page.locator('tr', { hasText: 'Internal docs' });
    await row.waitFor();
    expect(await row.innerText()).toContain('search_docs add');
    // Stored, encrypted: the API shows the header masked, never the token.
    const stored = await admin(gateway, 'GET', '/v1/mcp-servers/docs');
    expect(stored.body).toMatchObject({ slug: 'docs', url: mcp.url, allowed_tools: ['search_docs', 'add'] });
    expect(JSON.stringify(stored.body)).not.toContain(mcp.token);

    await page.goto(url('/mcp-servers/docs'));
    const tools = page.getByTestId('mcp-tools');
    await tools.locator('table').waitFor();
    const listed = await tools
      .locator('tbody tr')
      .evaluateAll((rows: any[]) =>
        rows.map((tr) => [tr.querySelector('td[data-label="Tool"]').innerText, tr.querySelector('td[data-label="Callers may use it"]').innerText]),
      );
    expect(listed).toEqual([
      ['search_docs', 'yes'],
      ['add', 'yes'],
      ['slow', 'no: not in the allow-list'],
      ['fail', 'no: not in the allow-list'],
    ]);
    await page.screenshot({ path: join(SHOTS, 'mcp-server-tools.png'), fullPage: true });
  });

  it("keeps an owner's navigation, all its pages, on one line at 1440 px", async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(url('/logs'));
    const nav = page.getByRole('navigation', { name: 'Dashboard' });
    await nav.getByRole('link', { name: 'Prices' }).waitFor();
    const tops = await nav.locator('li').evaluateAll((items: any[]) => items.map((item) => Math.round(item.getBoundingClientRect().top)));
    expect(tops.length).toBeGreaterThanOrEqual(11);
    expect(new Set(tops).size).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'nav-1440.png') });
  });
});
