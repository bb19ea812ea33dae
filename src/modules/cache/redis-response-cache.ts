import { Logger, OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Redis } from 'ioredis';
import type { Environment } from '../../config/environment';
import { CachedResponse, ResponseCache } from './response-cache';
import { ThrottledWarning } from './throttled-warning';

export const REDIS_CACHE_PREFIX = 'gateway:cache:';
/** A cache answer later than this is a miss: going upstream beats waiting on a stuck Redis. */
const COMMAND_TIMEOUT_MS = 500;

/** The response cache in Redis (REDIS_URL): entries expire by themselves (`PX`), nothing to purge. */
export class RedisResponseCache extends ResponseCache implements OnModuleDestroy {
  private readonly logger = new Logger(RedisResponseCache.name);
  private readonly warning = new ThrottledWarning(this.logger);
  private readonly maxEntryBytes: number;
  private readonly redis: Redis;

  constructor(config: ConfigService<Environment, true>) {
    super();
    this.maxEntryBytes = config.get('CACHE_MAX_ENTRY_BYTES', { infer: true });
    this.redis = new Redis(config.get('REDIS_URL', { infer: true })!, {
      lazyConnect: false,
      // While Redis is down, commands fail at once (a miss) instead of queueing behind the outage;
      // ioredis keeps reconnecting in the background.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
    });
    // Without a listener ioredis prints every failed reconnect as an unhandled error.
    this.redis.on('error', (error: Error) => this.warning.warn(`Response cache Redis connection: ${error.message}`));
  }

  async onModuleDestroy(): Promise<void> {
    // quit() lets pending replies arrive; it fails when not connected, and disconnect() also stops reconnecting.
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  async get(key: string): Promise<CachedResponse | null> {
    try {
      const json = await this.redis.get(REDIS_CACHE_PREFIX + key);
      return json === null ? null : (JSON.parse(json) as CachedResponse);
    } catch (error) {
      this.warning.warn(`Response cache lookup failed: ${(error as Error).message}`);
      return null;
    }
  }

  async set(key: string, value: CachedResponse, maxAgeSeconds: number): Promise<void> {
    const json = JSON.stringify(value);
    if (Buffer.byteLength(json) > this.maxEntryBytes) return;
    try {
      await this.redis.set(REDIS_CACHE_PREFIX + key, json, 'PX', Math.round(maxAgeSeconds * 1000));
    } catch (error) {
      this.warning.warn(`Response cache write failed: ${(error as Error).message}`);
    }
  }
}
