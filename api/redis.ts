import { once } from 'node:events';
import Redis from 'ioredis';
import { GuardedRedis } from '../lib/guarded-redis';
import type { OpsLog } from '../lib/logging';

/**
 * How long a command of the API's Redis connection may wait. The rate limit asks Redis on every request: a Redis that
 * hangs adds this to the first request after it hung (the next ones fail at once, see HangGuard), and a Redis that is
 * well answers in a millisecond or two.
 */
export const apiRedisDeadlineMs = 2_000;

/**
 * How long one attempt to connect to Redis may take, and how long a starting API waits for its first connection (a
 * Redis that is down must not hold the start longer).
 */
export const apiRedisConnectMs = 2_000;

/**
 * The API's Redis connection for what its processes share: rate-limit windows and quota records. Commands fail at
 * once while Redis is away (no offline queue) or hangs (after one missed the deadline), and the callers treat a
 * failure as "no record": limits let requests through rather than refuse them all, and quotas count what Temporal
 * knows. Waits briefly for the first connection, so a fresh process starts counting at once; a Redis that is down does
 * not stop the API from starting.
 */
export async function connectApiRedis(url: string, log: OpsLog): Promise<Redis> {
  const redis = new Redis(url, {
    connectionName: 'skillflow-api',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: apiRedisConnectMs,
  });
  let lastError = '';
  redis.on('error', (err: Error) => {
    if (err.message === lastError) return;
    lastError = err.message;
    log(`Redis unavailable (${err.message}): ${apiRedisMeanwhile} until it is back`);
  });
  redis.on('ready', () => {
    if (lastError) log('Redis connection ready again', 'info');
    lastError = '';
  });
  const timeout = AbortSignal.timeout(apiRedisConnectMs);
  await once(redis, 'ready', { signal: timeout }).catch(() => undefined);
  return redis;
}

const apiRedisMeanwhile = 'rate limits let requests through and quotas rest on Temporal alone';

/** The API's connection with its deadline (the connection given, or one connectApiRedis opened). */
export function guardApiRedis(redis: Redis, log: OpsLog): GuardedRedis {
  return new GuardedRedis(redis, {
    what: `Redis at ${redis.options.host ?? 'localhost'}:${redis.options.port ?? 6379}`,
    deadlineMs: apiRedisDeadlineMs,
    meanwhile: apiRedisMeanwhile,
    log,
  });
}

export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
