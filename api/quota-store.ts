import { randomBytes } from 'node:crypto';
import type { GuardedRedis } from '../lib/guarded-redis';

/**
 * What the quotas keep beyond Temporal: a lock per user while a session is counted and created, the sessions created
 * in the last minute and those deleted in the last ten (Temporal's visibility may not list the first yet, nor have
 * dropped the second), the model tokens of deleted sessions (Temporal forgets them with the session), and who sweeps
 * idle sessions this round. In Redis when it is configured, so every API process agrees; in this process's memory
 * otherwise (without Redis there is one API process).
 */
export interface QuotaStore {
  /** Runs `fn` holding the lock; rejects with LockWaitError, without running it, when another holder kept it too long. */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Records a session just created (and that it is no longer deleted, for a session id used again). */
  addRecentSession(user: string, sessionId: string): Promise<void>;
  recentSessions(user: string): Promise<string[]>;
  /** Records a session just deleted: no longer recent, and deleted until visibility has surely caught up. */
  addDeletedSession(user: string, sessionId: string): Promise<void>;
  deletedSessions(user: string): Promise<string[]>;
  addSpentTokens(user: string, day: string, tokens: number): Promise<void>;
  spentTokens(user: string, day: string): Promise<number>;
  /** True for one caller per `ttlMs` across every process sharing the store. */
  claim(name: string, ttlMs: number): Promise<boolean>;
}

/** How long a created session counts as "recent": far longer than visibility takes to list it. */
export const recentWindowMs = 60_000;
/**
 * How long a deleted session is subtracted from what visibility lists: Temporal drops a deleted execution from its
 * visibility store in the background, which took seconds on a loaded machine; ten minutes leave a wide margin, and an
 * id is only subtracted while visibility still lists it.
 */
export const deletedWindowMs = 600_000;
const lockTtlMs = 10_000;
/**
 * How long a request waits for a user's lock that another holds: a holder counts and creates one session (a listing and
 * a workflow start, well under a second), so a wait this long means a holder stuck on Temporal or gone (its lock then
 * expires at `lockTtlMs`). Counting without the lock would let several requests take the last place together.
 */
export const lockWaitMs = lockTtlMs / 2;

/** The lock stayed held by another request for the whole wait: nothing was done; the caller may try again. */
export class LockWaitError extends Error {
  override name = 'LockWaitError';
  constructor(
    readonly lock: string,
    readonly waitedMs: number,
    /** When the holder's lock expires at the latest. */
    readonly retryAfterMs: number,
  ) {
    super(`The lock ${lock} stayed held by another request for ${waitedMs} ms.`);
  }
}
const spentTtlMs = 3 * 24 * 3600_000;

