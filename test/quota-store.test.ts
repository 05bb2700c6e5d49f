import { Client } from '@temporalio/client';
import Redis from 'ioredis';
import { HttpError } from '../api/errors';
import { LockWaitError, MemoryQuotaStore, RedisQuotaStore, type QuotaStore } from '../api/quota-store';
import { Quotas } from '../api/quotas';
import { guardApiRedis } from '../api/redis';
import type { GuardedRedis } from '../lib/guarded-redis';
import { loadConfig } from '../lib/config';
import { requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';

/** The quotas' records beside Temporal, in memory and on the shared Redis (each test under a prefix of its own). */
let redis: Redis;
let guarded: GuardedRedis;
const prefixes: string[] = [];
const newPrefix = () => {
  const prefix = uniqueRedisPrefix('quota-store');
  prefixes.push(prefix);
  return prefix;
};

beforeAll(async () => {
  await requireRedis();
  redis = new Redis(testRedisUrl());
  guarded = guardApiRedis(redis, () => undefined);
});
afterAll(async () => {
  for (const prefix of prefixes) {
    const left = await redis.keys(`${prefix}*`);
    if (left.length > 0) await redis.del(...left);
  }
  guarded.guard.close();
  await redis.quit();
});

const stores: Array<[string, () => QuotaStore]> = [
  ['memory', () => new MemoryQuotaStore()],
  ['Redis', () => new RedisQuotaStore(guarded, newPrefix())],
];

describe.each(stores)('the quota store in %s', (_name, make) => {
  it('a deleted session is no longer recent and is listed as deleted; created again under its id, it is recent again', async () => {
    const store = make();
    await store.addRecentSession('ann', 's1');
    await store.addRecentSession('ann', 's2');
    await store.addDeletedSession('ann', 's1');
    expect([await store.recentSessions('ann'), await store.deletedSessions('ann')]).toEqual([['s2'], ['s1']]);
    expect(await store.deletedSessions('bea')).toEqual([]);
    await store.addRecentSession('ann', 's1');
    expect([(await store.recentSessions('ann')).sort(), await store.deletedSessions('ann')]).toEqual([
      ['s1', 's2'],
      [],
    ]);
  });
});

describe('the per-user session lock on Redis', () => {
  it('held by another request for the whole wait, it refuses (LockWaitError) without running the work, and Quotas answers 503 busy', async () => {
    const prefix = newPrefix();
    const waitMs = 300;
    const holder = new RedisQuotaStore(guarded, prefix, undefined, waitMs);
    const waiter = new RedisQuotaStore(guarded, prefix, undefined, waitMs);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const holding = new Promise<void>((resolve) => (entered = resolve));
    const held = holder.withLock('sessions:ann', async () => {
      entered();
      await released;
      return 'first';
    });
    await holding;

    let ran = false;
    const refused = await waiter
      .withLock('sessions:ann', async () => {
        ran = true;
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(LockWaitError);
    expect(ran).toBe(false);
    expect((refused as LockWaitError).retryAfterMs).toBeGreaterThan(0);
    expect((refused as LockWaitError).retryAfterMs).toBeLessThanOrEqual(10_000);

    // Quotas turns it into 503 busy with retry-after; the Temporal client is never reached (lazy, not connected).
    const client = new Client();
    try {
      const config = loadConfig({ SKILLFLOW_MAX_SESSIONS_PER_USER: '5' });
      const quotas = new Quotas(client, config, waiter);
      const answer = await quotas
        .createSession('ann', 'new-session', async () => 'created')
        .catch((err: unknown) => err);
      expect(answer).toBeInstanceOf(HttpError);
      expect([(answer as HttpError).statusCode, (answer as HttpError).code]).toEqual([503, 'busy']);
      expect((answer as HttpError).retryAfterSeconds).toBeGreaterThan(0);
    } finally {
      await client.connection.close();
    }

    release();
    expect(await held).toBe('first');
    // Released: the next request takes it at once.
    expect(await waiter.withLock('sessions:ann', async () => 'second')).toBe('second');
  });
});
