import { Logger, OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Redis } from 'ioredis';
import { closeRedis, connectRedis } from '../../common/redis/redis-client';
import type { Environment } from '../../config/environment';
import { CachedResponse, ResponseCache } from './response-cache';
import { ThrottledWarning } from '../../common/logging/throttled-warning';

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
    this.redis = connectRedis(
      config.get('REDIS_URL', { infer: true }),
      (error) => this.warning.warn(`Response cache Redis connection: ${error.message}`),
      COMMAND_TIMEOUT_MS,
    );
  }

  async onModuleDestroy(): Promise<void> {
    await closeRedis(this.redis);
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
