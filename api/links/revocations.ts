import type Redis from 'ioredis';
import type { GuardedRedis } from '../../lib/guarded-redis';
import type { OpsLog } from '../../lib/logging';

type Listener = (linkId: string) => void;

/**
 * Tells every API process that an answer link was revoked, so that each cuts the streams and sockets open through it
 * (link-streams.ts). A notice is lost when a process's subscription is down at that moment: the periodic reading of the
 * links of open streams (link-streams.ts) makes up for it.
 */
export interface LinkRevocations {
  /** Never throws: the revocation is stored already, and a lost notice is made up for. */
  announce(linkId: string): Promise<void>;
  /** Returns the function that stops the calls. */
  onRevoked(listener: Listener): () => void;
  close(): Promise<void>;
}

/** This process only: what the API uses when its links are in its own memory, which no other process reads. */
export class LocalLinkRevocations implements LinkRevocations {
  private readonly listeners = new Set<Listener>();

  async announce(linkId: string): Promise<void> {
    for (const listener of [...this.listeners]) listener(linkId);
  }

  onRevoked(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}

/**
 * Redis pub/sub on `<prefix>link-revoked` (the message is the link's id), for API processes that share Redis and so
 * their links. `subscriber` is a connection of its own (a subscribed connection runs no other command).
 */
export class RedisLinkRevocations implements LinkRevocations {
  private readonly local = new LocalLinkRevocations();
  private readonly channel: string;
  private lastError = '';

  constructor(
    private readonly publisher: GuardedRedis,
    private readonly subscriber: Redis,
    prefix: string,
    private readonly log: OpsLog,
  ) {
    this.channel = `${prefix}link-revoked`;
    subscriber.on('message', (channel: string, linkId: string) => {
      if (channel === this.channel) void this.local.announce(linkId);
    });
    subscriber.on('error', (err: Error) => {
      if (err.message === this.lastError) return;
      this.lastError = err.message;
      log(
        `Redis unavailable for revocation notices (${err.message}): open streams of a revoked link end at their link's next check`,
      );
    });
    // On every connection, the first and each after a reconnect (commands are not queued while it is down).
    const subscribe = () => {
      this.lastError = '';
      subscriber.subscribe(this.channel).catch(() => undefined);
    };
    subscriber.on('ready', subscribe);
    if (subscriber.status === 'ready') subscribe();
  }

  async announce(linkId: string): Promise<void> {
    await this.publisher
      .run((redis) => redis.publish(this.channel, linkId))
      .catch((err: Error) => {
        this.log(
          `The revocation of link ${linkId} was not announced (${err.message}): its open streams end at their next check`,
        );
      });
  }

  onRevoked(listener: Listener): () => void {
    return this.local.onRevoked(listener);
  }

  async close(): Promise<void> {
    await this.local.close();
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }
}
