/**
 * The dashboard's version history and end users pages in a real browser (Debian's
 * chromium through playwright-core): a config with three versions (a provider credential
 * in each) and a prompt with two, their diffs, restoring an old version (a new version,
 * the stored credential kept, checked upstream), and end users with their budgets,
 * spend, warnings and links to the log. Screenshots go to artifacts/screenshots/.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { call, createConfig, createVirtualKey, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const SECRET = 'sk-history-first-secret-0001';
const OTHER_SECRET = 'sk-history-other-secret-0002';

jest.setTimeout(60_000);

describe('dashboard: version history and end users', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let browser: Browser;
  let page: Page;

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const horizontalOverflow = () =>
    page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth) as Promise<number>;
  /** The diff's changed lines as shown: `-text` and `+text`. */
  const changedLines = () =>
    page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('.diff-line.removed, .diff-line.added')].map(
        (line: any) => `${line.classList.contains('added') ? '+' : '-'}${line.textContent.replace(/^\d+(removed|added): [-+]/, '')}`,
      ),
    ) as Promise<string[]>;
  /** The credential the mock upstream received last (the provider key the gateway sent). */
  const lastUpstreamKey = () => String(mock.requests[mock.requests.length - 1]?.headers.authorization ?? '');
  const chatThroughConfig = (slug: string) =>
    openai(gateway, { 'x-gateway-config': slug }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-history', key: 'sk-vk-history', custom_host: `${mock.url}/v1` });

    // A config with three versions: the credential in each, sent back masked for the third (as an edit of the read config does).
    const target = { provider: 'openai', api_key: SECRET, custom_host: `${mock.url}/v1` };
    await createConfig(gateway, 'history-route', target);
    expect((await admin(gateway, 'PATCH', '/v1/configs/history-route', { config: { ...target, override_params: { temperature: 0.3 } } })).status).toBe(200);
    const read = await admin(gateway, 'GET', '/v1/configs/history-route');
    expect(read.body.config.api_key).not.toBe(SECRET);
    const third = await admin(gateway, 'PATCH', '/v1/configs/history-route', {
      config: { ...read.body.config, override_params: { temperature: 0.3, max_tokens: 50 } },
    });
    expect(third.body.version).toBe(3);

    // A config whose credential changed: restoring its first version needs the old credential typed again.
    await createConfig(gateway, 'history-rotated', target);
    await admin(gateway, 'PATCH', '/v1/configs/history-rotated', { config: { ...target, api_key: OTHER_SECRET } });

    // A prompt with two versions.
    const created = await admin(gateway, 'POST', '/v1/prompts', {
      name: 'Greeting',
      slug: 'history-prompt',
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello {{name}}' }],
    });
    expect(created.status).toBe(201);
    const second = await admin(gateway, 'PATCH', '/v1/prompts/history-prompt', {
      messages: [{ role: 'user', content: 'Hi there {{name}}, be brief' }],
      hyperparameters: { temperature: 0.2 },
    });
    expect(second.body.version).toBe(2);

    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, url(''), gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  it('lists a config’s versions newest first, from its row, and diffs one against the one before it and the current one', async () => {
    await page.goto(url('/configs'));
    await page.getByRole('link', { name: '3 · history' }).click();
    await page.waitForURL(/\/dashboard\/configs\/history-route\/versions$/);
    await page.getByRole('heading', { name: 'Versions of config “history-route”' }).waitFor();
    const versions = page.getByRole('navigation', { name: /Versions of history-route/ }).getByRole('button');
    expect(await versions.locator('strong').allInnerTexts()).toEqual(['Version 3', 'Version 2', 'Version 1']);
    expect(await versions.first().getAttribute('aria-pressed')).toBe('true');
    expect(await versions.first().locator('time').count()).toBe(1);

    // The newest against the one before it: max_tokens added; the credential, masked the same in both, unchanged.
    expect(await page.getByTestId('diff-summary').innerText()).toMatch(/^[12] lines? added, [01] removed$/);
    const lines = await changedLines();
    expect(lines).toContainEqual(expect.stringMatching(/^\+\s+"max_tokens": 50,?$/));
    for (const line of lines) expect(line).toMatch(/"max_tokens": 50|"temperature": 0\.3/);
    expect(await page.locator('.diff').innerText()).not.toContain(SECRET);
    await shot('history-config-diff');
    // Unchanged lines beyond three around a change are folded; one button shows them all.
    expect(await page.locator('.diff-fold').innerText()).toBe('2 unchanged lines');
    await page.getByRole('button', { name: 'Show unchanged lines' }).click();
    expect(await page.locator('.diff-fold').count()).toBe(0);
    expect(await page.locator('.diff-line').first().innerText()).toMatch(/^1\s*\{$/);

    // Version 1 (keyboard) against the current one: the override_params the later versions added.
    await versions.nth(2).focus();
    await page.keyboard.press('Enter');
    expect(await versions.nth(2).getAttribute('aria-pressed')).toBe('true');
    await page.getByLabel('the current version (3)').check();
    const againstCurrent = await changedLines();
    const addedLines = againstCurrent.filter((l) => l.startsWith('+')).join('\n');
    for (const added of ['"override_params": {', '"temperature": 0.3', '"max_tokens": 50']) expect(addedLines).toContain(added);
    expect(againstCurrent.filter((l) => l.startsWith('-'))).toEqual([expect.stringContaining('"custom_host"')]);
  });

  it('restores an old config version as a new version, after a confirmation, keeping the stored credential', async () => {
    await page.getByRole('button', { name: 'Restore version 1…' }).click();
    const confirm = page.getByRole('group', { name: 'Restore version 1?' });
    expect(await confirm.innerText()).toMatch(/saves version 1 as a new version 4/);
    await shot('history-config-confirm');
    await confirm.getByRole('button', { name: 'Restore as version 4' }).click();
    await page.getByRole('status').filter({ hasText: 'Restored version 1 as version 4' }).waitFor();
    expect(
      await page
        .getByRole('navigation', { name: /Versions of/ })
        .getByRole('button')
        .count(),
    ).toBe(4);

    // The API: version 4 is the latest, with version 1's body.
    const latest = await admin(gateway, 'GET', '/v1/configs/history-route');
    expect(latest.body.version).toBe(4);
    const first = await admin(gateway, 'GET', '/v1/configs/history-route?version=1');
    expect(latest.body.config).toEqual(first.body.config);
    expect(latest.body.config.override_params).toBeUndefined();
    // The credential stored is still the secret, not its mask: the upstream receives it.
    mock.reset();
    await chatThroughConfig('history-route');
    expect(lastUpstreamKey()).toBe(`Bearer ${SECRET}`);
  });

  it('asks for a credential that changed since the version restored, and stores the one typed', async () => {
    await page.goto(url('/configs/history-rotated/versions'));
    await page.getByRole('button', { name: /^Version 1/ }).click();
    await page.getByRole('button', { name: 'Restore version 1…' }).click();
    const confirm = page.getByRole('group', { name: 'Restore version 1?' });
    const restore = confirm.getByRole('button', { name: 'Restore as version 3' });
    expect(await restore.isDisabled()).toBe(true);
    expect(await confirm.innerText()).toMatch(/differs from the one stored now/);
    await confirm.getByLabel('Credential at api_key').fill(SECRET);
    await shot('history-config-credential');
    await restore.click();
    await page.getByRole('status').filter({ hasText: 'Restored version 1 as version 3' }).waitFor();
    mock.reset();
    await chatThroughConfig('history-rotated');
    expect(lastUpstreamKey()).toBe(`Bearer ${SECRET}`);
  });

  it('diffs and restores a prompt’s versions', async () => {
    await page.goto(url('/prompts'));
    await page.getByRole('link', { name: '2 · history' }).click();
    await page.getByRole('heading', { name: 'Versions of prompt “Greeting”' }).waitFor();
    const lines = await changedLines();
    expect(lines).toContainEqual(expect.stringMatching(/^-\s+"content": "Hello \{\{name\}\}",?$/));
    expect(lines).toContainEqual(expect.stringMatching(/^\+\s+"content": "Hi there \{\{name\}\}, be brief",?$/));
    expect(lines.join('\n')).toContain('"temperature": 0.2');
    await shot('history-prompt-diff');

    await page.getByRole('button', { name: /^Version 1/ }).click();
    // Escape cancels the confirmation and gives the focus back to the button that opened it.
    await page.getByRole('button', { name: 'Restore version 1…' }).click();
    // The confirmation takes the focus.
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.textContent === 'Restore as version 3');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.textContent === 'Restore version 1…');
    expect(await page.getByRole('group', { name: 'Restore version 1?' }).count()).toBe(0);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Restore as version 3' }).click();
    await page.getByRole('status').filter({ hasText: 'Restored version 1 as version 3' }).waitFor();
    const latest = await admin(gateway, 'GET', '/v1/prompts/history-prompt');
    expect(latest.body).toMatchObject({ version: 3, messages: [{ role: 'user', content: 'Hello {{name}}' }] });
    // The hyperparameters version 1 did not have are not carried over.
    expect(latest.body.hyperparameters ?? {}).toEqual({});
  });

  it('shows end users with their budgets and spend, warns near and over the budget, edits, deletes and links to the log', async () => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'End users' }).click();
    await page.getByRole('heading', { name: 'End users', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'No end users yet' }).waitFor();

    // Create one through the form.
    await page.getByRole('button', { name: 'New end user' }).click();
    await page.getByLabel('User', { exact: true }).fill('ada');
    await page.getByLabel('Budget (USD)').fill('0.000001');
    await page.getByLabel('Budget period').selectOption('monthly');
    await page.getByLabel('Metadata (JSON)').fill('{"plan": "free"}');
    await page.getByRole('button', { name: 'Create end user' }).click();
    await page.getByRole('status').filter({ hasText: 'Created end user “ada”' }).waitFor();
    expect((await admin(gateway, 'GET', '/v1/end-users/ada')).body).toMatchObject({
      budget_limit_usd: 0.000001,
      budget_period: 'monthly',
      metadata: { plan: 'free' },
    });
    expect((await admin(gateway, 'POST', '/v1/end-users', { user: 'grace' })).status).toBe(201);

    // A request of each, then the page again: spend, and ada over her budget.
    for (const user of ['ada', 'grace'])
      await openai(gateway, { 'x-gateway-virtual-key': 'openai-history' }).chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Hello' }],
        user,
      });
    await gateway.flushLogs();
    const refused = await call(gateway, '/v1/chat/completions', {
      method: 'POST',
      headers: { 'x-gateway-virtual-key': 'openai-history' },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Again' }], user: 'ada' },
    });
    expect(refused.status).toBe(402);
    const graceSpent: number = (await admin(gateway, 'GET', '/v1/end-users/grace')).body.spent_usd;
    expect(graceSpent).toBeGreaterThan(0);

    await page.reload();
    const row = (user: string) =>
      page.locator('table.resource-table tbody tr', { has: page.locator('td[data-label="User"]', { hasText: new RegExp(`^${user}$`) }) });
    await row('ada').waitFor();
    expect(await row('ada').getByTestId('over-budget').innerText()).toBe('over budget: requests refused');
    expect(await row('ada').locator('td[data-label="Remaining"]').innerText()).toBe('$0.00');
    // Her spend in the period beside the budget's (the End users page lists what requests spent, issue 36).
    expect(await row('ada').locator('td[data-label="Spend"]').innerText()).toMatch(/^\$0\.\d+$/);
    expect(await row('grace').locator('td[data-label="Budget"]').innerText()).toMatch(/^no budget · \$0\.\d+ spent$/);

    // Edit grace's budget to just above her spend: near the budget (about 90% used).
    await row('grace').getByRole('button', { name: 'Edit grace' }).click();
    // Budgets keep 6 decimals: rounded up, the share used is a little under 90%.
    await page.getByLabel('Budget (USD)').fill((Math.ceil((graceSpent / 0.9) * 1e6) / 1e6).toFixed(6));
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved end user “grace”' }).waitFor();
    expect(await row('grace').getByTestId('near-budget').innerText()).toMatch(/^(8\d|90)% used$/);
    expect(await row('grace').getByTestId('over-budget').count()).toBe(0);
    await shot('end-users');

    // Phone width: the table becomes cards, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    await shot('end-users-phone');
    await page.goto(url('/configs/history-route/versions'));
    await page.getByRole('heading', { name: /Versions of config/ }).waitFor();
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    await shot('history-config-phone');
    await page.goto(url('/end-users'));
    await page.setViewportSize({ width: 1280, height: 900 });

    // Delete grace after a confirmation.
    await row('grace').getByRole('button', { name: 'Delete grace' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted end user “grace”' }).waitFor();
    expect((await admin(gateway, 'GET', '/v1/end-users/grace')).status).toBe(404);

    // From ada to her requests in the log.
    await row('ada').getByRole('link', { name: 'See requests of ada' }).click();
    await page.waitForURL(/\/dashboard\/logs\?user=ada$/);
    await page.locator('table.log-table tbody tr').first().waitFor();
    expect(await page.locator('table.log-table tbody td[data-label="User"]').allInnerTexts()).toEqual(['ada', 'ada']);
  });
});
