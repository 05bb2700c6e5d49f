import type { FeedEvent, FeedLog } from '../../core/feed-log';
import type { DeltaEvent } from '../../lib/live';

/** One client following a turn through its feed. */
export interface FeedWatcher {
  /** The durable events after the watcher's offset, in order, each once. */
  onEvent(event: FeedEvent): void;
  onDelta(event: DeltaEvent): void;
  /** The feed has read the turn's log: what it sends from now on is as it happens. */
  onCaughtUp(): void;
  /** Nothing more will come: the terminal event went out (or the watcher had it already). */
  onEnd(): void;
}

/** The watchers of one feed, each with the offset it has had the log to. */
export class FeedWatchers {
  private readonly positions = new Map<FeedWatcher, { sent: number }>();

  get size(): number {
    return this.positions.size;
  }

  has(watcher: FeedWatcher): boolean {
    return this.positions.has(watcher);
  }

  add(watcher: FeedWatcher, after: number): void {
    this.positions.set(watcher, { sent: after });
  }

  /** False when it was not watching. */
  remove(watcher: FeedWatcher): boolean {
    return this.positions.delete(watcher);
  }

  /** Sends every watcher what it has not had of `log`; once the log ended, they end and leave. */
  deliver(log: FeedLog): void {
    for (const [watcher, position] of [...this.positions]) {
      for (const event of log.after(position.sent)) {
        position.sent = event.offset;
        watcher.onEvent(event);
      }
      if (log.ended) {
        this.positions.delete(watcher);
        watcher.onEnd();
      }
    }
  }

  caughtUp(): void {
    for (const watcher of [...this.positions.keys()]) watcher.onCaughtUp();
  }

  delta(event: DeltaEvent): void {
    for (const watcher of [...this.positions.keys()]) watcher.onDelta(event);
  }
}
