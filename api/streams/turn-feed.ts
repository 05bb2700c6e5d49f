import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { isTerminalEvent, type TurnEvent } from '../../core/events';
import type { DeltaEvent, LiveChannel, LiveEvent } from '../../lib/live';
import { turnEventsQuery } from '../../workflows/definitions';
import { searchAttributes } from '../../workflows/search-attributes';
import { endingOfClosedWorkflow, terminalEventOf } from '../turn-closure';
import { viewOf } from '../turn-view';
import { HistoryWatch } from '../../core/history-watch';

/** A terminal event the API made up for a turn Temporal closed without one (terminated, timed out, deleted). */
export type SynthesizedEvent = TurnEvent & { synthesized: true };
export type FeedEvent = TurnEvent | SynthesizedEvent;

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

export interface TurnFeedSettings {
  /** Events per `turnEvents` query when the feed reads the log. */
  pageSize: number;
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
  /** After a failed read (no worker answering), the next try. */
  retryMs: number;
  /** How long the first read waits for the live channel to confirm the feed's subscription. */
  subscribeWaitMs: number;
  /** After a watcher's poke (it just answered a checkpoint): read then unless an event was pushed before. */
  pokeReadMs: number;
  /**
   * A pushed terminal event is delivered only once Temporal shows the workflow closed (describe, retried with a growing
   * pause); still running after this long, the feed reads the log instead, which holds the event only if it is durable.
   */
  confirmEndingMs: number;
}

export const defaultFeedSettings: TurnFeedSettings = {
  pageSize: 200,
  silentReadMs: 15_000,
  minPollMs: 500,
  maxPollMs: 2_000,
  describeEveryMs: 3_000,
  retryMs: 1_000,
  pokeReadMs: 1_000,
  subscribeWaitMs: 1_000,
  confirmEndingMs: 5_000,
};

const firstConfirmPauseMs = 50;
const maxConfirmPauseMs = 1_000;

const queryDeadlineMs = 5_000;

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
 * one reader of the log. Counts of reads are what `npm run bench` reports as worker work per turn.
 */
export class TurnFeeds {
  private readonly feeds = new Map<string, TurnFeed>();
  private readonly settings: TurnFeedSettings;

  constructor(
    private readonly client: Client,
    private readonly live: LiveChannel,
    settings: Partial<TurnFeedSettings> = {},
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.settings = { ...defaultFeedSettings, ...settings };
  }

  /** Follows the turn for `watcher` from offset `after` until the handle is stopped or the watcher's onEnd. */
  watch(turnId: string, after: number, watcher: FeedWatcher): FeedHandle {
    let feed = this.feeds.get(turnId);
    if (!feed) {
      feed = new TurnFeed(this.client, this.live, turnId, this.settings, this.log, () => this.feeds.delete(turnId));
      this.feeds.set(turnId, feed);
    }
    const joined = feed;
    joined.add(watcher, after);
    return { stop: () => joined.remove(watcher), mark: () => joined.pushes, poke: (mark) => joined.poke(mark) };
  }
}

/**
 * A turn's events for every watcher in this process. The worker pushes each event on the live channel as the workflow
 * writes it, before Temporal has recorded the task; the feed keeps the log from offset 1, taking a pushed event when it
 * is the next offset. Pushes may repeat (a workflow task run again: dropped when the same, and when not, the log is read
 * again from there: the earlier push was from a task Temporal did not record), go missing (the channel dropped one: the
 * next offset then leaves a gap, which makes the feed read the log from what it has, in pages), or never become durable
 * (a task that failed). A pushed terminal event therefore ends nothing until Temporal shows the workflow closed, or a
 * read returns it. Older workers push only a `log.appended` hint, which also makes it read. A fallback read happens only
 * when nothing was pushed for `silentReadMs`; closure is noticed with DescribeWorkflowExecution, which the server
 * answers without the worker.
 */
