import { once } from 'node:events';
import Redis from 'ioredis';

/**
 * The API's Redis connection for what its processes share: rate-limit windows and quota records. Commands fail at
 * once while Redis is away (no offline queue), and the callers treat a failure as "no record": limits let requests
 * through rather than refuse them all, and quotas count what Temporal knows. Waits briefly for the first connection, so a fresh process starts counting
 * at once; a Redis that is down does not stop the API from starting.
 */
export async function connectApiRedis(url: string, log: (line: string) => void): Promise<Redis> {
  const redis = new Redis(url, {
    connectionName: 'skillflow-api',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 2_000,
  });
  let lastError = '';
  redis.on('error', (err: Error) => {
    if (err.message === lastError) return;
    lastError = err.message;
    log(`Redis unavailable (${err.message}): rate limits let requests through and quotas rest on Temporal alone until it is back`);
  });
  redis.on('ready', () => {
    if (lastError) log('Redis connection ready again');
    lastError = '';
  });
  const timeout = AbortSignal.timeout(2_000);
  await once(redis, 'ready', { signal: timeout }).catch(() => undefined);
  return redis;
}

export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
