import type { FeedEvent } from '../../core/feed-log';
import type { DeltaEvent } from '../../lib/live';
import type { FeedWatcher } from './feed-watchers';
import type { TurnFeeds } from './turn-feeds';

/** A live event as streams carry it; `message.reset` says a retried model call starts its text again. */
export type LiveItem = DeltaEvent | { type: 'message.reset'; call: string; attempt: number };
export type StreamItem = FeedEvent | LiveItem;

export interface FollowTurnOptions {
  /** The process's feeds: every stream of a turn shares one (turn-feeds.ts). */
  feeds: TurnFeeds;
  turnId: string;
  /** Deliver durable events with an offset above this. */
  after: number;
  send: (item: StreamItem) => void;
  signal: AbortSignal;
}

const maxBufferedLive = 2_000;

/**
 * One stream of one turn: its durable events from the turn's shared feed, merged with live deltas, which wait until
 * the stream has caught up with the log. Ends after the terminal event (the feed synthesizes one when Temporal closed
 * the turn without it).
 */
export class TurnFollower implements FeedWatcher {
  private catchingUp = true;
  private ended = false;
  private readonly buffered: DeltaEvent[] = [];
  private readonly attempts = new Map<string, number>();
  private finish: ((outcome: 'ended' | 'aborted') => void) | undefined;
  private poker: ((mark?: number) => void) | undefined;
  private marker: (() => number) | undefined;

  constructor(private readonly options: FollowTurnOptions) {}

  /** Something is about to happen (this client answered a checkpoint): the feed makes sure it is seen soon. */
  poke(mark?: number): void {
    this.poker?.(mark);
  }

  /** The feed's push count, to pass to `poke` after acting on the turn. */
  mark(): number | undefined {
    return this.marker?.();
  }

  /** Resolves with `ended` after the terminal event, or `aborted` when the signal fires first. */
  async run(): Promise<'ended' | 'aborted'> {
    const { signal, feeds, turnId, after } = this.options;
    if (signal.aborted) return 'aborted';
    const outcome = new Promise<'ended' | 'aborted'>((resolve) => (this.finish = resolve));
    const handle = feeds.watch(turnId, after, this);
    this.poker = (mark) => handle.poke(mark);
    this.marker = () => handle.mark();
    const onAbort = () => this.finish?.('aborted');
    signal.addEventListener('abort', onAbort);
    try {
      return await outcome;
    } finally {
      this.ended = true;
      handle.stop();
      signal.removeEventListener('abort', onAbort);
    }
  }

  onEvent(event: FeedEvent): void {
    if (!this.ended) this.options.send(event);
  }

  onEnd(): void {
    this.finish?.('ended');
  }

  onCaughtUp(): void {
    this.catchingUp = false;
    for (const event of this.buffered.splice(0)) this.sendLive(event);
  }

  onDelta(event: DeltaEvent): void {
    if (this.ended) return;
    if (!this.catchingUp) this.sendLive(event);
    else if (this.buffered.length < maxBufferedLive) this.buffered.push(event);
  }

  private sendLive(event: DeltaEvent): void {
    if (event.call !== undefined && event.attempt !== undefined) {
      const seen = this.attempts.get(event.call);
      if (seen !== undefined && event.attempt > seen)
        this.options.send({ type: 'message.reset', call: event.call, attempt: event.attempt });
      if (seen === undefined || event.attempt > seen) this.attempts.set(event.call, event.attempt);
      if (seen !== undefined && event.attempt < seen) return;
    }
    this.options.send(event);
  }
}
