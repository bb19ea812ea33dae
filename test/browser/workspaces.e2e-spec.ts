/**
 * The dashboard's workspace views in a real browser (Debian's chromium through
 * playwright-core): an owner lists, creates, changes and deletes workspaces, picks one in
 * the header (sent as x-gateway-workspace on every admin call, kept across a reload), gives
 * keys any role in any workspace; a workspace's admin key reads its own workspace only.
 * Screenshots in artifacts/screenshots/workspaces-*.png.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn as signInOnForm, SHOTS, startBrowser } from './browser-support';
import { call, createApiKey, createVirtualKey, waitFor } from '../support/e2e-helpers';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

describe('dashboard workspaces in a browser', () => {
  let gateway: TestGateway;
  let browser: Browser;
  let page: Page;
  let searchAdmin: { key: string };
  /** Every admin API call the page made: path, method and its x-gateway-workspace header. */
  const calls: { method: string; path: string; workspace: string | undefined }[] = [];

  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `workspaces-${name}.png`), fullPage: true });
  const rows = () => page.locator('table.resource-table tbody tr');
  const row = (text: string) => page.locator('table.resource-table tbody tr', { hasText: text });
  const optionTexts = (select: string) => page.locator(`${select} option`).evaluateAll((options) => options.map((o: any) => o.textContent as string));
  const signIn = (key: string) => signInOnForm(page, url(''), key);
  const go = async (path: string, heading: string, link = heading) => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: link, exact: true }).click();
    await page.waitForURL(url(path));
    await page.getByRole('heading', { name: heading, exact: true }).waitFor();
  };

  beforeAll(async () => {
    gateway = await startTestGateway();
    expect((await admin(gateway, 'POST', '/v1/workspaces', { name: 'Search team', slug: 'search' })).status).toBe(201);
    searchAdmin = await createApiKey(gateway, { name: 'search admin', role: 'admin', workspace: 'search' });
    await createVirtualKey(gateway, { slug: 'vk-default', name: 'default credential', provider: 'openai', key: 'sk-default-0000' });
    const inSearch = await call(gateway, '/v1/virtual-keys', {
      headers: { 'x-gateway-workspace': 'search' },
      body: { slug: 'vk-search', name: 'search credential', provider: 'openai', key: 'sk-search-0000' },
    });
    expect(inSearch.status).toBe(201);

    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('request', (request) => {
      const { pathname } = new URL(request.url());
      if (pathname.startsWith('/v1/')) calls.push({ method: request.method(), path: pathname, workspace: request.headers()['x-gateway-workspace'] });
    });
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('an owner lists, creates and changes workspaces', async () => {
    await signIn(gateway.adminKey);
    await go('/workspaces', 'Workspaces');
    await row('search').waitFor();
    expect(await rows().count()).toBe(2);
    // The default workspace is never deleted; the others offer it.
    await expect(
      row('default')
        .getByRole('button', { name: /^Delete/ })
        .count(),
    ).resolves.toBe(0);
    await expect(row('search').getByRole('button', { name: 'Delete Search team' }).count()).resolves.toBe(1);

    await page.getByRole('button', { name: 'New workspace' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Ads team');
    await page.getByLabel('Slug', { exact: true }).fill('ads');
    await page.getByLabel('Budget (USD)').fill('20');
    await page.getByLabel('Budget period').selectOption('monthly');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByText('Created workspace “Ads team”.').waitFor();
    expect((await admin(gateway, 'GET', '/v1/workspaces/ads')).body).toMatchObject({ name: 'Ads team', budget_limit_usd: 20, budget_period: 'monthly' });

    await row('Ads team').getByRole('button', { name: 'Edit Ads team' }).click();
    await page.getByLabel('Rate limits (JSON)').fill('[{"type": "requests", "unit": "rpm", "value": 30}]');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved workspace “Ads team”.').waitFor();
    expect((await admin(gateway, 'GET', '/v1/workspaces/ads')).body.rate_limits).toEqual([{ type: 'requests', unit: 'rpm', value: 30 }]);
    await expect(row('Ads team').textContent()).resolves.toContain('30 requests rpm');
    // The header's switcher learnt of the new workspace.
    await expect(optionTexts('#workspace-switch')).resolves.toEqual(['All workspaces', 'Ads team', 'Default', 'Search team']);
    await shot('owner-list');
  });

  it("the header's workspace is sent on every admin call and kept across a reload", async () => {
    await go('/api-keys', 'API keys');
    await row('search admin').waitFor();
    expect(await rows().count()).toBe(2);

    calls.length = 0;
    await page.locator('#workspace-switch').selectOption('search');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('table.resource-table tbody tr').length === 1);
    await expect(rows().first().textContent()).resolves.toContain('search admin');
    await page.reload();
    await row('search admin').waitFor();
    expect(await page.locator('#workspace-switch').inputValue()).toBe('search');
    expect(await rows().count()).toBe(1);
    await go('/logs', 'Request log', 'Logs');
    await go('/virtual-keys', 'Virtual keys');
    await row('vk-search').waitFor();
    await go('/api-keys', 'API keys');
    await row('search admin').waitFor();
    await shot('owner-acting-in-search');

    const admins = calls.filter((c) => !c.path.startsWith('/v1/workspaces'));
    expect(admins.length).toBeGreaterThan(3);
    expect(admins.filter((c) => c.workspace !== 'search')).toEqual([]);
    // Workspaces are managed organisation-wide: their calls go without it.
    expect(calls.filter((c) => c.path.startsWith('/v1/workspaces') && c.workspace !== undefined)).toEqual([]);

    // Acting in one workspace, the key form offers that one only.
    await page.getByRole('button', { name: 'New API key' }).click();
    await expect(optionTexts('#API-key-field-workspace')).resolves.toEqual(['Search team (search)']);
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.locator('#workspace-switch').selectOption('');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('table.resource-table tbody tr').length > 1);
  });

  it('an owner gives any role in any workspace; the key list shows both', async () => {
    await page.getByRole('button', { name: 'New API key' }).click();
    await expect(
      page
        .getByLabel('Role', { exact: true })
        .locator('option')
        .evaluateAll((o) => o.map((x: any) => x.value)),
    ).resolves.toEqual(['owner', 'admin', 'member', 'viewer']);
    await expect(page.getByLabel('Role', { exact: true }).inputValue()).resolves.toBe('member');
    await expect(
      page
        .locator('#API-key-field-workspace')
        .locator('option')
        .evaluateAll((o) => o.map((x: any) => x.value)),
    ).resolves.toEqual(['ads', 'default', 'search']);
    await page.getByLabel('Name', { exact: true }).fill('ads reader');
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.locator('#API-key-field-workspace').selectOption('ads');
    await shot('owner-key-form');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByRole('button', { name: 'I have saved it' }).click();
    const created = row('ads reader');
    await expect(created.locator('td[data-label="Role"]').textContent()).resolves.toBe('viewer');
    await expect(created.locator('td[data-label="Workspace"]').textContent()).resolves.toBe('ads');
    await expect(row('search admin').locator('td[data-label="Workspace"]').textContent()).resolves.toBe('search');
    const listed = (await admin(gateway, 'GET', '/v1/api-keys')).body.data.find((k: any) => k.name === 'ads reader');
    expect(listed).toMatchObject({ role: 'viewer', workspace: 'ads' });
    await shot('owner-key-list');

    // A workspace holding a key is not deleted, and says why; once empty it is.
    await go('/workspaces', 'Workspaces');
    await row('Ads team').getByRole('button', { name: 'Delete Ads team' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await expect(page.getByRole('alert').first().textContent()).resolves.toMatch(/still holds/);
    await shot('owner-delete-refused');
    expect((await admin(gateway, 'DELETE', `/v1/api-keys/${listed.id}`)).status).toBe(200);
    // The question stays open after the refusal: asked again, it deletes.
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('Deleted workspace “Ads team”.').waitFor();
    expect((await admin(gateway, 'GET', '/v1/workspaces/ads')).status).toBe(404);
    // The switcher's list is read again after the deletion: waited for.
    const left = ['All workspaces', 'Default', 'Search team'];
    await waitFor(async () => JSON.stringify(await optionTexts('#workspace-switch')) === JSON.stringify(left) || null, 5_000).catch(() => undefined);
    await expect(optionTexts('#workspace-switch')).resolves.toEqual(left);
  });

  it("a workspace's admin key reads its own workspace only, and gives roles up to admin there", async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(searchAdmin.key);
    await expect(page.locator('#workspace-switch').count()).resolves.toBe(0);
    await go('/workspaces', 'Workspaces');
    await row('search').waitFor();
    expect(await rows().count()).toBe(1);
    await expect(page.getByRole('button', { name: /New workspace|Edit|Delete/ }).count()).resolves.toBe(0);
    await shot('admin-read-only');

    await go('/api-keys', 'API keys');
    await page.getByRole('button', { name: 'New API key' }).click();
    await expect(
      page
        .getByLabel('Role', { exact: true })
        .locator('option')
        .evaluateAll((o) => o.map((x: any) => x.value)),
    ).resolves.toEqual(['admin', 'member', 'viewer']);
    await expect(page.locator('#API-key-field-workspace').count()).resolves.toBe(0);
    await page.getByLabel('Name', { exact: true }).fill('search bot');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await expect(row('search bot').locator('td[data-label="Workspace"]').textContent()).resolves.toBe('search');
    await expect(row('search bot').locator('td[data-label="Role"]').textContent()).resolves.toBe('member');
    await shot('admin-key-list');
  });
});
