/**
 * The dashboard's audit log page in a real browser (Debian's chromium through
 * playwright-core): an owner sees the changes newest first, opens one into a diff of the
 * fields it touched (secrets only as hints), filters by resource and action through the
 * URL; a non-owner key is told the page is for owners. Screenshots in artifacts/screenshots/.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn as signInOnForm, SHOTS, startBrowser } from './browser-support';
import { call, createApiKey } from '../support/e2e-helpers';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const VK_SECRET = 'sk-audit-browser-secret-0a1b2c3d4e5f';

jest.setTimeout(60_000);

describe('audit log page in a browser', () => {
  let gateway: TestGateway;
  let browser: Browser;
  let page: Page;
  let owner: { key: string };
  let adminKey: { key: string };

  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const items = () => page.locator('li.audit-item');
  const signIn = async (key: string) => {
    await page.context().clearCookies(); // the session of an earlier sign-in
    await signInOnForm(page, url(''), key);
  };

  beforeAll(async () => {
    gateway = await startTestGateway();
    owner = await createApiKey(gateway, { name: 'Ada (owner)', role: 'owner' });
    adminKey = await createApiKey(gateway, { name: 'team admin', role: 'admin' });
    const as = (method: string, path: string, body?: unknown) => call(gateway, path, { method, body, apiKey: owner.key });
    expect((await as('POST', '/v1/virtual-keys', { name: 'OpenAI prod', slug: 'openai-prod', provider: 'openai', key: VK_SECRET })).status).toBe(201);
    expect(
      (await as('PATCH', '/v1/virtual-keys/openai-prod', { allowed_models: ['gpt-4o', 'gpt-4o-mini'], budget_limit_usd: 25, budget_period: 'monthly' })).status,
    ).toBe(200);
    expect(
      (
        await as('POST', '/v1/configs', {
          name: 'Fallback',
          slug: 'fallback',
          config: { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'openai-prod' }] },
        })
      ).status,
    ).toBe(201);
    expect((await as('DELETE', '/v1/configs/fallback')).status).toBe(200);
    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('lists the changes newest first and opens one into a diff of its changed fields', async () => {
    await signIn(owner.key);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await items().first().waitFor();
    // Two API keys, a virtual key created and changed, a config created and deleted.
    const summaries = await items().locator('summary').allInnerTexts();
    const changes = await items().evaluateAll((lis) => lis.map((li) => (li as any).dataset.change));
    expect(changes).toEqual(['delete config', 'create config', 'update virtual_key', 'create virtual_key', 'create api_key', 'create api_key']);
    expect(summaries[0]).toMatch(/Ada \(owner\) \(API key\) delete config Fallback/);
    expect(summaries[2]).toContain('Ada (owner)');

    await items().nth(2).locator('summary').click();
    const diff = items().nth(2).locator('table.audit-diff');
    await diff.waitFor();
    const fields = await diff.locator('tbody th').allInnerTexts();
    expect(fields).toEqual(expect.arrayContaining(['budget_limit_usd', 'budget_period', 'allowed_models']));
    expect(fields).not.toContain('slug');
    const budget = diff.locator('tr', { has: page.locator('th', { hasText: /^budget_limit_usd$/ }) });
    expect(await budget.locator('td').allInnerTexts()).toEqual(['null', '25']);
    await items().nth(3).locator('summary').click();
    const created = await items().nth(3).locator('table.audit-diff').innerText();
    expect(created).toContain('sk-…');
    expect(await page.content()).not.toContain(VK_SECRET);
    await shot('audit-log');
  });

  it('filters by resource and action through the URL', async () => {
    await page.getByLabel('Resource', { exact: true }).selectOption('config');
    await page.getByLabel('Action').selectOption('delete');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/resource=config/);
    expect(page.url()).toContain('action=delete');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('li.audit-item').length === 1);
    expect(await items().first().locator('summary').innerText()).toMatch(/delete config Fallback/);
    await page.getByLabel('Action').selectOption('revoke');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('heading', { name: 'No changes match these filters' }).waitFor();
  });

  it('tells a non-owner that the audit log is for owners', async () => {
    await signIn(adminKey.key);
    await page.goto(url('/audit-log'));
    // The page says which role it needs (the menu does not offer it to an admin at all).
    await page.getByTestId('page-refused').filter({ hasText: 'This page needs role owner; the role of this sign-in is admin.' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await shot('audit-log-not-owner');
  });
});