class TurnFeed {
  private readonly log: FeedEvent[] = [];
  private readonly ahead = new Map<number, TurnEvent>();
  private readonly watchers = new Map<FeedWatcher, { sent: number }>();
  private readonly unsubscribe: () => void;
  /** A pushed terminal event at the next offset, not delivered until confirmed (`confirmEnding`). */
  private unconfirmed: TurnEvent | undefined;
  private caughtUp = false;
  private ended = false;
  private stopped = false;
  private readWanted = true;
  private nextSilentRead = 0;
  /**
   * Whether the worker's pushes reach this feed (it had a `log.event`, or the channel holds a state the worker published
   * for the turn): then the log is read only on a gap, a hint or silence.
   */
  private pushed = false;
  /** Events pushed so far (`FeedHandle.mark`). */
  pushes = 0;
  /** The highest offset a `log.appended` hint named. */
  private hinted = 0;
  /** The feed's copy diverged from a push while a read was in flight: read again from where it now ends. */
  private rereadWanted = false;
  private readonly history = new HistoryWatch();
  /** The history length of the describe that asked for the read wanted now, if one did. */
  private describedForRead: number | undefined;
  private pollMs: number;
  private quietSince = Date.now();
  private lastDescribe = 0;
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: Client,
    private readonly live: LiveChannel,
    private readonly turnId: string,
    private readonly settings: TurnFeedSettings,
    private readonly warn: (line: string) => void,
    private readonly onStop: () => void,
  ) {
    this.pollMs = settings.minPollMs;
    this.unsubscribe = live.subscribe(turnId, (event) => this.onLive(event));
    // A state the worker published for this turn shows its pushes reach this process, before any event is pushed.
    live.latestState(turnId).then((state) => state && this.pushesArrive(), () => undefined);
    void this.run();
  }

  add(watcher: FeedWatcher, after: number): void {
    this.watchers.set(watcher, { sent: after });
    if (!this.caughtUp) return;
    this.deliver();
    if (this.watchers.has(watcher)) watcher.onCaughtUp();
  }

  remove(watcher: FeedWatcher): void {
    if (!this.watchers.delete(watcher) || this.watchers.size > 0) return;
    this.stop();
  }

  poke(mark?: number): void {
    if (mark !== undefined && this.pushes > mark) return;
    this.pollMs = this.settings.minPollMs;
    this.nextSilentRead = Math.min(this.nextSilentRead, Date.now() + (this.pushed ? this.settings.pokeReadMs : 0));
    this.rouse();
  }

  private get known(): number {
    return this.log.length;
  }

  private onLive(event: LiveEvent): void {
    if (this.ended) return;
    this.quietSince = Date.now();
    if (event.type === 'log.event') {
      this.pushes += 1;
      this.history.pushed();
      this.pushesArrive();
      this.accept(event.event, false);
      this.deliver();
    } else if (event.type === 'log.appended') {
      this.hinted = Math.max(this.hinted, event.offset);
      if (event.offset > this.known) this.wantRead();
    } else {
      for (const watcher of [...this.watchers.keys()]) watcher.onDelta(event);
    }
  }

  private pushesArrive(): void {
    this.pushed = true;
    this.nextSilentRead = Date.now() + this.settings.silentReadMs;
  }

  /**
   * Takes the event when it is the next offset (then any held ones that follow), holds it when it is further. A pushed
   * terminal event waits for confirmation; an event that differs from the one kept at its offset makes the log be read
   * again from there.
   */
  private accept(event: TurnEvent, durable: boolean): void {
    if (this.ended) return;
    this.settleUnconfirmed(event, durable);
    if (event.offset <= this.known) {
      if (!sameEvent(event, this.log[event.offset - 1]!)) this.diverged(event.offset);
      return;
    }
    if (event.offset > this.known + 1) {
      this.ahead.set(event.offset, event);
      this.wantRead();
      return;
    }
    this.take(event, durable);
    for (let next = this.ahead.get(this.known + 1); next && !this.ended && !this.unconfirmed; next = this.ahead.get(this.known + 1)) this.take(next, false);
    for (const offset of this.ahead.keys()) if (offset <= this.known) this.ahead.delete(offset);
  }

  /** An event at or beyond a pushed terminal event that waits: the same one read from the log confirms it; any other
   * shows it was not recorded. */
  private settleUnconfirmed(event: TurnEvent, durable: boolean): void {
    const pending = this.unconfirmed;
    if (!pending || event.offset < pending.offset) return;
    if (sameEvent(event, pending)) {
      if (durable) this.unconfirmed = undefined;
      return;
    }
    this.warn(`turn ${this.turnId}: the terminal event pushed at offset ${pending.offset} was not recorded (a workflow task that failed after pushing)`);
    this.unconfirmed = undefined;
  }

  private take(event: TurnEvent, durable: boolean): void {
    if (durable || !isTerminalEvent(event)) return this.append(event);
    if (this.unconfirmed && sameEvent(event, this.unconfirmed)) return;
    this.unconfirmed = event;
    this.rouse();
  }

  /**
   * A push at `offset` differs from the event kept there: one of them came from a workflow task Temporal did not record.
   * The feed forgets its copy from there and reads the log again; watchers that already had the differing event keep it
   * (their streams resume after it).
   */
  private diverged(offset: number): void {
    this.warn(`turn ${this.turnId}: a pushed event at offset ${offset} differs from the one delivered (a workflow task that failed after pushing); reading the log again from there`);
    this.log.length = offset - 1;
    this.rereadWanted = true;
    this.ahead.clear();
    this.unconfirmed = undefined;
    this.wantRead();
  }

  private append(event: FeedEvent): void {
    this.log.push(event);
    if (isTerminalEvent(event)) this.ended = true;
  }

  /** Sends every watcher what it has not had yet; once the turn ended, they end. */
  private deliver(): void {
    for (const [watcher, position] of [...this.watchers]) {
      for (const event of this.log.slice(position.sent)) {
        position.sent = event.offset;
        watcher.onEvent(event);
      }
      if (this.ended) {
        this.watchers.delete(watcher);
        watcher.onEnd();
      }
    }
    if (this.ended) this.stop();
  }

  private wantRead(): void {
    this.readWanted = true;
    this.rouse();
  }

  private rouse(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe();
    this.onStop();
    this.rouse();
  }

  private async run(): Promise<void> {
    // An event pushed before the subscription holds would be missed by the catch-up read too, and nothing might follow
    // it for a while (a checkpoint): read once the channel confirms, or after a bounded wait (Redis down: polling).
    const subscription = this.live.subscribed(this.turnId).then(
      () => true,
      () => false,
    );
    const inTime = await Promise.race([subscription, this.sleep(this.settings.subscribeWaitMs).then(() => false)]);
    this.rouse();
    // Confirmed after the catch-up read began: what was published in between reached neither, so read again then.
    if (!inTime) void subscription.then((confirmed) => confirmed && !this.stopped && this.wantRead());
    while (!this.stopped) {
      if (this.readWanted) {
        this.readWanted = false;
        this.rereadWanted = false;
        const described = await this.describedBeforeRead();
        this.history.readStarts();
        const read = await this.readLog();
        this.history.readDone(read === null ? undefined : described);
        if (read === null) {
          if (this.stopped || (await this.endIfClosed(true))) return;
          this.readWanted = true;
          await this.sleep(this.settings.retryMs);
          continue;
        }
        // Pushes held or hinted while the read was in flight need another read only if the read did not cover them.
        this.readWanted = this.rereadWanted || this.ahead.size > 0 || this.hinted > this.known;
        this.markCaughtUp();
        this.scheduleNextRead(read);
        continue;
      }
      if (this.unconfirmed) {
        if (await this.confirmEnding(this.unconfirmed)) return;
        continue;
      }
      const now = Date.now();
      if (now >= this.nextSilentRead) {
        this.readWanted = true;
        continue;
      }
      const describeAt = Math.max(this.quietSince, this.lastDescribe) + this.settings.describeEveryMs;
      if (now >= describeAt) {
        this.lastDescribe = now;
        if (await this.endIfClosed(false)) return;
        continue;
      }
      await this.sleep(Math.min(this.nextSilentRead, describeAt) - now);
    }
  }

  /**
   * Delivers the pushed terminal event `pending` once describe shows the workflow closed (the task that wrote it was
   * recorded). While it runs, describes again after a growing pause; after `confirmEndingMs` (or on another push or a
   * read wanted meanwhile) leaves it to a read. True when the feed is over.
   */
  private async confirmEnding(pending: TurnEvent): Promise<boolean> {
    const deadline = Date.now() + this.settings.confirmEndingMs;
    for (let pause = firstConfirmPauseMs; ; pause = Math.min(pause * 2, maxConfirmPauseMs)) {
      const status = await this.client.workflow
        .getHandle(this.turnId)
        .describe()
        .then((description) => description.status.name, () => null);
      if (this.stopped || this.unconfirmed !== pending) return this.stopped;
      if (status !== null && status !== 'RUNNING') {
        this.unconfirmed = undefined;
        this.append(pending);
        this.deliver();
        return true;
      }
      if (Date.now() + pause >= deadline) break;
      await this.sleep(pause);
      if (this.stopped || this.unconfirmed !== pending || this.readWanted) return this.stopped;
    }
    this.readWanted = true;
    return false;
  }

  /**
   * The history length a read will cover: the describe that asked for it, or for the catch-up read of a feed that may
   * take pushes, a describe now (the server answers it).
   */
  private async describedBeforeRead(): Promise<number | undefined> {
    const described = this.describedForRead;
    this.describedForRead = undefined;
    if (described !== undefined || this.caughtUp) return described;
    return this.client.workflow
      .getHandle(this.turnId)
      .describe()
      .then((description) => description.historyLength, () => undefined);
  }

  /** A running turn described after silence: reads the log when its history or status shows pushes went missing. */
  private checkHistory(description: WorkflowExecutionDescription): void {
    if (!this.pushed || this.readWanted) return;
    const status = (description.typedSearchAttributes.get(searchAttributes.status) as string | undefined) ?? 'running';
    if (!this.history.shouldRead(description.historyLength, status, this.loggedStatus())) return;
    this.describedForRead = description.historyLength;
    this.readWanted = true;
  }

  /** The status the feed's log last shows (a turn starts running without a `status` event). */
  private loggedStatus(): string {
    for (let index = this.log.length - 1; index >= 0; index -= 1) {
      const event = this.log[index]!;
      if (event.type === 'status') return (event as { status: string }).status;
    }
    return 'running';
  }

  private markCaughtUp(): void {
    if (this.caughtUp || this.stopped) return;
    this.caughtUp = true;
    for (const watcher of [...this.watchers.keys()]) watcher.onCaughtUp();
  }

  /** After a read that found `found` events: a slow fallback once pushes arrive, else the next poll. */
  private scheduleNextRead(found: number): void {
    const { silentReadMs, minPollMs, maxPollMs } = this.settings;
    this.pollMs = found > 0 || this.readWanted ? minPollMs : Math.min(this.pollMs * 1.5, maxPollMs);
    this.nextSilentRead = Date.now() + (this.pushed ? silentReadMs : this.pollMs);
  }

  /**
   * Reads the log after what the feed has, a page at a time, delivering as it goes: how many new events it found, or
   * null when a read failed.
   */
  private async readLog(): Promise<number | null> {
    const { pageSize } = this.settings;
    const before = this.known;
    // A query waits for the workflow task in flight: a pushed ending it does not return was never recorded.
    const pending = this.unconfirmed;
    while (!this.stopped) {
      const page = await this.query(this.known, pageSize);
      if (!page) return null;
      for (const event of page) this.accept(event, true);
      this.deliver();
      // A short page is the end; a longer one came from older workflow code that ignores the limit (all of it).
      if (page.length !== pageSize) break;
    }
    if (pending && this.unconfirmed === pending && !this.stopped) {
      this.warn(`turn ${this.turnId}: the terminal event pushed at offset ${pending.offset} is not in the log (a workflow task that failed after pushing)`);
      this.unconfirmed = undefined;
    }
    return this.known - before;
  }

  private async query(after: number, limit: number): Promise<TurnEvent[] | null> {
    const { client, turnId } = this;
    try {
      return await client.connection.withDeadline(Date.now() + queryDeadlineMs, () => client.workflow.getHandle(turnId).query(turnEventsQuery, after, limit));
    } catch {
      return null;
    }
  }

  /**
   * When Temporal has closed the turn: delivers what is left of its log, then a synthesized terminal event if the log
   * has none (or cannot be read after `readFailed`). True when the feed is over.
   */
  private async endIfClosed(readFailed: boolean): Promise<boolean> {
    const { client, turnId } = this;
    let description;
    try {
      description = await client.workflow.getHandle(turnId).describe();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) return false;
      this.synthesize({ type: 'error', code: 'not_found', message: `Turn ${turnId} no longer exists.` }, new Date());
      return true;
    }
    const status = description.status.name;
    if (status === 'RUNNING' && !readFailed) this.checkHistory(description);
    if (status === 'RUNNING' || this.stopped) return this.stopped;
    const read = await this.readLog();
    this.markCaughtUp();
    if (this.ended || this.stopped) return true;
    if (status === 'COMPLETED' || status === 'FAILED') {
      // A completed turn, or one that ended `failed` (its workflow Failed), always logs its ending; when the log cannot
      // be read (no worker to replay it), the result can (viewOf reads any other failure as workflow_failed).
      if (read === null && !readFailed) return false;
      const view = await viewOf(client, turnId, description).catch(() => null);
      if (!view) return false;
      this.synthesize(terminalEventOf(view), description.closeTime ?? new Date());
      return true;
    }
    this.synthesize(terminalEventOf(endingOfClosedWorkflow(status)), description.closeTime ?? new Date());
    return true;
  }

  private synthesize(body: ReturnType<typeof terminalEventOf>, at: Date): void {
    this.markCaughtUp();
    this.append({ ...body, offset: this.known + 1, at: at.toISOString(), synthesized: true } as SynthesizedEvent);
    this.deliver();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.rouse(), Math.max(0, ms));
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** Two events of one offset written by the same workflow task (a push and the log's copy) have the same JSON. */
function sameEvent(a: FeedEvent, b: FeedEvent): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
