import Redis, { type RedisOptions } from 'ioredis';
import { closeRedis } from '../redis-close';
import { isLiveEvent, type LiveChannel, type LiveEvent, type LiveListener } from './channel';
import { InProcessChannel } from './in-process';

export interface RedisChannelOptions {
  /** Channel names are `<prefix><turnId>`; the prefix keeps deployments that share a Redis apart. */
  prefix?: string;
  log?: (line: string) => void;
}

/**
 * Live events across processes and machines through Redis pub/sub. Publishing never queues while Redis is away
 * (the event is dropped); the subscriber connection opens on the first subscription and resubscribes after a
 * reconnect (ioredis does both on its own).
 */
export class RedisChannel implements LiveChannel {
  private readonly local = new InProcessChannel();
  private readonly publisher: Redis;
  private subscriber: Redis | undefined;
  private readonly prefix: string;
  private lastError = '';

  constructor(
    private readonly url: string,
    private readonly options: RedisChannelOptions = {},
  ) {
    this.prefix = options.prefix ?? 'skillflow:live:';
    this.publisher = this.connect('publish', { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  }

  publish(turnId: string, event: LiveEvent): void {
    this.publisher.publish(this.prefix + turnId, JSON.stringify(event)).catch(() => undefined);
  }

  subscribe(turnId: string, listener: LiveListener): () => void {
    const first = !this.local.hasListeners(turnId);
    const unsubscribe = this.local.subscribe(turnId, listener);
    if (first) this.ensureSubscriber().subscribe(this.prefix + turnId).catch((err: Error) => this.report(err));
    return () => {
      unsubscribe();
      if (!this.local.hasListeners(turnId)) this.subscriber?.unsubscribe(this.prefix + turnId).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    await this.local.close();
    await Promise.all([this.publisher, this.subscriber].map((client) => client && closeRedis(client)));
  }

  private ensureSubscriber(): Redis {
    if (this.subscriber) return this.subscriber;
    const subscriber = this.connect('subscribe', {});
    subscriber.on('message', (channel: string, message: string) => {
      if (!channel.startsWith(this.prefix)) return;
      try {
        const event: unknown = JSON.parse(message);
        if (isLiveEvent(event)) this.local.publish(channel.slice(this.prefix.length), event);
      } catch {
        // Not ours: ignore.
      }
    });
    this.subscriber = subscriber;
    return subscriber;
  }

  private connect(role: string, extra: RedisOptions): Redis {
    const client = new Redis(this.url, { lazyConnect: false, connectionName: `skillflow-live-${role}`, ...extra });
    client.on('error', (err: Error) => this.report(err));
    client.on('ready', () => {
      if (this.lastError) this.options.log?.(`live events: Redis ${role} connection ready again`);
      this.lastError = '';
    });
    return client;
  }

  /** Logs a Redis problem once until it changes, not on every retry. */
  private report(err: Error): void {
    if (err.message === this.lastError) return;
    this.lastError = err.message;
    this.options.log?.(`live events: Redis unavailable (${err.message}); deltas are dropped until it is back`);
  }
}
