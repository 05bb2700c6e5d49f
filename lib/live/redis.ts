import Redis, { type RedisOptions } from 'ioredis';
import { GuardedRedis, redisHostOf } from '../guarded-redis';
import type { OpsLog } from '../logging';
import { closeRedis } from '../redis-close';
import type { TurnSnapshot } from '../../core/turn-snapshot';
import { isLiveEvent, isTurnSnapshot, type LiveChannel, type LiveEvent, type LiveListener } from './channel';
import { InProcessChannel } from './in-process';

/** How long Redis keeps a turn's state after its last write: a GET after that asks the workflow. */
export const stateTtlSeconds = 24 * 3600;

/**
 * Sets KEYS[1] to ARGV[2] unless it holds a snapshot of the same run as ARGV[4] at a later offset than ARGV[1]; expires
 * in ARGV[3] s. core/turn-snapshot.ts `supersedes` in Lua: an empty ARGV[4], or a kept snapshot that names no run
 * (written before snapshots named it), leaves offsets alone to decide. It reads what publishState writes: the offset
 * first, then the run id (Temporal's run ids need no escaping in JSON).
 */
const setNewerState = `
local kept = redis.call('GET', KEYS[1])
if kept then
  local offset = tonumber(string.match(kept, '^{"offset":(%d+)'))
  local run = string.match(kept, '^{"offset":%d+,"runId":"([^"]*)"')
  local otherRun = run and ARGV[4] ~= '' and run ~= ARGV[4]
  if offset and offset > tonumber(ARGV[1]) and not otherRun then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
return 1`;

/**
 * How long a command of the publishing connection (a publish, a state written or read) may wait for Redis. A turn's
 * read waits for its kept state before it asks the workflow instead, so this bounds what a Redis that hangs adds to a
 * read; a Redis that is well answers in a millisecond or two, so a second is only missed by one that is not.
 */
export const liveDeadlineMs = 1_000;

export interface RedisChannelOptions {
  /** Channel names are `<prefix><turnId>`; the prefix keeps deployments that share a Redis apart. */
  prefix?: string;
  /** The connections' names in Redis' CLIENT LIST: `<name>-publish` and `<name>-subscribe`. Default `skillflow-live`. */
  name?: string;
  log?: OpsLog;
  /** Default `liveDeadlineMs`. */
  deadlineMs?: number;
}

/**
 * Live events across processes and machines through Redis pub/sub. Publishing never queues while Redis is away
 * (the event is dropped); the subscriber connection opens on the first subscription (ioredis reconnects it), and after
 * a reconnect subscribes every followed turn again and, once Redis confirmed, tells `onResubscribed` listeners which
 * (events published while it was away are lost). A turn's latest state is a key (`<prefix>state:<turnId>`), written
 * only when it is not older than the one there (or is of another run), and expiring a day after its last write. The
 * publishing connection's commands have a deadline (HangGuard): a Redis that hangs is logged once, and until it answers
 * again publishes are dropped and `latestState` finds nothing (readers ask the workflow) at once.
 */
export class RedisChannel implements LiveChannel {
  private readonly local = new InProcessChannel();
  /** Each followed turn's SUBSCRIBE, settled once Redis confirmed it. */
  private readonly subscriptions = new Map<string, Promise<void>>();
  private readonly publisher: GuardedRedis;
  private subscriber: Redis | undefined;
  private readonly prefix: string;
  private readonly resubscribedListeners = new Set<(turnIds: string[]) => void>();
  /** The subscriber connection was ready once: a later `ready` is a reconnect. */
  private subscriberWasReady = false;
  /**
   * Followed turns whose SUBSCRIBE failed: ioredis fails the commands it queued while the connection is down after its
   * retries (about 10 s). The next `ready` subscribes them again, also the first one.
   */
  private readonly failedSubscriptions = new Set<string>();
  private lastError = '';

  constructor(
    private readonly url: string,
    private readonly options: RedisChannelOptions = {},
  ) {
    this.prefix = options.prefix ?? 'skillflow:live:';
    this.publisher = new GuardedRedis(this.connect('publish', { enableOfflineQueue: false, maxRetriesPerRequest: 0 }), {
      what: `live events: Redis at ${redisHostOf(url)}`,
      deadlineMs: options.deadlineMs ?? liveDeadlineMs,
      meanwhile: 'deltas are dropped and turn reads ask the workflow',
      log: options.log,
    });
  }

