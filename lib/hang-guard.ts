import type { OpsLog } from './logging';

/** The service did not answer within the deadline, or has not answered since one call missed it. */
export class NotAnsweringError extends Error {
  override name = 'NotAnsweringError';
}

export interface HangGuardOptions {
  /** The service, for logs and errors: `Redis at 127.0.0.1:6379 (live events)`. */
  what: string;
  /** How long a call may wait for its answer. */
  deadlineMs: number;
  /** Asks the service something it answers at once when it is well (PING, SELECT 1); sent while it is taken for hung. */
  probe: () => Promise<unknown>;
  /** What callers do while it does not answer, for the log: `rate limits let requests through`. */
  meanwhile: string;
  log?: OpsLog;
  /** Pause after a probe that failed (refused rather than hung: a service that is down) before the next. */
  probeRetryMs?: number;
}

/**
 * Calls to one service (a Redis or PostgreSQL connection) with a deadline. A service that hangs (a frozen process, a
 * network that drops packets without a reset) keeps its connection open and answers nothing, so its client neither
 * fails nor reconnects: without a deadline every caller waits for it. Once a call missed the deadline the service is
 * taken for hung, logged once, and every call fails at once with NotAnsweringError (callers fall back) until a probe,
 * sent on the same connection, gets an answer: that is logged at info. Other failures (refused, reset) pass through:
 * they do not make it hung.
 */
export class HangGuard {
  private hungSince: number | undefined;
  private closed = false;
  private pause: NodeJS.Timeout | undefined;
  private wakeFromPause: (() => void) | undefined;
  private readonly probeRetryMs: number;

  constructor(private readonly options: HangGuardOptions) {
    this.probeRetryMs = options.probeRetryMs ?? 250;
  }

  /** Whether the service is taken for hung now. */
  get hung(): boolean {
    return this.hungSince !== undefined;
  }

  async call<T>(command: () => Promise<T>): Promise<T> {
    if (this.hungSince !== undefined) throw this.notAnswering();
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const running = command().finally(() => (settled = true));
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        // After a stalled event loop the timer runs before the answer that came meanwhile is read: let I/O go first.
        setImmediate(() => {
          if (settled) return;
          this.hang();
          reject(this.notAnswering());
        });
      }, this.options.deadlineMs);
    });
    try {
      return await Promise.race([running, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops probing; calls after it still get their deadline. */
  close(): void {
    this.closed = true;
    clearTimeout(this.pause);
    this.wakeFromPause?.();
  }

  private notAnswering(): NotAnsweringError {
    return new NotAnsweringError(
      `${this.options.what} is not answering (no reply within ${this.options.deadlineMs} ms)`,
    );
  }

  private hang(): void {
    if (this.hungSince !== undefined || this.closed) return;
    this.hungSince = Date.now();
    this.options.log?.(
      `${this.options.what} did not answer within ${this.options.deadlineMs} ms (hung?): ${this.options.meanwhile} until it answers`,
    );
    void this.probeUntilAnswered();
  }

  private async probeUntilAnswered(): Promise<void> {
    while (!this.closed) {
      const answered = await this.options.probe().then(
        () => true,
        () => false,
      );
      if (this.closed) return;
      if (answered) {
        const seconds = ((Date.now() - this.hungSince!) / 1000).toFixed(1);
        this.hungSince = undefined;
        this.options.log?.(`${this.options.what} answers again (after ${seconds} s without an answer)`, 'info');
        return;
      }
      await new Promise<void>((resolve) => {
        this.wakeFromPause = resolve;
        this.pause = setTimeout(resolve, this.probeRetryMs);
        this.pause.unref();
      });
    }
  }
}
