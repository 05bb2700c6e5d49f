import type { FeedTimings } from '../../core/feed-schedule';
import type { ReadBackoff } from '../../core/read-backoff';

export interface TurnFeedSettings extends FeedTimings, ReadBackoff {
  /** Events per `turnEvents` query when the feed reads the log. */
  pageSize: number;
  /** How long the first read waits for the live channel to confirm the feed's subscription. */
  subscribeWaitMs: number;
  /**
   * A pushed terminal event is delivered only once Temporal shows the workflow closed (describe, retried with a growing
   * pause); still running after this long, the feed reads the log instead, which holds the event only if it is durable.
   */
  confirmEndingMs: number;
  /**
   * After the live channel's subscription was restored, how many feeds of the process read the log at once (the
   * others wait their turn): each read is a `turnEvents` query, a workflow task on the worker.
   */
  reconnectReads: number;
  /**
   * How many feeds of the process make their catch-up read (their first read of the log, and its retries) at once; the
   * others wait their turn, as after a reconnect. A feed alone reads at once.
   */
  catchUpReads: number;
}

export const defaultFeedSettings: TurnFeedSettings = {
  pageSize: 200,
  silentReadMs: 15_000,
  minPollMs: 500,
  maxPollMs: 2_000,
  describeEveryMs: 3_000,
  // After failed reads (no worker answering the query in time), the next try: retryMs, doubling with each failure in a
  // row up to maxRetryMs, jittered (core/read-backoff.ts); the turn is still described every describeEveryMs meanwhile.
  retryMs: 1_000,
  maxRetryMs: 10_000,
  pokeReadMs: 1_000,
  subscribeWaitMs: 1_000,
  confirmEndingMs: 5_000,
  // A few reads at once catch up quickly; hundreds at once would each be a workflow task (often a full replay) on the
  // worker, repeated on every reconnect of a flapping Redis.
  reconnectReads: 4,
  // The same for the streams of many turns opened together (an API restart, a dashboard): each catch-up read is a
  // workflow task on the worker, often a full replay.
  catchUpReads: 4,
};
