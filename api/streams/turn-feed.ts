import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import type { TerminalEvent, TurnEvent } from '../../core/events';
import { FeedLog, type Acceptance } from '../../core/feed-log';
import { FeedSchedule } from '../../core/feed-schedule';
import { HistoryWatch } from '../../core/history-watch';
import { readRetryMs } from '../../core/read-backoff';
import type { LiveChannel, LiveEvent } from '../../lib/live';
import {
  awaitClosure,
  closedTurnEnding,
  describedStatus,
  describeTurn,
  goneEnding,
  historyLengthOf,
} from './feed-closure';
import type { TurnFeedSettings } from './feed-settings';
import { FeedWatchers, type FeedWatcher } from './feed-watchers';
import { readLogPages } from './log-pages';

/**
 * A turn's events for every watcher in this process (one per turn: turn-feeds.ts). The worker pushes each event on the
 * live channel as the workflow writes it, before Temporal has recorded the task; the feed keeps the log from offset 1
 * (core/feed-log.ts says what it takes of a push, what it holds, and when a pushed ending waits). Pushes may repeat, go
 * missing (a gap makes the feed read the log from what it has, in pages) or never become durable, so a pushed terminal
 * event ends nothing until Temporal shows the workflow closed, or a read returns it. Older workers push only a
 * `log.appended` hint, which also makes it read. When else it reads and describes is core/feed-schedule.ts; closure is
 * noticed with DescribeWorkflowExecution, which the server answers without the worker (feed-closure.ts).
 */
export class TurnFeed {
  private readonly log = new FeedLog();
  private readonly watchers = new FeedWatchers();
  private readonly schedule: FeedSchedule;
  private readonly unsubscribe: () => void;
  private caughtUp = false;
  private stopped = false;
  private readWanted = true;
  /** Events pushed so far (`FeedHandle.mark`). */
  pushes = 0;
  /** The highest offset a `log.appended` hint named. */
  private hinted = 0;
  /** The feed's copy diverged from a push, or its subscription was restored, while a read was in flight: read again. */
  private rereadWanted = false;
  private readonly history = new HistoryWatch();
  /** The history length of the describe that asked for the read wanted now, if one did. */
  private describedForRead: number | undefined;
  private wake: (() => void) | undefined;
  /** Told by `missedPushes`, waiting for the next read to end. */
  private readWaiters: Array<() => void> = [];
  /** Reads failed in a row; after one, no read before `retryAt` (core/read-backoff.ts), describes meanwhile. */
  private readFailures = 0;
  private retryAt = 0;
  private lastRetryDescribe = 0;

  constructor(
    private readonly client: Client,
    private readonly live: LiveChannel,
    private readonly turnId: string,
    private readonly settings: TurnFeedSettings,
    private readonly warn: (line: string) => void,
    private readonly onStop: () => void,
    /**
     * Waits for a place among the process's catch-up reads (turn-feeds.ts); settles at once when the feed stops while it
     * waits. The read calls what it settles with when it ends.
     */
    private readonly catchUpSlot: () => Promise<() => void> = () => Promise.resolve(() => undefined),
  ) {
    this.schedule = new FeedSchedule(settings, Date.now());
    this.unsubscribe = live.subscribe(turnId, (event) => this.onLive(event));
    // A state the worker published for this turn shows its pushes reach this process, before any event is pushed.
    live.latestState(turnId).then(
      (state) => state && this.schedule.pushesArrive(Date.now()),
      () => undefined,
    );
    void this.run();
  }

  add(watcher: FeedWatcher, after: number): void {
    this.watchers.add(watcher, after);
    if (!this.caughtUp) return;
    this.deliver();
    if (this.watchers.has(watcher)) watcher.onCaughtUp();
  }

  remove(watcher: FeedWatcher): void {
    if (!this.watchers.remove(watcher) || this.watchers.size > 0) return;
    this.stop();
  }

  /**
   * Pushes may have been lost (the channel's subscription was restored after its connection dropped): read the log. A
   * read in flight does not do: it may have been answered before the subscription held, so another follows it.
   * Settles when a read that began after the call has ended (or the feed stopped): turn-feeds.ts bounds how many run.
   */
  missedPushes(): Promise<void> {
    if (this.stopped || this.log.ended) return Promise.resolve();
    this.rereadWanted = true;
    const read = new Promise<void>((resolve) => this.readWaiters.push(resolve));
    this.wantRead();
    return read;
  }