  publish(turnId: string, event: LiveEvent): void {
    this.publisher.run((redis) => redis.publish(this.prefix + turnId, JSON.stringify(event))).catch(() => undefined);
  }

  publishState(turnId: string, snapshot: TurnSnapshot): void {
    const json = JSON.stringify({ offset: snapshot.offset, runId: snapshot.runId, state: snapshot.state });
    this.publisher
      .run((redis) =>
        redis.eval(
          setNewerState,
          1,
          this.stateKey(turnId),
          snapshot.offset,
          json,
          stateTtlSeconds,
          snapshot.runId ?? '',
        ),
      )
      .catch(() => undefined);
  }

  async latestState(turnId: string): Promise<TurnSnapshot | undefined> {
    try {
      const value: unknown = JSON.parse(
        (await this.publisher.run((redis) => redis.get(this.stateKey(turnId)))) ?? 'null',
      );
      return isTurnSnapshot(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }

  private stateKey(turnId: string): string {
    return `${this.prefix}state:${turnId}`;
  }

  subscribe(turnId: string, listener: LiveListener): () => void {
    const first = !this.local.hasListeners(turnId);
    const unsubscribe = this.local.subscribe(turnId, listener);
    if (first) {
      const confirmed = this.ensureSubscriber()
        .subscribe(this.prefix + turnId)
        .then(
          () => undefined,
          (err: Error) => {
            if (this.subscriptions.get(turnId) === confirmed) this.failedSubscriptions.add(turnId);
            this.report(err);
          },
        );
      this.subscriptions.set(turnId, confirmed);
    }
    return () => {
      unsubscribe();
      if (this.local.hasListeners(turnId)) return;
      this.subscriptions.delete(turnId);
      this.failedSubscriptions.delete(turnId);
      this.subscriber?.unsubscribe(this.prefix + turnId).catch(() => undefined);
    };
  }

  async subscribed(turnId: string): Promise<void> {
    await this.subscriptions.get(turnId);
  }

  onResubscribed(listener: (turnIds: string[]) => void): () => void {
    this.resubscribedListeners.add(listener);
    return () => this.resubscribedListeners.delete(listener);
  }

  async close(): Promise<void> {
    await this.local.close();
    this.publisher.guard.close();
    await Promise.all([this.publisher.client, this.subscriber].map((client) => client && closeRedis(client)));
  }

  private ensureSubscriber(): Redis {
    if (this.subscriber) return this.subscriber;
    // Resubscribing is done here rather than by ioredis, to know when Redis confirmed it.
    const subscriber = this.connect('subscribe', { autoResubscribe: false });
    subscriber.on('ready', () => this.resubscribe(subscriber));
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

  /**
   * Redis forgets a connection's subscriptions with it: after a reconnect, subscribes every followed turn again, and
   * once Redis confirmed, tells the listeners. The first connection sends the subscriptions queued for it itself, but
   * not those ioredis already failed (Redis down from the start for longer than its retries): those are sent here too.
   */
  private resubscribe(subscriber: Redis): void {
    const reconnect = this.subscriberWasReady;
    this.subscriberWasReady = true;
    const turnIds = [...this.subscriptions.keys()].filter(
      (turnId) => reconnect || this.failedSubscriptions.has(turnId),
    );
    this.failedSubscriptions.clear();
    if (turnIds.length === 0) return;
    subscriber.subscribe(...turnIds.map((turnId) => this.prefix + turnId)).then(
      () => {
        const followed = turnIds.filter((turnId) => this.subscriptions.has(turnId));
        if (followed.length === 0) return;
        for (const listener of [...this.resubscribedListeners]) {
          try {
            listener(followed);
          } catch {
            // One failing listener must not keep the news from the others.
          }
        }
      },
      (err: Error) => this.report(err),
    );
  }

  private connect(role: string, extra: RedisOptions): Redis {
    const client = new Redis(this.url, {
      lazyConnect: false,
      connectionName: `${this.options.name ?? 'skillflow-live'}-${role}`,
      ...extra,
    });
    client.on('error', (err: Error) => this.report(err));
    client.on('ready', () => {
      if (this.lastError) this.options.log?.(`live events: Redis ${role} connection ready again`, 'info');
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
