/**
 * Which feeds read the log after the live channel's subscription was restored (api/streams/turn-feeds.ts), at most
 * `limit` at once: each such read is a `turnEvents` query, a workflow task on the worker, and a reconnect tells every
 * open feed at once. A second queue of turn-feeds.ts bounds the catch-up reads of new feeds the same way. Feeds are named by turn id. A feed queued or reading is not queued twice; one told again while
 * its read is in flight reads once more after it (that read may have been answered before the subscription held).
 */
export class RereadQueue {
  private readonly queued: string[] = [];
  private readonly reading = new Set<string>();
  /** Reading feeds told again meanwhile: queued again when their read ends. */
  private readonly again = new Set<string>();

  constructor(private readonly limit: number) {}

  /** The feed of `turnId` should read: queues it unless it is queued already. */
  add(turnId: string): void {
    if (this.reading.has(turnId)) this.again.add(turnId);
    else if (!this.queued.includes(turnId)) this.queued.push(turnId);
  }

  /** The feed closed: it reads nothing more (a read in flight still holds its place until `done`). */
  drop(turnId: string): void {
    const at = this.queued.indexOf(turnId);
    if (at >= 0) this.queued.splice(at, 1);
    this.again.delete(turnId);
  }

  /** The read of `turnId` ended (or its feed stopped). */
  done(turnId: string): void {
    if (!this.reading.delete(turnId)) return;
    if (this.again.delete(turnId)) this.queued.push(turnId);
  }

  /** The feeds to start reading now, oldest first, counted as reading until `done`. */
  start(): string[] {
    const started = this.queued.splice(0, Math.max(0, this.limit - this.reading.size));
    for (const turnId of started) this.reading.add(turnId);
    return started;
  }

  /** Feeds waiting for a place, and feeds reading. */
  get sizes(): { queued: number; reading: number } {
    return { queued: this.queued.length, reading: this.reading.size };
  }
}
