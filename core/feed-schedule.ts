/** When a feed of a turn reads its log and describes its workflow (api/streams/turn-feed.ts). */
export interface FeedTimings {
  /**
   * Once the worker's pushes reach the feed (it had a `log.event`, or the channel holds a state the worker published
   * for the turn): when nothing was pushed for this long, the feed reads the log anyway (a push channel gone quiet).
   */
  silentReadMs: number;
  /**
   * Until then (a worker of older code, which only hints, or no channel between worker and API), the feed polls the log, at `minPollMs` while it grows and backing off to `maxPollMs` while it does not.
   */
  minPollMs: number;
  maxPollMs: number;
  /** While nothing is pushed, how often the feed asks Temporal (DescribeWorkflowExecution) whether the turn closed. */
  describeEveryMs: number;
  /** After a watcher's poke (it just answered a checkpoint): read then unless an event was pushed before. */
  pokeReadMs: number;
}

/** What a feed with nothing else to do (no read wanted, no ending to confirm) does next. */
export type FeedStep = { kind: 'read' } | { kind: 'describe' } | { kind: 'sleep'; ms: number };

/**
 * When a feed reads the turn's log and when it describes the workflow, by the clock (milliseconds). Until the worker's
 * pushes are known to reach the feed, it polls the log, at `minPollMs` while it grows and backing off to `maxPollMs`
 * while it does not; once they do, it reads only after `silentReadMs` without a push (reads a gap or a hint asks for
 * are the feed's own). While nothing is heard on the channel, it describes the turn every `describeEveryMs`.
 */
export class FeedSchedule {
  /** Whether the worker's pushes reach the feed (a `log.event`, or a state the worker published for the turn). */
  private pushesReach = false;
  private nextRead = 0;
  private pollMs: number;
  private quietSince: number;
  private lastDescribe = 0;

  constructor(
    private readonly timings: FeedTimings,
    now: number,
  ) {
    this.pollMs = timings.minPollMs;
    this.quietSince = now;
  }

  get pushed(): boolean {
    return this.pushesReach;
  }

  /** Something came on the live channel for the turn. */
  heard(now: number): void {
    this.quietSince = now;
  }

  /** The worker's pushes reach the feed: from now on it reads only after silence. */
  pushesArrive(now: number): void {
    this.pushesReach = true;
    this.nextRead = now + this.timings.silentReadMs;
  }

  /** Something should happen soon: read by `pokeReadMs` once pushes reach the feed (they may bring it first), else now. */
  poke(now: number): void {
    this.pollMs = this.timings.minPollMs;
    this.nextRead = Math.min(this.nextRead, now + (this.pushesReach ? this.timings.pokeReadMs : 0));
  }

  /** After a read that found `found` events (`again`: another read is wanted): a slow fallback once pushes arrive, else the next poll. */
  afterRead(found: number, again: boolean, now: number): void {
    const { silentReadMs, minPollMs, maxPollMs } = this.timings;
    this.pollMs = found > 0 || again ? minPollMs : Math.min(this.pollMs * 1.5, maxPollMs);
    this.nextRead = now + (this.pushesReach ? silentReadMs : this.pollMs);
  }

  /** The next step; a `describe` counts as made now. */
  next(now: number): FeedStep {
    if (now >= this.nextRead) return { kind: 'read' };
    const describeAt = Math.max(this.quietSince, this.lastDescribe) + this.timings.describeEveryMs;
    if (now >= describeAt) {
      this.lastDescribe = now;
      return { kind: 'describe' };
    }
    return { kind: 'sleep', ms: Math.min(this.nextRead, describeAt) - now };
  }
}
