import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { isTerminalEvent, type TurnEvent } from '../../core/events';
import type { DeltaEvent, LiveChannel, LiveEvent } from '../../lib/live';
import { turnEventsQuery } from '../../workflows/definitions';
import { endingOfClosedWorkflow, terminalEventOf } from '../turn-closure';
import { viewOf } from '../turn-view';

/** A live event as streams carry it; `message.reset` says a retried model call starts its text again. */
export type LiveItem = DeltaEvent | { type: 'message.reset'; call: string; attempt: number };
/** A terminal event the API made up for a turn Temporal closed without one (terminated, timed out, deleted). */
export type SynthesizedEvent = TurnEvent & { synthesized: true };
export type StreamItem = TurnEvent | SynthesizedEvent | LiveItem;

export interface FollowTurnOptions {
  client: Client;
  live: LiveChannel;
  turnId: string;
  /** Deliver durable events with an offset above this. */
  after: number;
  send: (item: StreamItem) => void;
  signal: AbortSignal;
  minPollMs?: number;
  maxPollMs?: number;
}

const queryDeadlineMs = 5_000;
/** How often an idle stream checks whether Temporal closed the turn without a terminal event. */
const describeEveryMs = 3_000;
const maxBufferedLive = 2_000;

/**
 * Streams one turn: its durable events from the turn's log (polled through the `turnEvents` query, faster while
 * things happen, slower while idle) merged with live deltas from the live channel. Ends after the terminal event,
 * synthesizing one from the execution status when Temporal closed the turn without it.
 */
export class TurnFollower {
  private after: number;
  private delay: number;
  private readonly minPollMs: number;
  private readonly maxPollMs: number;
  private wake: { timer: NodeJS.Timeout; due: number; resolve: () => void } | undefined;
  private catchingUp = true;
  /** The highest log offset a worker announced; a hint that lands while a query is in flight is not lost. */
  private announced = 0;
  private ended = false;
  private readonly buffered: DeltaEvent[] = [];
  private readonly attempts = new Map<string, number>();

  constructor(private readonly options: FollowTurnOptions) {
    this.after = options.after;
    // Workers announce every new log entry on the live channel (`log.appended`), so polling is only the fallback.
    this.minPollMs = options.minPollMs ?? 500;
    this.maxPollMs = options.maxPollMs ?? 2_000;
    this.delay = this.minPollMs;
  }

  /** Poll now, e.g. right after this client answered a checkpoint. */
  poke(): void {
    this.delay = this.minPollMs;
    this.reschedule(0);
  }

  /** Resolves with `ended` after the terminal event, or `aborted` when the signal fires first. */
  async run(): Promise<'ended' | 'aborted'> {
    const { signal } = this.options;
    const unsubscribe = this.options.live.subscribe(this.options.turnId, (event) => this.onLive(event));
    const onAbort = () => this.reschedule(0);
    signal.addEventListener('abort', onAbort);
    let lastDescribe = Date.now();
    try {
      while (!signal.aborted) {
        const events = await this.queryEvents();
        if (signal.aborted) break;
        if (events && this.deliver(events)) return 'ended';
        if (events && this.catchingUp) this.flushBuffered();
        const announcedMore = this.announced > this.after;
        this.delay = (events && events.length > 0) || announcedMore ? this.minPollMs : Math.min(this.delay * 1.5, this.maxPollMs);
        // Announced while that query was in flight: read again at once, as long as each read makes progress.
        if (announcedMore && events && events.length > 0) continue;
        if (!events || (events.length === 0 && Date.now() - lastDescribe >= describeEveryMs)) {
          lastDescribe = Date.now();
          if (await this.endIfClosed(events === null)) return 'ended';
        }
        await this.sleep(this.delay);
      }
      return 'aborted';
    } finally {
      this.ended = true;
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
      this.reschedule(0);
    }
  }

