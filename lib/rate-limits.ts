import type Redis from 'ioredis';
import { ExpiringEntries } from './expiring-entries';
import type { GuardedRedis } from './guarded-redis';

/** How many hits a key has in its current window, and when that window ends. */
export interface WindowCount {
  count: number;
  resetInMs: number;
}

/** Fixed-window counters: in this process, or in Redis so that every API process shares one budget per key. */
export interface WindowStore {
  hit(key: string, windowMs: number): Promise<WindowCount>;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetInMs: number;
}

/**
 * At most `max` hits per key and window. A key found over its limit is refused locally until its window ends, so a
 * client that keeps sending while refused costs no store round trip. A store that fails (Redis down) lets requests
 * through: the limits protect capacity, they are not an access control.
 */
export class RateLimiter {
  private readonly blocked = new ExpiringEntries<null>();

  constructor(
    private readonly store: WindowStore,
    readonly max: number,
    readonly windowMs: number,
    private readonly onStoreError: (err: unknown) => void = () => undefined,
  ) {}

  /** Counts one hit against `key`. */
  async take(key: string): Promise<RateDecision> {
    const now = Date.now();
    const blocked = this.blocked.get(key, now);
    if (blocked !== undefined)
      return { allowed: false, limit: this.max, remaining: 0, resetInMs: blocked.expiresAt - now };
    let window: WindowCount;
    try {
      window = await this.store.hit(key, this.windowMs);
    } catch (err) {
      this.onStoreError(err);
      return { allowed: true, limit: this.max, remaining: this.max, resetInMs: this.windowMs };
    }
    const allowed = window.count <= this.max;
    if (!allowed) this.rememberBlocked(key, now + window.resetInMs, now);
    return { allowed, limit: this.max, remaining: Math.max(0, this.max - window.count), resetInMs: window.resetInMs };
  }

  /** At most `maxBlocked` keys are refused locally; beyond them the store answers, as it would anyway. */
  private rememberBlocked(key: string, until: number, now: number): void {
    this.blocked.dropExpired(now);
    if (this.blocked.size < maxBlocked) this.blocked.set(key, null, until);
  }
}

const maxBlocked = 10_000;

/** Counters of this process; expired windows are dropped as new ones start, oldest first, without scanning the table. */
export class MemoryWindowStore implements WindowStore {
  private readonly windows = new ExpiringEntries<{ count: number }>();

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const now = Date.now();
    let window = this.windows.get(key, now);
    if (!window) {
      this.windows.dropExpired(now);
      window = this.windows.set(key, { count: 0 }, now + windowMs);
    }
    window.value.count += 1;
    return { count: window.value.count, resetInMs: window.expiresAt - now };
  }
}

const hitScript = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

type ScriptedRedis = Redis & {
  skillflowRateHit(key: string, windowMs: number): Promise<[number, number]>;
};

/**
 * Counters in Redis under `<prefix><key>`, each incremented and given its expiry atomically by a Lua script, within the
 * connection's deadline (a Redis that hangs fails them at once once it missed one: the limiter lets requests through).
 */
export class RedisWindowStore implements WindowStore {
  constructor(
    private readonly redis: GuardedRedis,
    private readonly prefix: string,
  ) {
    if (!('skillflowRateHit' in redis.client)) {
      redis.client.defineCommand('skillflowRateHit', { numberOfKeys: 1, lua: hitScript });
    }
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, ttl] = await this.redis.run((client) =>
      (client as ScriptedRedis).skillflowRateHit(this.prefix + key, windowMs),
    );
    return { count, resetInMs: ttl };
  }
}
