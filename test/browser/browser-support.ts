/** What every browser test shares: the dashboard built, the screenshots folder, Debian's chromium. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';

const ROOT = join(__dirname, '..', '..');
export const SHOTS = join(ROOT, 'artifacts', 'screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** `npm run build` builds the dashboard (CI runs it first); built here, the same way, when it is missing. */
function ensureDashboardBuilt(): void {
  if (existsSync(join(ROOT, 'dist', 'dashboard', 'index.html'))) return;
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'dashboard/vite.config.mts', '--logLevel', 'warn'],
    {
      cwd: ROOT,
      stdio: 'pipe',
    },
  );
  // As `npm run build` does: the compressed copies the gateway serves.
  execFileSync(process.execPath, [join(ROOT, 'dashboard', 'compress.mjs')], { cwd: ROOT, stdio: 'pipe' });
}

/** The dashboard built, the screenshots folder made, a headless chromium started. */
export async function startBrowser(): Promise<Browser> {
  ensureDashboardBuilt();
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Signs in on the dashboard's form with a gateway API key and waits for the request log. */
export async function signIn(page: Page, dashboardUrl: string, key: string): Promise<void> {
  await page.goto(dashboardUrl);
  await page.getByLabel('Gateway API key').fill(key);
  await page.getByLabel('Gateway API key').press('Enter');
  await page.getByRole('heading', { name: 'Request log' }).waitFor();
}
