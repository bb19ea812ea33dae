import { Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource } from 'typeorm';
import type { Environment } from '../../config/environment';
import { CachedResponse, ResponseCache } from './response-cache';
import { ThrottledWarning } from '../../common/logging/throttled-warning';

/** A lookup slower than this is treated as a miss: going upstream beats waiting on a stuck database. */
const LOOKUP_TIMEOUT_MS = 500;
const PURGE_INTERVAL_MS = 60_000;
/** Rows per purge statement, so no single DELETE holds locks for long. */
const PURGE_BATCH = 1000;

/**
 * The response cache in the gateway's own PostgreSQL (table `response_cache`). Reads
 * compare `expires_at` with the database clock, so instances with drifting clocks agree;
 * expired rows are deleted in the background.
 */
export class PostgresResponseCache extends ResponseCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(PostgresResponseCache.name);
  private readonly warning = new ThrottledWarning(this.logger);
  private readonly maxEntryBytes: number;
  private purgeTimer?: NodeJS.Timeout;
  private purging?: Promise<number>;

  constructor(
    private readonly dataSource: DataSource,
    config: ConfigService<Environment, true>,
  ) {
    super();
    this.maxEntryBytes = config.get('CACHE_MAX_ENTRY_BYTES', { infer: true });
  }

  onModuleInit(): void {
    this.purgeTimer = setInterval(() => {
      // A purge still running (slow database) is not started twice.
      this.purging ??= this.purgeExpired().finally(() => (this.purging = undefined));
    }, PURGE_INTERVAL_MS);
    this.purgeTimer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.purgeTimer);
  }

  async get(key: string): Promise<CachedResponse | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        this.warning.warn(`Response cache lookup took over ${LOOKUP_TIMEOUT_MS} ms; served as a miss`);
        resolve(null);
      }, LOOKUP_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.lookup(key), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async set(key: string, value: CachedResponse, maxAgeSeconds: number): Promise<void> {
    const json = JSON.stringify(value);
    if (Buffer.byteLength(json) > this.maxEntryBytes) return;
    try {
      await this.dataSource.query(
        `insert into response_cache (key, value, expires_at)
         values ($1, $2::jsonb, now() + make_interval(secs => $3::double precision))
         on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at, created_at = now()`,
        [key, json, maxAgeSeconds],
      );
    } catch (error) {
      this.warning.warn(`Response cache write failed: ${(error as Error).message}`);
    }
  }

  /** Deletes expired rows, a bounded batch per statement; resolves with how many. */
  async purgeExpired(): Promise<number> {
    let total = 0;
    try {
      for (;;) {
        // For DELETE, TypeORM's query() resolves with [rows, affected row count].
        const [, deleted] = (await this.dataSource.query(
          `delete from response_cache where key in (select key from response_cache where expires_at < now() limit $1)`,
          [PURGE_BATCH],
        )) as [unknown[], number];
        total += deleted;
        if (deleted < PURGE_BATCH) return total;
      }
    } catch (error) {
      this.warning.warn(`Purging expired response cache entries failed: ${(error as Error).message}`);
      return total;
    }
  }

  private async lookup(key: string): Promise<CachedResponse | null> {
    try {
      const rows = (await this.dataSource.query(`select value from response_cache where key = $1 and expires_at > now()`, [key])) as {
        value: CachedResponse;
      }[];
      return rows[0]?.value ?? null;
    } catch (error) {
      this.warning.warn(`Response cache lookup failed: ${(error as Error).message}`);
      return null;
    }
  }
}
