import { isTerminalEvent, type TerminalEvent, type TurnEvent } from './events';

/** A terminal event the API made up for a turn Temporal closed without one (terminated, timed out, deleted). */
export type SynthesizedEvent = TurnEvent & { synthesized: true };
export type FeedEvent = TurnEvent | SynthesizedEvent;

/** What taking an event asks of the feed that keeps the log (api/streams/turn-feed.ts). */
export interface Acceptance {
  /** Read the log from what the copy has: a push left a gap, or differed from the copy. */
  read: boolean;
  /** The copy was cut back (a push differed from it): a read in flight does not cover it, another must follow. */
  reread: boolean;
  /** A pushed terminal event now waits for confirmation (`pending`). */
  pending: boolean;
  /** What was dropped and why, for the API's log. */
  warnings: string[];
}

/**
 * A feed's copy of a turn's durable log from offset 1, and the rules for taking events into it. Events come pushed
 * (not durable yet: the workflow task that wrote them may not be recorded) or read from the log (durable). A pushed
 * event is taken when it is the next offset, held when it is further (a gap: read the log), and dropped when it repeats
 * the copy; one that differs from the copy at its offset makes the copy end before it and the log be read again. A
 * pushed terminal event is not taken: it waits as `pending` until Temporal shows the workflow closed (`confirmPending`)
 * or a read of the log returns it; any other event at or beyond its offset shows it was not recorded.
 */
export class FeedLog {
  private readonly events: FeedEvent[] = [];
  private readonly ahead = new Map<number, TurnEvent>();
  private pendingEnding: TurnEvent | undefined;
  private over = false;

  /** The offset the copy reaches. */
  get known(): number {
    return this.events.length;
  }

  /** The copy holds the turn's terminal event: nothing follows it. */
  get ended(): boolean {
    return this.over;
  }

  /** A pushed terminal event at the next offset, waiting for confirmation. */
  get pending(): TurnEvent | undefined {
    return this.pendingEnding;
  }

  /** Pushed events further than the next offset are held (a gap a read should fill). */
  get holdsAhead(): boolean {
    return this.ahead.size > 0;
  }

  /** The events after `offset`, in order. */
  after(offset: number): FeedEvent[] {
    return this.events.slice(offset);
  }

  /** The status the copy last shows (a turn starts running without a `status` event). */
  lastStatus(): string {
    for (let index = this.events.length - 1; index >= 0; index -= 1) {
      const event = this.events[index]!;
      if (event.type === 'status') return (event as { status: string }).status;
    }
    return 'running';
  }

  /** Takes a pushed (`durable` false) or read (`durable` true) event; what the feed should do about it. */
  accept(event: TurnEvent, durable: boolean): Acceptance {
    const verdict: Acceptance = { read: false, reread: false, pending: false, warnings: [] };
    if (this.over) return verdict;
    this.settlePending(event, durable, verdict);
    if (event.offset <= this.known) {
      if (!sameEvent(event, this.events[event.offset - 1]!)) this.diverged(event.offset, verdict);
      return verdict;
    }
    if (event.offset > this.known + 1) {
      this.ahead.set(event.offset, event);
      verdict.read = true;
      return verdict;
    }
    this.take(event, durable, verdict);
    for (
      let next = this.ahead.get(this.known + 1);
      next && !this.over && !this.pendingEnding;
      next = this.ahead.get(this.known + 1)
    )
      this.take(next, false, verdict);
    for (const offset of this.ahead.keys()) if (offset <= this.known) this.ahead.delete(offset);
    return verdict;
  }

  /** Temporal shows the workflow closed: the pending terminal event was recorded and joins the copy. */
  confirmPending(): void {
    const pending = this.pendingEnding;
    if (!pending) return;
    this.pendingEnding = undefined;
    this.append(pending);
  }

  /**
   * After a read of the log that began while `pending` waited: when it still waits, the log did not have it (a query
   * waits for the task in flight, so it returns only what Temporal recorded) and it is dropped. The warning, if so.
   */
  dropUnread(pending: TurnEvent | undefined): string | undefined {
    if (!pending || this.pendingEnding !== pending) return undefined;
    this.pendingEnding = undefined;
    return `the terminal event pushed at offset ${pending.offset} is not in the log (a workflow task that failed after pushing)`;
  }

  /** Ends the copy with a terminal event the turn's log does not have (`SynthesizedEvent`). */
  synthesize(body: TerminalEvent, at: Date): void {
    this.append({ ...body, offset: this.known + 1, at: at.toISOString(), synthesized: true } as SynthesizedEvent);
  }

  /** An event at or beyond a waiting terminal event: the same one read from the log confirms it; any other shows it
   * was not recorded. */
  private settlePending(event: TurnEvent, durable: boolean, verdict: Acceptance): void {
    const pending = this.pendingEnding;
    if (!pending || event.offset < pending.offset) return;
    if (sameEvent(event, pending)) {
      if (durable) this.pendingEnding = undefined;
      return;
    }
    verdict.warnings.push(
      `the terminal event pushed at offset ${pending.offset} was not recorded (a workflow task that failed after pushing)`,
    );
    this.pendingEnding = undefined;
  }

  private take(event: TurnEvent, durable: boolean, verdict: Acceptance): void {
    if (durable || !isTerminalEvent(event)) return this.append(event);
    if (this.pendingEnding && sameEvent(event, this.pendingEnding)) return;
    this.pendingEnding = event;
    verdict.pending = true;
  }

  /**
   * A push at `offset` differs from the event kept there: one of them came from a workflow task Temporal did not record.
   * The copy ends before it and the log is read again; watchers that already had the differing event keep it (their
   * streams resume after it).
   */
  private diverged(offset: number, verdict: Acceptance): void {
    verdict.warnings.push(
      `a pushed event at offset ${offset} differs from the one delivered (a workflow task that failed after pushing); reading the log again from there`,
    );
    this.events.length = offset - 1;
    this.ahead.clear();
    this.pendingEnding = undefined;
    verdict.reread = true;
    verdict.read = true;
  }

  private append(event: FeedEvent): void {
    this.events.push(event);
    if (isTerminalEvent(event)) this.over = true;
  }
}

/** Two events of one offset written by the same workflow task (a push and the log's copy) have the same JSON. */
function sameEvent(a: FeedEvent, b: FeedEvent): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
