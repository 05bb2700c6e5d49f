import type { Client } from '@temporalio/client';
import { RereadQueue } from '../../core/reread-queue';
import type { LiveChannel } from '../../lib/live';
import { defaultFeedSettings, type TurnFeedSettings } from './feed-settings';
import type { FeedWatcher } from './feed-watchers';
import { TurnFeed } from './turn-feed';

export interface FeedHandle {
  stop(): void;
  /** How many events were pushed so far: pass it to `poke` after acting on the turn. */
  mark(): number;
  /**
   * Something should happen soon (a checkpoint answered): make sure it is seen even if its push is lost. Nothing to do
   * when an event was pushed since `mark` (the action's own events arrived).
   */
  poke(mark?: number): void;
}

/**
 * One feed per followed turn in this API process, however many clients follow it: one live-channel subscription,
 * one reader of the log (turn-feed.ts). Counts of reads are what `npm run bench` reports as worker work per turn. When
 * the channel's subscriptions hold again after its connection dropped, each open feed of those turns reads the log
 * from what it has: what was pushed meanwhile never came. Those reads go `reconnectReads` at a time
 * (core/reread-queue.ts), so a reconnect is not one query per open feed on the worker at once. So do the catch-up reads
 * of new feeds (`catchUpReads` at a time, in a queue of their own): streams of many turns opened together are not one
 * query each on the worker at once either. A feed that stops while it waits leaves the queue.
 */
export class TurnFeeds {
  private readonly feeds = new Map<string, TurnFeed>();
  private readonly settings: TurnFeedSettings;
  private readonly stopListening: () => void;
  private readonly rereads: RereadQueue;
  private readonly catchUps: RereadQueue;
  /** Feeds waiting for a place for their catch-up read, told when it comes (or when they stop). */
  private readonly catchUpWaiting = new Map<string, (release: () => void) => void>();

  constructor(
    private readonly client: Client,
    private readonly live: LiveChannel,
    settings: Partial<TurnFeedSettings> = {},
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.settings = { ...defaultFeedSettings, ...settings };
    this.rereads = new RereadQueue(this.settings.reconnectReads);
    this.catchUps = new RereadQueue(this.settings.catchUpReads);
    this.stopListening = live.onResubscribed?.((turnIds) => this.resubscribed(turnIds)) ?? (() => undefined);
  }

  /** Stops listening to the channel (the feeds end with their watchers). */
  close(): void {
    this.stopListening();
  }

  private resubscribed(turnIds: string[]): void {
    for (const turnId of turnIds) if (this.feeds.has(turnId)) this.rereads.add(turnId);
    this.startRereads();
  }

  private startRereads(): void {
    for (const turnId of this.rereads.start()) {
      const read = this.feeds.get(turnId)?.missedPushes() ?? Promise.resolve();
      void read.then(() => {
        this.rereads.done(turnId);
        this.startRereads();
      });
    }
  }

  /** A place for the catch-up read of `turnId`'s feed: at once while fewer than `catchUpReads` are reading. */
  private catchUpSlot(turnId: string): Promise<() => void> {
    return new Promise((resolve) => {
      this.catchUpWaiting.set(turnId, resolve);
      this.catchUps.add(turnId);
      this.startCatchUps();
    });
  }

  private startCatchUps(): void {
    for (const turnId of this.catchUps.start()) {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.catchUps.done(turnId);
        this.startCatchUps();
      };
      const go = this.catchUpWaiting.get(turnId);
      this.catchUpWaiting.delete(turnId);
      if (go) go(release);
      else release();
    }
  }

  private closed(turnId: string): void {
    this.feeds.delete(turnId);
    this.rereads.drop(turnId);
    // A feed waiting for a place leaves the queue, and its wait ends (it reads nothing: it stopped).
    this.catchUps.drop(turnId);
    const waiting = this.catchUpWaiting.get(turnId);
    this.catchUpWaiting.delete(turnId);
    waiting?.(() => undefined);
  }

  /** Follows the turn for `watcher` from offset `after` until the handle is stopped or the watcher's onEnd. */
  watch(turnId: string, after: number, watcher: FeedWatcher): FeedHandle {
    let feed = this.feeds.get(turnId);
    if (!feed) {
      feed = new TurnFeed(
        this.client,
        this.live,
        turnId,
        this.settings,
        this.log,
        () => this.closed(turnId),
        () => this.catchUpSlot(turnId),
      );
      this.feeds.set(turnId, feed);
    }
    const joined = feed;
    joined.add(watcher, after);
    return { stop: () => joined.remove(watcher), mark: () => joined.pushes, poke: (mark) => joined.poke(mark) };
  }
}
