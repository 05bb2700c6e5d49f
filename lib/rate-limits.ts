import type Redis from 'ioredis';

/** How many hits a key has in its current window, and when that window ends. */
export interface WindowCount {
  count: number;
  resetInMs: number;
}

/** Fixed-window counters: in this process, or in Redis so that every API process shares one budget per key. */
export interface WindowStore {
  hit(key: string, windowMs: number): Promise<WindowCount>;
  peek(key: string): Promise<WindowCount>;
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
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly store: WindowStore,
    readonly max: number,
    readonly windowMs: number,
    private readonly onStoreError: (err: unknown) => void = () => undefined,
  ) {}

  /** Counts one hit against `key`. */
  async take(key: string): Promise<RateDecision> {
    return this.decide(key, true);
  }

  /** Whether `key` is over its limit, without counting a hit. */
  async check(key: string): Promise<RateDecision> {
    return this.decide(key, false);
  }

  private async decide(key: string, count: boolean): Promise<RateDecision> {
    const blocked = this.blockedUntil.get(key);
    const now = Date.now();
    if (blocked !== undefined) {
      if (blocked > now) return { allowed: false, limit: this.max, remaining: 0, resetInMs: blocked - now };
      this.blockedUntil.delete(key);
    }
    let window: WindowCount;
    try {
      window = count ? await this.store.hit(key, this.windowMs) : await this.store.peek(key);
    } catch (err) {
      this.onStoreError(err);
      return { allowed: true, limit: this.max, remaining: this.max, resetInMs: this.windowMs };
    }
    const allowed = count ? window.count <= this.max : window.count < this.max;
    if (!allowed) this.rememberBlocked(key, now + window.resetInMs);
    return { allowed, limit: this.max, remaining: Math.max(0, this.max - window.count), resetInMs: window.resetInMs };
  }

  private rememberBlocked(key: string, until: number): void {
    if (this.blockedUntil.size >= 10_000) {
      const now = Date.now();
      for (const [other, end] of this.blockedUntil) if (end <= now) this.blockedUntil.delete(other);
      if (this.blockedUntil.size >= 10_000) return;
    }
    this.blockedUntil.set(key, until);
  }
}

/** Counters of this process; expired windows are dropped as the map grows. */
export class MemoryWindowStore implements WindowStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      if (!window && this.windows.size >= 50_000) this.prune(now);
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetInMs: window.resetAt - now };
  }

  async peek(key: string): Promise<WindowCount> {
    const now = Date.now();
    const window = this.windows.get(key);
    return !window || window.resetAt <= now ? { count: 0, resetInMs: 0 } : { count: window.count, resetInMs: window.resetAt - now };
  }

  private prune(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
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

const peekScript = `
local count = redis.call('GET', KEYS[1])
if not count then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {tonumber(count), ttl}
`;

type ScriptedRedis = Redis & {
  skillflowRateHit(key: string, windowMs: number): Promise<[number, number]>;
  skillflowRatePeek(key: string): Promise<[number, number]>;
};

/** Counters in Redis under `<prefix><key>`, each incremented and given its expiry atomically by a Lua script. */
export class RedisWindowStore implements WindowStore {
  private readonly redis: ScriptedRedis;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    if (!('skillflowRateHit' in redis)) {
      redis.defineCommand('skillflowRateHit', { numberOfKeys: 1, lua: hitScript });
      redis.defineCommand('skillflowRatePeek', { numberOfKeys: 1, lua: peekScript });
    }
    this.redis = redis as ScriptedRedis;
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, ttl] = await this.redis.skillflowRateHit(this.prefix + key, windowMs);
    return { count, resetInMs: ttl };
  }

  async peek(key: string): Promise<WindowCount> {
    const [count, ttl] = await this.redis.skillflowRatePeek(this.prefix + key);
    return { count, resetInMs: ttl };
  }
}