  poke(mark?: number): void {
    if (mark !== undefined && this.pushes > mark) return;
    this.schedule.poke(Date.now());
    this.rouse();
  }

  private onLive(event: LiveEvent): void {
    if (this.log.ended) return;
    this.schedule.heard(Date.now());
    if (event.type === 'log.event') {
      this.pushes += 1;
      this.history.pushed();
      this.schedule.pushesArrive(Date.now());
      this.accept(event.event, false);
      this.deliver();
    } else if (event.type === 'log.appended') {
      this.hinted = Math.max(this.hinted, event.offset);
      if (event.offset > this.log.known) this.wantRead();
    } else {
      this.watchers.delta(event);
    }
  }

  /** Takes an event into the feed's log and does what that asks (core/feed-log.ts). */
  private accept(event: TurnEvent, durable: boolean): void {
    this.act(this.log.accept(event, durable));
  }

  private act(verdict: Acceptance): void {
    for (const warning of verdict.warnings) this.warn(`turn ${this.turnId}: ${warning}`);
    if (verdict.reread) this.rereadWanted = true;
    if (verdict.read) this.wantRead();
    if (verdict.pending) this.rouse();
  }

  /** Sends every watcher what it has not had yet; once the turn ended, they end. */
  private deliver(): void {
    this.watchers.deliver(this.log);
    if (this.log.ended) this.stop();
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
    this.readEnded(this.readWaiters);
  }