export class MemoryQuotaStore implements QuotaStore {
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly recent = new Map<string, Map<string, number>>();
  private readonly deleted = new Map<string, Map<string, number>>();
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
    this.deleted.get(user)?.delete(sessionId);
    record(this.recent, user, sessionId);
  }

  async recentSessions(user: string): Promise<string[]> {
    return within(this.recent, user, recentWindowMs);
  }

  async addDeletedSession(user: string, sessionId: string): Promise<void> {
    this.recent.get(user)?.delete(sessionId);
    record(this.deleted, user, sessionId);
  }

  async deletedSessions(user: string): Promise<string[]> {
    return within(this.deleted, user, deletedWindowMs);
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

/** Notes that `user`'s session `sessionId` was recorded now. */
function record(byUser: Map<string, Map<string, number>>, user: string, sessionId: string): void {
  const sessions = byUser.get(user) ?? new Map<string, number>();
  sessions.set(sessionId, Date.now());
  byUser.set(user, sessions);
}

/** The sessions of `user` recorded in the last `windowMs`; older ones are dropped. */
function within(byUser: Map<string, Map<string, number>>, user: string, windowMs: number): string[] {
  const sessions = byUser.get(user);
  if (!sessions) return [];
  for (const [id, at] of sessions) if (at < Date.now() - windowMs) sessions.delete(id);
  if (sessions.size === 0) byUser.delete(user);
  return [...sessions.keys()];
}

const releaseScript = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * The same records in Redis under `<prefix>quota:`. A Redis that fails is reported and treated as holding nothing:
 * quotas then rest on Temporal alone (the count of visible sessions, the usage of existing turns), and the lock is
 * not held (a Redis that cannot be reached cannot say who holds it).
 */
export class RedisQuotaStore implements QuotaStore {
  constructor(
    private readonly redis: GuardedRedis,
    private readonly prefix: string,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly waitMs = lockWaitMs,
  ) {}

  async withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const key = `${this.prefix}quota:lock:${name}`;
    const token = randomBytes(12).toString('hex');
    const deadline = Date.now() + this.waitMs;
    let held = false;
    try {
      while (!(held = (await this.redis.run((redis) => redis.set(key, token, 'PX', lockTtlMs, 'NX'))) === 'OK')) {
        if (Date.now() >= deadline) {
          const expiresInMs = await this.redis.run((redis) => redis.pttl(key));
          throw new LockWaitError(name, this.waitMs, expiresInMs > 0 ? expiresInMs : lockTtlMs);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } catch (err) {
      if (err instanceof LockWaitError) throw err;
      this.onError(err);
    }
    try {
      return await fn();
    } finally {
      if (held)
        await this.redis
          .run((redis) => redis.eval(releaseScript, 1, key, token))
          .catch((err: unknown) => this.onError(err));
    }
  }

  async addRecentSession(user: string, sessionId: string): Promise<void> {
    const key = this.recentKey(user);
    await this.redis
      .run((redis) =>
        redis
          .multi()
          .zrem(this.deletedKey(user), sessionId)
          .zadd(key, Date.now(), sessionId)
          .pexpire(key, recentWindowMs)
          .exec(),
      )
      .catch((err: unknown) => this.onError(err));
  }

  async recentSessions(user: string): Promise<string[]> {
    return this.readWindow(this.recentKey(user), recentWindowMs);
  }

  async addDeletedSession(user: string, sessionId: string): Promise<void> {
    const key = this.deletedKey(user);
    await this.redis
      .run((redis) =>
        redis
          .multi()
          .zrem(this.recentKey(user), sessionId)
          .zadd(key, Date.now(), sessionId)
          .pexpire(key, deletedWindowMs)
          .exec(),
      )
      .catch((err: unknown) => this.onError(err));
  }

  async deletedSessions(user: string): Promise<string[]> {
    return this.readWindow(this.deletedKey(user), deletedWindowMs);
  }

  async addSpentTokens(user: string, day: string, tokens: number): Promise<void> {
    const key = this.spentKey(user, day);
    await this.redis
      .run((redis) => redis.multi().incrby(key, tokens).pexpire(key, spentTtlMs).exec())
      .catch((err: unknown) => this.onError(err));
  }

  async spentTokens(user: string, day: string): Promise<number> {
    try {
      return Number((await this.redis.run((redis) => redis.get(this.spentKey(user, day)))) ?? 0);
    } catch (err) {
      this.onError(err);
      return 0;
    }
  }

  async claim(name: string, ttlMs: number): Promise<boolean> {
    try {
      return (
        (await this.redis.run((redis) => redis.set(`${this.prefix}quota:claim:${name}`, '1', 'PX', ttlMs, 'NX'))) ===
        'OK'
      );
    } catch (err) {
      this.onError(err);
      return true;
    }
  }

  /** The members of a sorted set of sessions by time recorded, in the last `windowMs` (older ones removed). */
  private async readWindow(key: string, windowMs: number): Promise<string[]> {
    try {
      await this.redis.run((redis) => redis.zremrangebyscore(key, '-inf', Date.now() - windowMs));
      return await this.redis.run((redis) => redis.zrange(key, 0, -1));
    } catch (err) {
      this.onError(err);
      return [];
    }
  }

  private recentKey(user: string): string {
    return `${this.prefix}quota:recent:${user}`;
  }

  private deletedKey(user: string): string {
    return `${this.prefix}quota:deleted:${user}`;
  }

  private spentKey(user: string, day: string): string {
    return `${this.prefix}quota:spent:${day}:${user}`;
  }
}
