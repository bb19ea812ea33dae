import { Redis } from 'ioredis';

/**
 * A Redis client for the gateway's hot path: a stuck or unreachable server costs at most
 * `commandTimeoutMs` per command, and ioredis keeps reconnecting in the background.
 * `waitWhileConnecting`: commands sent before the connection is up (at start-up, or
 * during an outage) wait for it, within that timeout; otherwise they fail at once.
 */
export function connectRedis(url: string, onError: (error: Error) => void, commandTimeoutMs = 500, waitWhileConnecting = false): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: waitWhileConnecting,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2_000,
  });
  // Without a listener ioredis prints every failed reconnect as an unhandled error.
  redis.on('error', onError);
  return redis;
}

/** quit() lets pending replies arrive; it fails when not connected, and disconnect() also stops reconnecting. */
export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
