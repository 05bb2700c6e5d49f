import Redis from 'ioredis';
import { GuardedRedis, redisHostOf } from '../guarded-redis';
import type { OpsLog } from '../logging';
import { closeRedis } from '../redis-close';
import { SharedStoreError, storeMeanwhile, type SharedStore } from './shared-store';

/**
 * The store on Redis: one hash per scope (`<prefix><scope>`), whose expiry every write renews, so Redis removes a
 * scope on its own once it has been idle for the retention. No command waits longer than `commandTimeoutMs` (a Redis
 * that hangs is then logged once and fails the next commands at once until it answers, see HangGuard), and while Redis
 * is unreachable they fail at its first refused reconnection (the caller falls back) instead of queueing. A command
 * that fails names the connection's cause (connection refused, ...). The connection going and coming back is logged.
 */
export class RedisStore implements SharedStore {
  private readonly redis: GuardedRedis;
  private readonly retentionSeconds: number;
  /** Why the connection is down, while it is: what a command that failed for it says. */
  private connectionError = '';

  constructor(
    private readonly url: string,
    private readonly prefix: string,
    retentionMs: number,
    commandTimeoutMs = 2_000,
    log?: OpsLog,
  ) {
    this.retentionSeconds = Math.max(1, Math.round(retentionMs / 1000));
    const client = new Redis(url, { connectionName: 'skillflow-store', maxRetriesPerRequest: 0 });
    const what = `store: Redis at ${redisHostOf(url)}`;
    client.on('error', (err: Error) => {
      if (err.message === this.connectionError) return;
      this.connectionError = err.message;
      log?.(`${what} unavailable (${err.message}): ${storeMeanwhile} until it is back`);
    });
    client.on('ready', () => {
      if (this.connectionError) log?.(`${what} connection ready again`, 'info');
      this.connectionError = '';
    });
    this.redis = new GuardedRedis(client, { what, deadlineMs: commandTimeoutMs, meanwhile: storeMeanwhile, log });
  }

  get description(): string {
    return `Redis at ${this.url.replace(/\/\/[^@/]*@/, '//***@')} (keys ${this.prefix}*)`;
  }

  async put(scope: string, key: string, value: string, aliases: readonly string[] = []): Promise<void> {
    const hash = this.prefix + scope;
    const fields = Object.fromEntries([key, ...aliases].map((name) => [name, value]));
    const results = await this.guard((client) =>
      client.multi().hset(hash, fields).expire(hash, this.retentionSeconds).exec(),
    );
    const failed = results?.find(([err]) => err);
    if (!results || failed)
      throw new SharedStoreError(`Redis store: write failed (${failed?.[0]?.message ?? 'transaction aborted'})`);
  }

  async get(scope: string, key: string): Promise<string | undefined> {
    const value = await this.guard((client) => client.hget(this.prefix + scope, key));
    return value ?? undefined;
  }

  async sweep(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    this.redis.guard.close();
    await closeRedis(this.redis.client);
  }

  private async guard<T>(command: (client: Redis) => Promise<T>): Promise<T> {
    try {
      return await this.redis.run(command);
    } catch (err) {
      // ioredis fails a command the connection dropped with its own retry count: the connection's error says why.
      const cause =
        (err as Error).name === 'MaxRetriesPerRequestError'
          ? `connection lost: ${this.connectionError || 'closed'}`
          : (err as Error).message;
      throw new SharedStoreError(`Redis store unavailable: ${cause}`);
    }
  }
}
