/**
 * The log filters in a browser (issue 25): API key, virtual key, config and prompt picked by
 * name (a text box narrows a long list) while the URL carries the id or slug; a compact bar
 * that leaves the list in view, the rest behind "More filters"; names in the active-filter
 * chips; "Last used" on the key pages. At desktop and phone widths, by keyboard too.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { call, chat, createApiKey, createConfig, createVirtualKey, waitFor } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

jest.setTimeout(90_000);

describe('log filters picked by name, in a compact bar', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let browser: Browser;
  let page: Page;
  let billing: { id: string; key: string };

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const rowCount = (n: number) =>
    page.waitForFunction((count) => (globalThis as any).document.querySelectorAll('table.log-table tbody tr').length === count, n);
  const horizontalOverflow = () =>
    page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth) as Promise<number>;
  const userCells = () => page.locator('table.log-table tbody td[data-label="User"]').allInnerTexts();
  /** Picks the option whose text holds `name` in the pick-list labelled `label`, as a user reads it. */
  const pick = async (label: string, name: string) => {
    const select = page.getByLabel(label, { exact: true });
    const option = select.locator('option', { hasText: name });
    expect(await option.count()).toBe(1);
    // The option's value (its id or slug), read as the browser does: an option without the attribute has its text.
    await select.selectOption(await option.evaluate((o: any) => o.value as string));
  };
  /** The chips name what they filter once the names have loaded (they show the id or slug until then): waited for, not read at once. */
  const chipsShow = async (text: string) => {
    const chips = page.getByRole('list', { name: 'Active filters' });
    await waitFor(async () => (await chips.innerText()).includes(text) || null, 10_000).catch(() => undefined);
    expect(await chips.innerText()).toContain(text);
    return chips.innerText();
  };
  const optionTexts = (label: string) => page.getByLabel(label, { exact: true }).locator('option').allInnerTexts();

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    // A long list of virtual keys (the narrowing box shows from nine on).
    for (const slug of ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa']) {
      await createVirtualKey(gateway, { slug: `vk-${slug}`, name: `VK ${slug}`, key: `sk-${slug}-000000`, custom_host: `${mock.url}/v1` });
    }
    const search = await createApiKey(gateway, { name: 'Search team' });
    billing = await createApiKey(gateway, { name: 'Billing bot' });
    await createConfig(gateway, 'cfg-main', { virtual_key: 'vk-gamma' });
    expect(
      (
        await admin(gateway, 'POST', '/v1/prompts', {
          name: 'Greeting',
          slug: 'greeting',
          virtual_key: 'vk-delta',
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Hi {{who}}' }],
        })
      ).status,
    ).toBe(201);

    const send = async (user: string, headers: Record<string, string>, key: string) => expect((await chat(gateway, headers, { user }, key)).status).toBe(200);
    await send('ann', { 'x-gateway-virtual-key': 'vk-alpha' }, search.key);
    await send('ben', { 'x-gateway-virtual-key': 'vk-beta' }, billing.key);
    await send('cy', { 'x-gateway-virtual-key': 'vk-beta' }, billing.key);
    await send('dee', { 'x-gateway-config': 'cfg-main' }, search.key);
    expect((await call(gateway, '/v1/prompts/greeting/completions', { body: { variables: { who: 'you' }, user: 'eve' }, apiKey: search.key })).status).toBe(
      200,
    );
    await gateway.flushLogs();

    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, url(''), gateway.adminKey);
    await rowCount(5);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  it('shows search, time range, status and model in one row with the list in view; the rest behind More filters', async () => {
    const bar = page.getByRole('form', { name: 'Filter requests' });
    const tops = await Promise.all(
      [
        page.getByRole('searchbox', { name: 'Search bodies' }),
        page.getByLabel('Time range'),
        page.getByRole('textbox', { name: 'Status' }),
        page.getByRole('textbox', { name: 'Model', exact: true }),
      ].map(async (field) => (await field.boundingBox())!.y),
    );
    expect(Math.max(...tops) - Math.min(...tops)).toBeLessThan(4);
    expect(await page.getByLabel('User', { exact: true }).isVisible()).toBe(false);
    expect(await page.getByLabel('API key', { exact: true }).isVisible()).toBe(false);
    // The bar stays short: the first rows of the list are on the first screen.
    expect((await bar.boundingBox())!.height).toBeLessThan(140);
    expect((await page.locator('table.log-table tbody tr').nth(2).boundingBox())!.y + 40).toBeLessThan(900);
    await shot('pick-lists-bar');

    const more = page.getByRole('button', { name: 'More filters' });
    expect(await more.getAttribute('aria-expanded')).toBe('false');
    await more.click();
    expect(await page.getByRole('button', { name: 'Fewer filters' }).getAttribute('aria-expanded')).toBe('true');
    await page.getByLabel('User', { exact: true }).waitFor();
  });

  it('filters by an API key chosen by name; the URL carries its id and the chip its name', async () => {
    await page.getByLabel('API key', { exact: true }).locator('option', { hasText: 'Billing bot' }).waitFor({ state: 'attached' });
    expect((await optionTexts('API key')).map((text) => text.split(' (')[0])).toEqual(expect.arrayContaining(['Any API key', 'Billing bot', 'Search team']));
    await pick('API key', 'Billing bot');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(new RegExp(`api_key_id=${billing.id}`));
    await rowCount(2);
    expect((await userCells()).sort()).toEqual(['ben', 'cy']);
    expect(await chipsShow('api key: Billing bot')).not.toContain(billing.id);
    // Set from the URL, More filters opens by itself and shows the pick.
    await page.reload();
    await rowCount(2);
    expect(await page.getByLabel('API key', { exact: true }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Fewer filters' }).isVisible()).toBe(true);
    await page.waitForFunction(() => {
      const select = (globalThis as any).document.getElementById('f-api_key_id');
      return select && !select.disabled && select.selectedOptions[0]?.textContent.startsWith('Billing bot');
    });
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await rowCount(5);
  });

  it('narrows a long list of virtual keys by typing, and filters by the slug of the one picked', async () => {
    await page.getByRole('button', { name: 'More filters' }).click();
    const narrow = page.getByRole('searchbox', { name: 'Filter the virtual key names' });
    await page.getByLabel('Virtual key', { exact: true }).locator('option', { hasText: 'VK kappa' }).waitFor({ state: 'attached' });
    expect(await optionTexts('Virtual key')).toHaveLength(11);
    await narrow.fill('bet');
    // The list narrows on the next render: waited for, not read at once.
    const narrowed = ['Any virtual key', 'VK beta (vk-beta)'];
    await waitFor(async () => JSON.stringify(await optionTexts('Virtual key')) === JSON.stringify(narrowed) || null, 5_000).catch(() => undefined);
    expect(await optionTexts('Virtual key')).toEqual(narrowed);
    await shot('pick-lists-more');
    await pick('Virtual key', 'VK beta');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/virtual_key=vk-beta/);
    await rowCount(2);
    await chipsShow('virtual key: VK beta');
    await page.getByRole('button', { name: 'Remove filter virtual key vk-beta' }).click();
    await rowCount(5);
  });

  it('filters by a config and by a prompt chosen by name', async () => {
    await page.goto(url('/logs'));
    await rowCount(5);
    await page.getByRole('button', { name: 'More filters' }).click();
    await page.getByLabel('Config', { exact: true }).locator('option', { hasText: 'cfg-main' }).waitFor({ state: 'attached' });
    await pick('Config', 'cfg-main');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/config=cfg-main/);
    await rowCount(1);
    expect(await userCells()).toEqual(['dee']);

    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await rowCount(5);
    await page.getByRole('button', { name: 'More filters' }).click();
    await page.getByLabel('Prompt', { exact: true }).locator('option', { hasText: 'Greeting' }).waitFor({ state: 'attached' });
    await pick('Prompt', 'Greeting');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/prompt=greeting/);
    await rowCount(1);
    expect(await userCells()).toEqual(['eve']);
    await chipsShow('prompt: Greeting');
  });

  it('works by keyboard: Enter in the search applies, Tab reaches More filters and Space opens it', async () => {
    await page.goto(url('/logs'));
    await rowCount(5);
    const search = page.getByRole('searchbox', { name: 'Search bodies' });
    await search.focus();
    await page.keyboard.type('you');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=you/);
    await rowCount(1);
    await page.getByRole('button', { name: 'Apply filters' }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.textContent)).toBe('More filters');
    await page.keyboard.press('Space');
    await page.getByLabel('User', { exact: true }).waitFor();
  });

  it('applies a quick time range as a start in the URL; a custom range asks for From and Until', async () => {
    await page.goto(url('/logs'));
    await rowCount(5);
    expect(await page.getByLabel('From', { exact: true }).count()).toBe(0);
    await page.getByLabel('Time range').selectOption({ label: 'Last hour' });
    const before = Date.now();
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/from=/);
    const from = Date.parse(new URL(page.url()).searchParams.get('from')!);
    expect(before - from).toBeGreaterThan(3_590_000);
    expect(before - from).toBeLessThan(3_660_000);
    await rowCount(5);
    expect(await page.getByRole('list', { name: 'Active filters' }).innerText()).toMatch(/from: /);
    // Read back from the URL, the start shows as a custom range, to be changed by hand.
    expect(await page.getByLabel('Time range').inputValue()).toBe('custom');
    expect(await page.getByLabel('From', { exact: true }).inputValue()).not.toBe('');
    await page.getByLabel('Until', { exact: true }).fill('2020-01-01T00:00');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('The start of the time range must be before its end.').waitFor();
  });

  it('keeps the bar compact on a 390 px wide screen, without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(url('/logs'));
    await rowCount(5);
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    expect(await page.getByLabel('User', { exact: true }).isVisible()).toBe(false);
    expect((await page.locator('table.log-table tbody tr').first().boundingBox())!.y).toBeLessThan(844);
    await shot('pick-lists-narrow');
    await page.getByRole('button', { name: 'More filters' }).click();
    await page.getByLabel('Virtual key', { exact: true }).locator('option', { hasText: 'VK kappa' }).waitFor({ state: 'attached' });
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('shows when each key was last used: never before its first request, relative time with the exact time on hover', async () => {
    const unused = await createApiKey(gateway, { name: 'Unused key' });
    await page.goto(url('/api-keys'));
    const row = (name: string) => page.locator('table.resource-table tbody tr', { hasText: name });
    await row('Billing bot').waitFor();
    expect(await row('Unused key').locator('td[data-label="Last used"]').innerText()).toBe('never');
    const used = row('Billing bot').locator('td[data-label="Last used"] time');
    expect(await used.innerText()).toMatch(/^(just now|\d+ minutes? ago)$/);
    const stored = (await admin(gateway, 'GET', `/v1/api-keys/${billing.id}`)).body.last_used_at;
    expect(await used.getAttribute('datetime')).toBe(stored);
    expect(await used.getAttribute('title')).toMatch(/\d{4}/);
    await shot('pick-lists-api-keys');
    expect(unused.id).toBeDefined();

    await page.goto(url('/virtual-keys'));
    await row('VK beta').waitFor();
    expect(await row('VK beta').locator('td[data-label="Last used"] time').innerText()).toMatch(/^(just now|\d+ minutes? ago)$/);
    expect(await row('VK kappa').locator('td[data-label="Last used"]').innerText()).toBe('never');
  });
  it('picks an API key and a virtual key by name in Analytics too; the URL carries the id and the slug', async () => {
    await page.goto(url('/analytics?range=24h'));
    await page.locator('details.filters summary').click();
    await pick('API key', 'Billing bot');
    await pick('Virtual key', 'VK gamma');
    await page.getByRole('form', { name: 'Filter analytics' }).getByRole('button', { name: /Apply/ }).click();
    await waitFor(() => page.url().includes('api_key_id=') || null, 5000);
    const query = new URL(page.url()).searchParams;
    expect(query.get('api_key_id')).toBe(billing.id);
    expect(query.get('virtual_key')).toBe('vk-gamma');
  });
});
