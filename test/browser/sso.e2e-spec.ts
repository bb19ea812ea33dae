/**
 * Single sign-on in a real browser: the dashboard's "Sign in with SSO", the provider's
 * sign-in form (a real OpenID provider, test/support/oidc-provider-server.mjs), back to the
 * dashboard signed in by the session cookie, a change made with the CSRF token, sign-out.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { SHOTS, startBrowser } from './browser-support';
import { freePort, OidcTestProvider, startOidcProvider } from '../support/oidc-provider';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

describe('single sign-on in a browser', () => {
  let gateway: TestGateway;
  let provider: OidcTestProvider;
  let browser: Browser;
  let page: Page;
  const url = (path: string) => `${gateway.url}/dashboard${path}`;

  beforeAll(async () => {
    const port = await freePort();
    const client = { client_id: 'ai-gateway', client_secret: 'gateway-client-secret-0123456789' };
    gateway = await startTestGateway({
      OIDC_ISSUER_URL: `http://127.0.0.1:${port}`,
      OIDC_CLIENT_ID: client.client_id,
      OIDC_CLIENT_SECRET: client.client_secret,
      OIDC_SCOPES: 'openid email profile groups',
      OIDC_ROLE_MAPPING: JSON.stringify({ 'search-admins': { workspace: 'search', role: 'admin' } }),
    });
    provider = await startOidcProvider(port, [{ ...client, redirect_uris: [`${gateway.url}/auth/callback`] }]);
    expect((await admin(gateway, 'POST', '/v1/workspaces', { name: 'Search', slug: 'search' })).status).toBe(201);
    expect((await admin(gateway, 'POST', '/v1/api-keys', { name: 'search bot', role: 'member', workspace: 'search' })).status).toBe(201);
    browser = await startBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await provider?.close();
  });

  it('signs in with SSO, works with the session cookie in every tab, and signs out on the server', async () => {
    await page.goto(url(''));
    const sso = page.getByRole('link', { name: 'Sign in with SSO' });
    await sso.waitFor();
    await page.screenshot({ path: join(SHOTS, 'sign-in-sso.png'), fullPage: true });
    await sso.click();
    // The provider's own sign-in form.
    await page.waitForURL((u) => u.href.startsWith(`${provider.issuer}/interaction/`));
    await page.locator('input[name=login]').fill('alice');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    expect(page.url()).toBe(url('/logs'));
    await page.getByText('alice@example.com').waitFor();
    const cookies = await page.context().cookies(gateway.url);
    expect(cookies.filter((c) => c.name === 'gateway_session').map((c) => ({ httpOnly: c.httpOnly, sameSite: c.sameSite }))).toEqual([
      { httpOnly: true, sameSite: 'Lax' },
    ]);

    // Another tab of the same browser is signed in too; its list is the search workspace's.
    const tab = await page.context().newPage();
    await tab.goto(url('/api-keys'));
    await tab.getByRole('cell', { name: 'search bot' }).first().waitFor();
    // A change (CSRF token sent by the dashboard): a new key, made in the person's workspace.
    await tab.getByRole('button', { name: 'New API key' }).click();
    await tab.getByLabel('Name', { exact: true }).fill('made in the browser');
    await tab.getByRole('button', { name: 'Create API key' }).click();
    await tab.getByLabel('The new API key').waitFor();
    const [row] = await gateway.dataSource.query(
      `select w.slug from api_keys k join workspaces w on w.id = k.workspace_id where k.name = 'made in the browser'`,
    );
    expect(row).toEqual({ slug: 'search' });
    await tab.close();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
    expect((await page.context().cookies(gateway.url)).filter((c) => c.name === 'gateway_session')).toEqual([]);
    const [{ n }] = await gateway.dataSource.query('select count(*)::int as n from sessions where revoked_at is not null');
    expect(n).toBe(1);
    await page.reload();
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
  });
});
