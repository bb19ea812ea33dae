import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres';

/**
 * One PostgreSQL server for the e2e run: the one DATABASE_URL names, or else an
 * ephemeral embedded cluster. On it, one database with every migration run, which each
 * test file's own database is copied from (TEST_PG_TEMPLATE, see startTestGateway): a copy
 * takes tens of milliseconds where running the migrations again took half a second.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) {
    process.env.TEST_PG_ADMIN_URL = process.env.DATABASE_URL;
  } else {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-test-pg-'));
    chmodSync(dataDir, 0o755); // reachable for the postgres OS user when we run as root
    const server = new EmbeddedPostgres({ dataDir, database: 'postgres', ephemeral: true });
    process.env.TEST_PG_ADMIN_URL = await server.start();
    (globalThis as Record<string, unknown>).__embeddedPostgres = { server, dataDir };
  }
  process.env.TEST_PG_TEMPLATE = await migratedTemplate(process.env.TEST_PG_ADMIN_URL);
}

async function migratedTemplate(adminUrl: string): Promise<string> {
  const name = `gateway_test_template_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  // No connection may stay open on a template while it is copied.
  const dataSource = new DataSource(dataSourceOptions(url.toString(), randomBytes(32).toString('hex')));
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
  (globalThis as Record<string, unknown>).__templateDatabase = { adminUrl, name };
  return name;
}