  /** Sends events in order; true once the terminal one went out. */
  private deliver(events: TurnEvent[]): boolean {
    for (const event of events) {
      if (event.offset <= this.after) continue;
      this.after = event.offset;
      this.options.send(event);
      if (isTerminalEvent(event)) {
        this.ended = true;
        return true;
      }
    }
    return false;
  }

  private onLive(event: LiveEvent): void {
    if (this.ended) return;
    if (event.type === 'log.appended') {
      this.announced = Math.max(this.announced, event.offset);
      if (event.offset > this.after) this.reschedule(0);
      return;
    }
    if (this.catchingUp) {
      if (this.buffered.length < maxBufferedLive) this.buffered.push(event);
      return;
    }
    this.sendLive(event);
    // Something is happening: the durable events that follow should not wait for a slow poll.
    this.delay = this.minPollMs;
    this.reschedule(this.minPollMs);
  }

  private flushBuffered(): void {
    this.catchingUp = false;
    for (const event of this.buffered.splice(0)) this.sendLive(event);
  }

  private sendLive(event: DeltaEvent): void {
    if (event.call !== undefined && event.attempt !== undefined) {
      const seen = this.attempts.get(event.call);
      if (seen !== undefined && event.attempt > seen) this.options.send({ type: 'message.reset', call: event.call, attempt: event.attempt });
      if (seen === undefined || event.attempt > seen) this.attempts.set(event.call, event.attempt);
      if (seen !== undefined && event.attempt < seen) return;
    }
    this.options.send(event);
  }

  private async queryEvents(): Promise<TurnEvent[] | null> {
    const { client, turnId } = this.options;
    try {
      return await client.connection.withDeadline(Date.now() + queryDeadlineMs, () =>
        client.workflow.getHandle(turnId).query(turnEventsQuery, this.after),
      );
    } catch {
      return null;
    }
  }

  /**
   * When Temporal has closed the turn: delivers what is left of its log, then a synthesized terminal event if the log
   * has none (or cannot be read after `queryFailed`). True when the stream is over.
   */
  private async endIfClosed(queryFailed: boolean): Promise<boolean> {
    const { client, turnId } = this.options;
    let description;
    try {
      description = await client.workflow.getHandle(turnId).describe();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) return false;
      this.synthesize({ type: 'error', code: 'not_found', message: `Turn ${turnId} no longer exists.` }, new Date());
      return true;
    }
    const status = description.status.name;
    if (status === 'RUNNING') return false;
    const rest = await this.queryEvents();
    if (rest && this.deliver(rest)) return true;
    if (status === 'COMPLETED' || status === 'FAILED') {
      // A completed turn, or one that ended `failed` (its workflow Failed), always logs its ending; when the log cannot
      // be read (no worker to replay it), the result can (viewOf reads any other failure as workflow_failed).
      if (!rest && !queryFailed) return false;
      const view = await viewOf(client, turnId, description).catch(() => null);
      if (!view) return false;
      this.synthesize(terminalEventOf(view), description.closeTime ?? new Date());
      return true;
    }
    this.synthesize(terminalEventOf(endingOfClosedWorkflow(status)), description.closeTime ?? new Date());
    return true;
  }

  private synthesize(body: ReturnType<typeof terminalEventOf>, at: Date): void {
    this.ended = true;
    this.after += 1;
    this.options.send({ ...body, offset: this.after, at: at.toISOString(), synthesized: true } as SynthesizedEvent);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const due = Date.now() + ms;
      this.wake = { timer: setTimeout(() => this.reschedule(0), ms), due, resolve };
    });
  }

  /** Brings the current sleep's end forward to at most `ms` from now. */
  private reschedule(ms: number): void {
    const wake = this.wake;
    if (!wake) return;
    if (ms <= 0) {
      clearTimeout(wake.timer);
      this.wake = undefined;
      wake.resolve();
      return;
    }
    if (wake.due <= Date.now() + ms) return;
    clearTimeout(wake.timer);
    wake.due = Date.now() + ms;
    wake.timer = setTimeout(() => this.reschedule(0), ms);
  }
}
