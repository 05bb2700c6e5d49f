import Redis from 'ioredis';
import { closeRedis } from '../redis-close';
import { SharedStoreError, type SharedStore } from './shared-store';

/**
 * The store on Redis: one hash per scope (`<prefix><scope>`), whose expiry every write renews, so Redis removes a
 * scope on its own once it has been idle for the retention. No command waits longer than `commandTimeoutMs`, and
 * while Redis is unreachable they fail at its first refused reconnection (the caller falls back) instead of queueing.
 */
export class RedisStore implements SharedStore {
  private readonly client: Redis;
  private readonly retentionSeconds: number;

  constructor(
    private readonly url: string,
    private readonly prefix: string,
    retentionMs: number,
    commandTimeoutMs = 2_000,
  ) {
    this.retentionSeconds = Math.max(1, Math.round(retentionMs / 1000));
    this.client = new Redis(url, {
      connectionName: 'skillflow-store',
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
    });
    // Errors surface on the commands that fail; the connection event itself needs no handling beyond not crashing.
    this.client.on('error', () => undefined);
  }

  get description(): string {
    return `Redis at ${this.url.replace(/\/\/[^@/]*@/, '//***@')} (keys ${this.prefix}*)`;
  }

  async put(scope: string, key: string, value: string, aliases: readonly string[] = []): Promise<void> {
    const hash = this.prefix + scope;
    const fields = Object.fromEntries([key, ...aliases].map((name) => [name, value]));
    const results = await this.guard(() => this.client.multi().hset(hash, fields).expire(hash, this.retentionSeconds).exec());
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw new SharedStoreError(`Redis store: write failed (${failed?.[0]?.message ?? 'transaction aborted'})`);
  }

  async get(scope: string, key: string): Promise<string | undefined> {
    const value = await this.guard(() => this.client.hget(this.prefix + scope, key));
    return value ?? undefined;
  }

  async sweep(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    await closeRedis(this.client);
  }

  private async guard<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      throw new SharedStoreError(`Redis store unavailable: ${(err as Error).message}`);
    }
  }
}
