import { Module } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DASHBOARD_DIR, DashboardController } from './dashboard.controller';

/**
 * Where `vite build --config dashboard/vite.config.ts` puts the app: `dist/dashboard`
 * under the project root (the first folder above this file holding package.json, which
 * is the checkout both from `src/` under ts-jest and from `dist/src/`).
 */
export function defaultDashboardDir(from = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'dist', 'dashboard');
}

/** Serves the dashboard under `/dashboard` (see DashboardController). */
@Module({
  controllers: [DashboardController],
  providers: [{ provide: DASHBOARD_DIR, useFactory: () => defaultDashboardDir() }],
})
export class DashboardModule {}