  private readEnded(waiters: Array<() => void>): void {
    if (waiters === this.readWaiters) this.readWaiters = [];
    for (const resolve of waiters) resolve();
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
      if (this.readDue()) {
        if (await this.readStep()) return;
        continue;
      }
      const pending = this.log.pending;
      if (pending) {
        if (await this.confirmEnding(pending)) return;
        continue;
      }
      if (this.readWanted) {
        if (await this.awaitRetry()) return;
        continue;
      }
      const step = this.schedule.next(Date.now());
      if (step.kind === 'read') this.readWanted = true;
      else if (step.kind === 'describe') {
        if (await this.endIfClosed(false)) return;
      } else await this.sleep(step.ms);
    }
  }

  /** A read is wanted and no failed read holds it off. */
  private readDue(): boolean {
    return this.readWanted && Date.now() >= this.retryAt;
  }

  /**
   * Waits for the next try after failed reads; every `describeEveryMs` meanwhile, whether the turn closed (the server
   * answers describes without the worker), so a closed turn's feed ends without waiting out the pause. True when the
   * feed is over.
   */
  private async awaitRetry(): Promise<boolean> {
    const now = Date.now();
    const describeAt = this.lastRetryDescribe + this.settings.describeEveryMs;
    if (now < describeAt) {
      await this.sleep(Math.min(this.retryAt, describeAt) - now);
      return false;
    }
    this.lastRetryDescribe = now;
    return this.endIfClosed(true);
  }

  /**
   * A place for a read of a feed that has not caught up yet. While it waits (behind others' reads, each up to a query's
   * deadline), the turn is described every `describeEveryMs`, as during a pause after a failed read, so a turn that
   * closes ends the feed (`over`) without waiting for the place; the place, if it comes later, is given back.
   */
  private async catchUpPlace(): Promise<{ release: (() => void) | undefined; over: boolean }> {
    const place = this.catchUpSlot();
    let release: (() => void) | undefined;
    void place.then((given) => {
      release = given;
      this.rouse();
    });
    const giveBack = () => void place.then((given) => given());
    let describeAt = Date.now() + this.settings.describeEveryMs;
    for (;;) {
      if (release) return { release, over: false };
      if (this.stopped) {
        giveBack();
        return { release: undefined, over: true };
      }
      const now = Date.now();
      if (now < describeAt) {
        await this.sleep(describeAt - now);
        continue;
      }
      describeAt = now + this.settings.describeEveryMs;
      if (await this.endIfClosed(false)) {
        giveBack();
        return { release: undefined, over: true };
      }
    }
  }

  /**
   * The read wanted now; after a failed one, whether the turn closed, then a pause that grows with the failures in a
   * row, up to `maxRetryMs` (core/read-backoff.ts). True when the feed is over.
   */
  private async readStep(): Promise<boolean> {
    // Until the feed caught up, each read waits for a place: feeds opened together do not all query the worker at once.
    const place = this.caughtUp ? { release: undefined, over: false } : await this.catchUpPlace();
    const { release } = place;
    if (place.over || this.stopped) {
      release?.();
      return true;
    }
    this.readWanted = false;
    this.rereadWanted = false;
    const waiters = this.readWaiters;
    this.readWaiters = [];
    let described: number | undefined;
    let read: number | null;
    try {
      described = await this.describedBeforeRead();
      this.history.readStarts();
      read = await this.readLog();
    } finally {
      release?.();
    }
    this.history.readDone(read === null ? undefined : described);
    this.readEnded(waiters);
    if (read === null) {
      if (this.stopped || (await this.endIfClosed(true))) return true;
      this.readWanted = true;
      this.readFailures += 1;
      this.lastRetryDescribe = Date.now();
      this.retryAt = this.lastRetryDescribe + readRetryMs(this.readFailures, this.settings, Math.random());
      return false;
    }
    this.readFailures = 0;
    this.retryAt = 0;
    // Pushes held or hinted while the read was in flight need another read only if the read did not cover them.
    this.readWanted = this.rereadWanted || this.log.holdsAhead || this.hinted > this.log.known;
    this.markCaughtUp();
    this.schedule.afterRead(read, this.readWanted, Date.now());
    return false;
  }

  /**
   * Delivers the pushed terminal event `pending` once describe shows the workflow closed (the task that wrote it was
   * recorded). While it runs, describes again after a growing pause; after `confirmEndingMs` (or on another push or a
   * read due meanwhile: not while failed reads hold it off) leaves it to a read. True when the feed is over.
   */
  private async confirmEnding(pending: TurnEvent): Promise<boolean> {
    const left = () => this.stopped || this.log.pending !== pending;
    const outcome = await awaitClosure(this.client, this.turnId, {
      windowMs: this.settings.confirmEndingMs,
      sleep: (ms) => this.sleep(ms),
      left,
      interrupted: () => left() || this.readDue(),
    });
    if (outcome === 'left') return this.stopped;
    if (outcome === 'closed') {
      this.log.confirmPending();
      this.deliver();
      return true;
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
    return historyLengthOf(this.client, this.turnId);
  }

  /** A running turn described after silence: reads the log when its history or status shows pushes went missing. */
  private checkHistory(description: WorkflowExecutionDescription): void {
    if (!this.schedule.pushed || this.readWanted) return;
    if (!this.history.shouldRead(description.historyLength, describedStatus(description), this.log.lastStatus()))
      return;
    this.describedForRead = description.historyLength;
    this.readWanted = true;
  }

  private markCaughtUp(): void {
    if (this.caughtUp || this.stopped) return;
    this.caughtUp = true;
    this.watchers.caughtUp();
  }

  /**
   * Reads the log after what the feed has, a page at a time, delivering as it goes: how many new events it found, or
   * null when a read failed.
   */
  private async readLog(): Promise<number | null> {
    const before = this.log.known;
    // A query waits for the workflow task in flight: a pushed ending it does not return was never recorded.
    const pending = this.log.pending;
    const read = await readLogPages(
      this.client,
      this.turnId,
      this.settings.pageSize,
      () => this.log.known,
      (page) => {
        for (const event of page) this.accept(event, true);
        this.deliver();
      },
      () => this.stopped,
    );
    if (!read) return null;
    const dropped = this.stopped ? undefined : this.log.dropUnread(pending);
    if (dropped) this.warn(`turn ${this.turnId}: ${dropped}`);
    return this.log.known - before;
  }

  /**
   * When Temporal has closed the turn: delivers what is left of its log, then a synthesized terminal event if the log
   * has none (or cannot be read after `readFailed`). True when the feed is over.
   */
  private async endIfClosed(readFailed: boolean): Promise<boolean> {
    const description = await describeTurn(this.client, this.turnId);
    if (description === 'gone') {
      this.synthesize(goneEnding(this.turnId), new Date());
      return true;
    }
    if (!description) return false;
    const status = description.status.name;
    if (status === 'RUNNING' && !readFailed) this.checkHistory(description);
    if (status === 'RUNNING' || this.stopped) return this.stopped;
    const read = await this.readLog();
    this.markCaughtUp();
    if (this.log.ended || this.stopped) return true;
    const ending = await closedTurnEnding(this.client, this.turnId, description, read !== null || readFailed);
    if (!ending) return false;
    this.synthesize(ending.body, ending.at);
    return true;
  }

  private synthesize(body: TerminalEvent, at: Date): void {
    this.markCaughtUp();
    this.log.synthesize(body, at);
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
