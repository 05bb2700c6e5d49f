/**
 * Whether a feed of a turn (api/streams/turn-feed.ts) that takes pushes has missed some: the describe the feed makes every
 * few seconds of silence carries the workflow's history length and its SkillflowStatus, which cost the worker nothing.
 * The history length the feed's log is known to cover is the length described before a read that then succeeded, with
 * no push since; history that grew beyond it while nothing was pushed holds events the feed lacks. After pushes that
 * baseline is unknown, so the describe takes a new one, and only a status that differs from the log's last `status`
 * event (a pushed `checkpoint.requested` lost with its `waiting`) makes a read.
 */
export class HistoryWatch {
  private covered: number | undefined;
  private pushedSinceCovered = true;
  private pushedDuringRead = false;
  private statusReadAt = -1;

  /** A `log.event` arrived. */
  pushed(): void {
    this.pushedSinceCovered = true;
    this.pushedDuringRead = true;
  }

  /** A read begins; `described` is the history length a describe just before it saw, when there was one. */
  readStarts(): void {
    this.pushedDuringRead = false;
  }

  /** A read succeeded: the log covers the history `described` before it, unless pushes came meanwhile. */
  readDone(described: number | undefined): void {
    if (described === undefined || this.pushedDuringRead) return;
    this.covered = described;
    this.pushedSinceCovered = false;
  }

  /** After a describe of the running turn: true when the feed should read the log. */
  shouldRead(historyLength: number, describedStatus: string, loggedStatus: string): boolean {
    if (!this.pushedSinceCovered) return this.covered === undefined || historyLength > this.covered;
    if (describedStatus !== loggedStatus && historyLength !== this.statusReadAt) {
      this.statusReadAt = historyLength;
      return true;
    }
    this.covered = historyLength;
    this.pushedSinceCovered = false;
    return false;
  }
}
