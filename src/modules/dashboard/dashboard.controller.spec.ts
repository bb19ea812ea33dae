import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DASHBOARD_DIR, DashboardController } from './dashboard.controller';
import { defaultDashboardDir } from './dashboard.module';

async function appServing(dir: string): Promise<INestApplication> {
  const module = await Test.createTestingModule({ controllers: [DashboardController], providers: [{ provide: DASHBOARD_DIR, useValue: dir }] }).compile();
  const app = module.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('DashboardController', () => {
  let dir: string;
  let app: INestApplication;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dashboard-'));
  });
  afterEach(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 saying to run npm run build while the build is missing: HTML for browsers, JSON otherwise', async () => {
    app = await appServing(dir);
    const html = await request(app.getHttpServer()).get('/dashboard/logs').set('accept', 'text/html');
    expect(html.status).toBe(503);
    expect(html.type).toBe('text/html');
    expect(html.text).toContain('npm run build');
    const json = await request(app.getHttpServer()).get('/dashboard');
    expect(json.status).toBe(503);
    expect(json.body.error).toMatchObject({ type: 'service_unavailable', code: 'dashboard_not_built' });
    expect(json.body.error.message).toMatch(/npm run build/);
  });

  it('serves files, caches hashed assets for a year, answers client routes with index.html and keeps to its folder', async () => {
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>app</title>');
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(dir, '..', `secret-${process.pid}.txt`), 'secret');
    app = await appServing(dir);
    const server = app.getHttpServer();

    const asset = await request(server).get('/dashboard/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.type).toMatch(/javascript/);
    expect((await request(server).get('/dashboard/favicon.svg')).headers['cache-control']).toBe('public, max-age=300');

    for (const path of ['/dashboard', '/dashboard/', '/dashboard/logs', '/dashboard/logs/0195-abc?user=ada']) {
      const page = await request(server).get(path);
      expect({ path, status: page.status }).toEqual({ path, status: 200 });
      expect(page.text).toContain('<title>app</title>');
      expect(page.headers['cache-control']).toBe('no-cache');
      expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    }

    expect((await request(server).get('/dashboard/assets/index-old.js')).status).toBe(404);
    const escape = await request(server).get(`/dashboard/..%2fsecret-${process.pid}.txt`);
    expect(escape.status).toBe(404);
    expect(escape.text).not.toContain('secret');
    rmSync(join(dir, '..', `secret-${process.pid}.txt`));
  });

  it('finds dist/dashboard under the project root from src/ and from dist/src/', () => {
    const root = join(__dirname, '..', '..', '..');
    expect(defaultDashboardDir(__dirname)).toBe(join(root, 'dist', 'dashboard'));
    expect(defaultDashboardDir(join(root, 'dist', 'src', 'modules', 'dashboard'))).toBe(join(root, 'dist', 'dashboard'));
  });
});
