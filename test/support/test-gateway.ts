import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createGatewayApp } from '../../src/app.factory';
import { validateEnvironment } from '../../src/config/environment';
import { LogWriter } from '../../src/modules/logging/log-writer';

export const TEST_ADMIN_KEY = 'gk-test-admin-key-0123456789';
/** The test gateway's METRICS_TOKEN: `/metrics` answers only with it (pass `METRICS_TOKEN: ''` for none). */
export const TEST_METRICS_TOKEN = 'metrics-test-token-0123456789';

export interface TestGateway {
  app: INestApplication;
  /** e.g. http://127.0.0.1:PORT */
  url: string;
  adminKey: string;
  /** The test database, reached directly (not through `databaseHost`). */
  databaseUrl: string;
  dataSource: DataSource;
  /** This gateway's own log journal directory (LOG_JOURNAL_DIR), removed by `close()`. */
  journalDir: string;
  /** Waits until every queued log row is in the database. */
  flushLogs(): Promise<void>;
  close(): Promise<void>;
}

function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

function withHost(url: string, host: string): string {
  const parsed = new URL(url);
  parsed.host = host;
  return parsed.toString();
}

/**
 * A gateway on a free port with a fresh database of its own (real PostgreSQL, the real
 * migrations, run once by the global setup on the database this one is copied from),
 * dropped again by `close()`. `options.databaseHost` (host:port, e.g. a
 * TcpProxy) is where the gateway reaches that database instead.
 */
export async function startTestGateway(env: Record<string, string> = {}, options: { databaseHost?: string } = {}): Promise<TestGateway> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  if (!adminUrl) throw new Error('TEST_PG_ADMIN_URL is not set: run the e2e tests through jest (global setup)');
  const database = `gateway_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  // A copy of the database the global setup migrated (the gateway finds every migration run).
  const template = process.env.TEST_PG_TEMPLATE;
  await admin.query(`create database ${database}${template ? ` template ${template}` : ''}`);
  await admin.end();

  const url = databaseUrl(adminUrl, database);
  const journalDir = mkdtempSync(join(tmpdir(), 'gateway-journal-'));
  const app = await createGatewayApp(
    validateEnvironment({
      DATABASE_URL: options.databaseHost ? withHost(url, options.databaseHost) : url,
      LOG_JOURNAL_DIR: journalDir,
      // The mock providers listen on loopback.
      UPSTREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      GATEWAY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
      LOG_LEVEL: 'error',
      LOG_FLUSH_INTERVAL_MS: '20',
      PORT: '0',
      METRICS_TOKEN: TEST_METRICS_TOKEN,
      ...env,
    }),
  );
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const logWriter = app.get(LogWriter);

  return {
    app,
    url: `http://127.0.0.1:${port}`,
    adminKey: TEST_ADMIN_KEY,
    databaseUrl: url,
    dataSource: app.get(DataSource),
    flushLogs: async () => {
      // The row is queued one tick after the response closes.
      await new Promise((r) => setTimeout(r, 10));
      await logWriter.flush();
    },
    journalDir,
    close: async () => {
      await app.close();
      rmSync(journalDir, { recursive: true, force: true });
      const cleanup = new Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${database} with (force)`);
      await cleanup.end();
    },
  };
}

/** `GET /metrics` of a gateway (its URL), with the test token. */
export function fetchMetrics(url: string, token = TEST_METRICS_TOKEN): Promise<Response> {
  return fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
}

/** Calls the admin API with the bootstrap admin key. */
export async function admin<T = any>(gateway: TestGateway, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}
