import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import type { GuardedRedis } from '../../lib/guarded-redis';

/** How long a place stays taken without its process renewing it: a process that dies gives its places back by then. */
export const streamPlaceTtlMs = 60_000;

/** Takes a place when fewer than ARGV[2] live ones are taken: drops expired places, counts, adds. 1 taken, 0 full. */
const takeScript = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

type ScriptedRedis = Redis & {
  skillflowTakeStreamPlace(
    key: string,
    now: number,
    max: number,
    expiresAt: number,
    place: string,
    ttlMs: number,
  ): Promise<number>;
};

export type StreamPlace = { taken: true; giveBack(): void } | { taken: false };

/**
 * Every API process's open streams per user, in Redis (a sorted set per user of places, each scored by when it
 * expires), so a user's stream cap holds across the processes sharing SKILLFLOW_REDIS_URL. Each process renews its
 * places while their streams are open. When Redis does not answer (within the connection's deadline), a place is
 * granted: the caps protect capacity, they are not an access control (each process still applies its own).
 */
export class SharedStreamCounts {
  private readonly process = randomBytes(8).toString('hex');
  private readonly held = new Map<string, string>();
  private taken = 0;
  private readonly renewal: NodeJS.Timeout;

  constructor(
    private readonly redis: GuardedRedis,
    private readonly prefix: string,
    private readonly onError: (err: unknown) => void,
    private readonly now: () => number = Date.now,
  ) {
    if (!('skillflowTakeStreamPlace' in redis.client))
      redis.client.defineCommand('skillflowTakeStreamPlace', { numberOfKeys: 1, lua: takeScript });
    this.renewal = setInterval(() => void this.renew(), streamPlaceTtlMs / 3);
    this.renewal.unref();
  }

  /** A place for one more of `user`'s streams, unless `max` are open across the processes. */
  async take(user: string, max: number): Promise<StreamPlace> {
    const key = this.keyOf(user);
    const place = `${this.process}:${(this.taken += 1)}`;
    const now = this.now();
    try {
      const taken = await this.redis.run((client) =>
        (client as ScriptedRedis).skillflowTakeStreamPlace(
          key,
          now,
          max,
          now + streamPlaceTtlMs,
          place,
          streamPlaceTtlMs,
        ),
      );
      if (taken === 0) return { taken: false };
    } catch (err) {
      this.onError(err);
      return { taken: true, giveBack: () => undefined };
    }
    this.held.set(place, key);
    return {
      taken: true,
      giveBack: () => {
        if (!this.held.delete(place)) return;
        this.redis.run((client) => client.zrem(key, place)).catch((err: unknown) => this.onError(err));
      },
    };
  }

  /** Renews this process's places (run every third of their lifetime; exposed for tests). */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const expiresAt = this.now() + streamPlaceTtlMs;
    await this.redis
      .run((client) => {
        const pipeline = client.pipeline();
        for (const [place, key] of this.held) pipeline.zadd(key, 'XX', expiresAt, place).pexpire(key, streamPlaceTtlMs);
        return pipeline.exec();
      })
      .catch((err: unknown) => this.onError(err));
  }

  close(): void {
    clearInterval(this.renewal);
  }

  private keyOf(user: string): string {
    return `${this.prefix}streams:${user}`;
  }
}
