import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';

/**
 * What the quotas keep beyond Temporal: a lock per user while a session is counted and created, the sessions created
 * in the last minute (Temporal's visibility may not list them yet), the model tokens of deleted sessions (Temporal
 * forgets them with the session), and who sweeps idle sessions this round. In Redis when it is configured, so every
 * API process agrees; in this process's memory otherwise (without Redis there is one API process).
 */
export interface QuotaStore {
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  addRecentSession(user: string, sessionId: string): Promise<void>;
  recentSessions(user: string): Promise<string[]>;
  forgetSession(user: string, sessionId: string): Promise<void>;
  addSpentTokens(user: string, day: string, tokens: number): Promise<void>;
  spentTokens(user: string, day: string): Promise<number>;
  /** True for one caller per `ttlMs` across every process sharing the store. */
  claim(name: string, ttlMs: number): Promise<boolean>;
}

/** How long a created session counts as "recent": far longer than visibility takes to list it. */
export const recentWindowMs = 60_000;
const lockTtlMs = 10_000;
const spentTtlMs = 3 * 24 * 3600_000;

export class MemoryQuotaStore implements QuotaStore {
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly recent = new Map<string, Map<string, number>>();
  private readonly spent = new Map<string, number>();

  async withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(name) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const settled = run.catch(() => undefined);
    this.locks.set(name, settled);
    void settled.then(() => {
      if (this.locks.get(name) === settled) this.locks.delete(name);
    });
    return run;
  }

  async addRecentSession(user: string, sessionId: string): Promise<void> {
    const sessions = this.recent.get(user) ?? new Map<string, number>();
    sessions.set(sessionId, Date.now());
    this.recent.set(user, sessions);
  }

  async recentSessions(user: string): Promise<string[]> {
    const sessions = this.recent.get(user);
    if (!sessions) return [];
    for (const [id, at] of sessions) if (at < Date.now() - recentWindowMs) sessions.delete(id);
    if (sessions.size === 0) this.recent.delete(user);
    return [...sessions.keys()];
  }

  async forgetSession(user: string, sessionId: string): Promise<void> {
    this.recent.get(user)?.delete(sessionId);
  }

  async addSpentTokens(user: string, day: string, tokens: number): Promise<void> {
    for (const key of this.spent.keys()) if (!key.endsWith(`\0${day}`)) this.spent.delete(key);
    this.spent.set(`${user}\0${day}`, (this.spent.get(`${user}\0${day}`) ?? 0) + tokens);
  }

  async spentTokens(user: string, day: string): Promise<number> {
    return this.spent.get(`${user}\0${day}`) ?? 0;
  }

  async claim(): Promise<boolean> {
    return true;
  }
}

const releaseScript = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * The same records in Redis under `<prefix>quota:`. A Redis that fails is reported and treated as holding nothing:
 * quotas then rest on Temporal alone (the count of visible sessions, the usage of existing turns).
 */
export class RedisQuotaStore implements QuotaStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  async withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const key = `${this.prefix}quota:lock:${name}`;
    const token = randomBytes(12).toString('hex');
    const deadline = Date.now() + lockTtlMs / 2;
    let held = false;
    try {
      while (!(held = (await this.redis.set(key, token, 'PX', lockTtlMs, 'NX')) === 'OK') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } catch (err) {
      this.onError(err);
    }
    try {
      return await fn();
    } finally {
      if (held) await this.redis.eval(releaseScript, 1, key, token).catch((err: unknown) => this.onError(err));
    }
  }

  async addRecentSession(user: string, sessionId: string): Promise<void> {
    const key = this.recentKey(user);
    await this.redis
      .multi()
      .zadd(key, Date.now(), sessionId)
      .pexpire(key, recentWindowMs)
      .exec()
      .catch((err: unknown) => this.onError(err));
  }

  async recentSessions(user: string): Promise<string[]> {
    const key = this.recentKey(user);
    try {
      await this.redis.zremrangebyscore(key, '-inf', Date.now() - recentWindowMs);
      return await this.redis.zrange(key, 0, -1);
    } catch (err) {
      this.onError(err);
      return [];
    }
  }

  async forgetSession(user: string, sessionId: string): Promise<void> {
    await this.redis.zrem(this.recentKey(user), sessionId).catch((err: unknown) => this.onError(err));
  }

  async addSpentTokens(user: string, day: string, tokens: number): Promise<void> {
    const key = this.spentKey(user, day);
    await this.redis
      .multi()
      .incrby(key, tokens)
      .pexpire(key, spentTtlMs)
      .exec()
      .catch((err: unknown) => this.onError(err));
  }

  async spentTokens(user: string, day: string): Promise<number> {
    try {
      return Number((await this.redis.get(this.spentKey(user, day))) ?? 0);
    } catch (err) {
      this.onError(err);
      return 0;
    }
  }

  async claim(name: string, ttlMs: number): Promise<boolean> {
    try {
      return (await this.redis.set(`${this.prefix}quota:claim:${name}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
    } catch (err) {
      this.onError(err);
      return true;
    }
  }

  private recentKey(user: string): string {
    return `${this.prefix}quota:recent:${user}`;
  }

  private spentKey(user: string, day: string): string {
    return `${this.prefix}quota:spent:${day}:${user}`;
  }
}
